/**
 * trimMpdWindow against a DOM model (xmldom, tests only): the kept segments of every timeline are
 * a contiguous run of the original's, the reference timeline keeps exactly what HLS's rule keeps,
 * and the output is well-formed with the same elements minus dropped S (and PatchLocation).
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { trimMpdWindow } from '../../lib/dash/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS) || 300;

function parse(xml: string): Element {
  const doc = new DOMParser({
    onError: (level, msg) => {
      if (level !== 'warning') throw new Error(msg);
    },
  }).parseFromString(xml, 'text/xml');
  return doc.documentElement!;
}

function kids(e: Element, name?: string): Element[] {
  const out: Element[] = [];
  for (let c = e.firstChild; c; c = c.nextSibling)
    if (c.nodeType === 1 && (!name || (c as Element).localName === name)) out.push(c as Element);
  return out;
}

function all(e: Element, out: Element[] = []): Element[] {
  for (const c of kids(e)) {
    out.push(c);
    all(c, out);
  }
  return out;
}

interface Seg {
  t: number;
  d: number;
  number: number;
}
interface Tl {
  timescale: number;
  pto: number;
  segs: Seg[];
  openEnded: boolean;
}

/** The last Period's SegmentTemplate timelines, expanded (§5.3.9.6). */
function timelines(root: Element): Tl[] {
  const periods = kids(root, 'Period');
  const last = periods[periods.length - 1];
  if (!last) return [];
  const out: Tl[] = [];
  for (const st of all(last).filter(
    (e) => e.localName === 'SegmentTimeline' && (e.parentNode as Element).localName === 'SegmentTemplate',
  )) {
    const tpls: Element[] = [];
    for (let p = st.parentNode as Element | null; p && p.localName !== 'MPD'; p = p.parentNode as Element | null) {
      if (p.localName === 'SegmentTemplate') tpls.push(p);
      else {
        const own = kids(p, 'SegmentTemplate')[0];
        if (own && !tpls.includes(own)) tpls.push(own);
      }
    }
    const attr = (name: string, dflt: number) => {
      for (const x of tpls) if (x.hasAttribute(name)) return Number(x.getAttribute(name));
      return dflt;
    };
    let number = attr('startNumber', 1);
    const ss = kids(st, 'S');
    const segs: Seg[] = [];
    let time = 0;
    let openEnded = false;
    ss.forEach((s, i) => {
      if (s.hasAttribute('t')) time = Number(s.getAttribute('t'));
      const d = Number(s.getAttribute('d'));
      let r = Number(s.getAttribute('r') ?? 0);
      if (r === -1) {
        const next = ss[i + 1];
        if (next?.hasAttribute('t')) r = Math.ceil((Number(next.getAttribute('t')) - time) / d) - 1;
        else {
          openEnded = true;
          r = 0;
        }
      }
      for (let k = 0; k <= r; k++) {
        segs.push({ t: time, d, number: number++ });
        time += d;
      }
    });
    out.push({ timescale: attr('timescale', 1), pto: attr('presentationTimeOffset', 0), segs, openEnded });
  }
  return out;
}

/** HLS's rule (lib/hls/trim.ts), written out per segment: the kept range [start, remaining). */
function hlsRule(durs: number[], window: number, delay: number): [number, number] {
  const n = durs.length;
  const min = 3 * Math.max(...durs);
  const sum = (a: number, b: number) => durs.slice(a, b).reduce((x, y) => x + y, 0);
  let dl = Math.min(delay, n - 1);
  while (dl > 0 && sum(0, n - dl) < min) dl--;
  const rem = n - dl;
  let st = 0;
  if (window > 0 && window < rem) {
    st = rem - window;
    while (st > 0 && sum(st, rem) < min) st--;
  }
  return [st, rem];
}

const names = (root: Element) =>
  all(root)
    .map((e) => e.localName)
    .filter((n) => n !== 'S' && n !== 'PatchLocation');

/** Checks one trim; returns the number of failures (so loops report without flooding). */
function check(t: Test, src: string, window: number, delay: number, label: string): number {
  const out = trimMpdWindow(src, { windowSegments: window, delaySegments: delay }).text;
  let fails = 0;
  const fail = (msg: string) => {
    fails++;
    t.fail(`${label} w=${window} d=${delay}: ${msg}`);
  };
  let before: Element;
  let after: Element;
  try {
    before = parse(src);
    after = parse(out);
  } catch (e) {
    fail(`not well-formed: ${(e as Error).message}`);
    return fails;
  }
  if (names(before).join() !== names(after).join()) fail('structure changed');
  const a = timelines(before);
  const b = timelines(after);
  if (a.length !== b.length) return fails + (fail('timelines lost'), 0);
  const usable = a.map((tl, i) => ({ tl, i })).filter(({ tl }) => !tl.openEnded && tl.segs.length);
  if (!usable.length) return fails;
  const ref = usable.reduce((x, y) =>
    Math.max(...y.tl.segs.map((s) => s.d)) / y.tl.timescale > Math.max(...x.tl.segs.map((s) => s.d)) / x.tl.timescale
      ? y
      : x,
  );
  for (const { tl, i } of usable) {
    const kept = b[i]!.segs;
    const first = tl.segs.findIndex((s) => s.t === kept[0]?.t);
    if (
      first < 0 ||
      kept.some(
        (s, k) =>
          tl.segs[first + k]?.t !== s.t || tl.segs[first + k]?.number !== s.number || tl.segs[first + k]?.d !== s.d,
      )
    ) {
      fail(`timeline ${i}: kept segments are not a contiguous run of the original`);
      continue;
    }
    if (tl === ref.tl) {
      const [st, rem] = hlsRule(
        tl.segs.map((s) => s.d),
        window,
        delay,
      );
      if (first !== st || kept.length !== rem - st)
        fail(`reference timeline ${i}: kept [${first}, ${first + kept.length}), HLS rule [${st}, ${rem})`);
    }
  }
  return fails;
}

const combos = [
  [0, 0],
  [0, 1],
  [0, 3],
  [1, 0],
  [3, 1],
  [5, 2],
  [10, 2],
  [10, 0],
  [29, 1],
  [100, 5],
] as const;

function mpd(periods: string, attrs = ''): string {
  return `<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="1970-01-01T00:00:00Z" timeShiftBufferDepth="PT5M"${attrs}>\n${periods}\n</MPD>\n`;
}

function as(id: string, timescale: number, ss: string, tplAttrs = ' media="$Number$.m4s" startNumber="10"'): string {
  return `  <AdaptationSet id="${id}">
    <SegmentTemplate timescale="${timescale}"${tplAttrs}>
      <SegmentTimeline>
${ss}
      </SegmentTimeline>
    </SegmentTemplate>
    <Representation id="r${id}" bandwidth="1"/>
  </AdaptationSet>`;
}

const period = (body: string, id = 'p1') => ` <Period id="${id}" start="PT0S">\n${body}\n </Period>`;

t.test('a run is split: t and r rewritten, startNumber advanced, timeShiftBufferDepth lowered', async (t) => {
  const src = mpd(period(as('v', 50, '        <S t="1000" d="100" r="9"/>')));
  const out = trimMpdWindow(src, { windowSegments: 4, delaySegments: 2 }).text;
  t.match(out, /<S t="1400" d="100" r="3"\/>/);
  t.match(out, /startNumber="14"/);
  t.match(out, /timeShiftBufferDepth="PT12S"/, '4 kept + 2 delayed segments of 2 s, measured from the untrimmed end');
  t.equal(check(t, src, 4, 2, 'run'), 0);
});

t.test('S elements without r, $Time$, no startNumber: head and tail S removed with their whitespace', async (t) => {
  const ss = Array.from({ length: 8 }, (_, i) => `        <S t="${i * 4}" d="4"/>`).join('\n');
  const src = mpd(period(as('v', 1, ss, ' media="$Time$.m4s"')));
  const out = trimMpdWindow(src, { windowSegments: 3, delaySegments: 1 }).text;
  t.match(
    out,
    /<SegmentTimeline>\n {8}<S t="16" d="4"\/>\n {8}<S t="20" d="4"\/>\n {8}<S t="24" d="4"\/>\n {6}<\/SegmentTimeline>/,
  );
  t.match(out, /startNumber="5"/, 'numbering kept consistent even for $Time$');
  for (const [w, d] of combos) check(t, src, w, d, 'no-r');
});

t.test('AdaptationSets with different timescales and durations keep the same time span', async (t) => {
  // Video: 4 s segments at 90 kHz; audio: 2 s at 48 kHz. The window counts video (longest) segments.
  const src = mpd(
    period(
      [
        as('v', 90000, '        <S t="900000" d="360000" r="14"/>'),
        as('a', 48000, '        <S t="480000" d="96000" r="29"/>'),
      ].join('\n'),
    ),
  );
  const out = trimMpdWindow(src, { windowSegments: 5, delaySegments: 1 }).text;
  const [v, a] = timelines(parse(out));
  t.equal(v!.segs.length, 5);
  t.equal(a!.segs.length, 10);
  t.equal(v!.segs[0]!.t / 90000, a!.segs[0]!.t / 48000, 'same start');
  const end = (tl: Tl) => (tl.segs.at(-1)!.t + tl.segs.at(-1)!.d) / tl.timescale;
  t.equal(end(v!), end(a!), 'same live edge');
  for (const [w, d] of combos) check(t, src, w, d, 'multi-AS');
});

t.test('static MPDs, window 0 / delay 0 and non-MPDs are returned as they are', async (t) => {
  const dyn = mpd(period(as('v', 1, '<S t="0" d="2" r="20"/>')));
  const stat = dyn.replace('type="dynamic"', 'type="static"');
  t.equal(trimMpdWindow(stat, { windowSegments: 3, delaySegments: 2 }).text, stat);
  t.equal(
    trimMpdWindow(dyn.replace(' type="dynamic"', ''), { windowSegments: 3, delaySegments: 2 }).text,
    dyn.replace(' type="dynamic"', ''),
    'type defaults to static',
  );
  t.equal(trimMpdWindow(dyn, { windowSegments: 0, delaySegments: 0 }).text, dyn);
  t.same(trimMpdWindow('#EXTM3U\n', { windowSegments: 3, delaySegments: 2 }), { valid: false, text: '#EXTM3U\n' });
});

t.test('window 0 with a delay drops only the tail', async (t) => {
  const src = mpd(period(as('v', 1, '        <S t="100" d="2" r="9"/>')));
  const out = trimMpdWindow(src, { windowSegments: 0, delaySegments: 3 }).text;
  t.match(out, /<S t="100" d="2" r="6"\/>/);
  t.match(out, /startNumber="10"/);
  t.match(out, /timeShiftBufferDepth="PT5M"/);
});

t.test('tiny timelines keep three segments of content', async (t) => {
  const three = mpd(period(as('v', 1, '<S t="0" d="2" r="2"/>')));
  t.equal(trimMpdWindow(three, { windowSegments: 1, delaySegments: 2 }).text, three);
  const four = mpd(period(as('v', 1, '<S t="0" d="2" r="3"/>')));
  t.match(trimMpdWindow(four, { windowSegments: 1, delaySegments: 0 }).text, /<S t="2" d="2" r="2"\/>/);
  t.match(trimMpdWindow(four, { windowSegments: 0, delaySegments: 3 }).text, /<S t="0" d="2" r="2"\/>/);
  // One long segment sets the minimum: 3 × 10 s.
  const long = mpd(period(as('v', 1, '<S t="0" d="10"/><S d="2" r="19"/>')));
  t.match(trimMpdWindow(long, { windowSegments: 2, delaySegments: 0 }).text, /<S t="20" d="2" r="14"\/>/);
});

t.test('r="-1": split up to the next t; open-ended at the end is a wall-clock timeline', async (t) => {
  const mid = mpd(period(as('v', 1, '<S t="0" d="10" r="-1"/><S t="100" d="10" r="1"/>')));
  t.match(
    trimMpdWindow(mid, { windowSegments: 4, delaySegments: 1 }).text,
    /<S t="70" d="10" r="2"\/><S t="100" d="10" r="0"\/>/,
  );
  t.match(
    trimMpdWindow(mid, { windowSegments: 0, delaySegments: 3 }).text,
    /<S t="0" d="10" r="8"\/>\s*<\/SegmentTimeline>/,
    'a kept r=-1 at the new end is made explicit',
  );
  for (const [w, d] of combos) check(t, mid, w, d, 'r=-1 mid');
  const open = mpd(period(as('v', 1, '<S t="0" d="2" r="-1"/>')));
  const out = trimMpdWindow(open, { windowSegments: 10, delaySegments: 2 }).text;
  t.match(out, /<S t="0" d="2" r="-1"\/>/, 'segments untouched');
  t.match(out, /timeShiftBufferDepth="PT24S"/);
  t.match(out, /suggestedPresentationDelay="PT4S"/);
});

t.test('@duration templates: suggestedPresentationDelay grows, timeShiftBufferDepth lowered', async (t) => {
  const src = mpd(
    period(
      '  <AdaptationSet><SegmentTemplate media="$Number$.m4s" duration="4000" timescale="1000" startNumber="1"/><Representation id="v" bandwidth="1"/></AdaptationSet>',
    ),
    ' suggestedPresentationDelay="PT6S"',
  );
  const out = trimMpdWindow(src, { windowSegments: 5, delaySegments: 2 }).text;
  t.match(out, /suggestedPresentationDelay="PT14S"/);
  t.match(out, /timeShiftBufferDepth="PT28S"/);
  t.match(out, /startNumber="1"/, 'segments untouched');
  const list = mpd(
    period(
      '  <AdaptationSet><Representation id="v" bandwidth="1"><SegmentList duration="6"><SegmentURL media="a.m4s"/></SegmentList></Representation></AdaptationSet>',
    ),
  );
  t.match(
    trimMpdWindow(list, { windowSegments: 0, delaySegments: 1 }).text,
    /timeShiftBufferDepth="PT5M" suggestedPresentationDelay="PT6S">/,
  );
});

t.test('other bytes kept: prefixes, comments, explicit </S>, big 10 MHz times exact', async (t) => {
  const src = `<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011" type="dynamic"><!-- c --><mpd:Period><mpd:AdaptationSet>
<mpd:SegmentTemplate timescale="10000000" media="$Time$.mp4"><!-- kept comment --><mpd:SegmentTimeline>
<mpd:S t="17111111111111111" d="20000000" r="9"></mpd:S>
</mpd:SegmentTimeline></mpd:SegmentTemplate></mpd:AdaptationSet></mpd:Period></mpd:MPD>`;
  const out = trimMpdWindow(src, { windowSegments: 3, delaySegments: 1 }).text;
  t.equal(
    out,
    src
      .replace('t="17111111111111111" d="20000000" r="9"', 't="17111111231111111" d="20000000" r="2"')
      .replace('media="$Time$.mp4"', 'media="$Time$.mp4" startNumber="7"')
      .replace('type="dynamic"', 'type="dynamic" timeShiftBufferDepth="PT8S" suggestedPresentationDelay="PT8S"'),
  );
});

/**
 * Issue 30.1: where dash.js aims on a live MPD (PlaybackController.computeAndSetLiveDelay,
 * TimelineConverter's DVR window from the wall clock): availabilityStartTime + now, minus the
 * ServiceDescription latency target if any, else @suggestedPresentationDelay. Period start 0, pto 0.
 */
function dashJsStart(mpdText: string, wallClockSec: number): number {
  const target = /<Latency[^>]*\starget="(\d+)"/.exec(mpdText);
  const spd = /suggestedPresentationDelay="PT([\d.]+)S"/.exec(mpdText);
  const delay = target ? Number(target[1]) / 1000 : spd ? Number(spd[1]) : NaN;
  return wallClockSec - delay;
}

t.test(
  'issue 30.1: the removed tail raises suggestedPresentationDelay, so dash.js aims inside the trimmed timeline',
  async (t) => {
    // 2 s segments from 0 to 60 s; the wall clock is at the upstream's live edge (60 s).
    const timeline = '<S t="0" d="2" r="29"/>';
    const withSpd = mpd(period(as('v', 1, timeline)), ' suggestedPresentationDelay="PT6S"');
    const out = trimMpdWindow(withSpd, { windowSegments: 0, delaySegments: 2 }).text;
    t.match(out, /<S t="0" d="2" r="27"\/>/, 'two segments (4 s) removed');
    t.match(out, /suggestedPresentationDelay="PT10S"/, '6 s + the 4 s removed');
    t.equal(dashJsStart(withSpd, 60), 54, 'untrimmed: 6 s behind the edge');
    t.equal(dashJsStart(out, 60), 50, 'trimmed: 6 s behind the trimmed timeline’s end (56 s), not past it');
    const bare = mpd(period(as('v', 1, timeline)));
    const noSpd = trimMpdWindow(bare, { windowSegments: 10, delaySegments: 2 }).text;
    t.match(noSpd, /suggestedPresentationDelay="PT10S"/, 'none upstream: three segments (6 s) + 4 s');
    t.ok(dashJsStart(noSpd, 60) < 56 && dashJsStart(noSpd, 60) >= 56 - 20, 'inside the kept window (36–56 s)');
    // dash.js takes ServiceDescription/Latency@target before @suggestedPresentationDelay: it grows too.
    const sd = withSpd.replace(
      /(<MPD[^>]*>)/,
      '$1<ServiceDescription id="0"><Latency target="3500" min="2000" max="8000"/></ServiceDescription>',
    );
    const sdOut = trimMpdWindow(sd, { windowSegments: 0, delaySegments: 2 }).text;
    t.match(sdOut, /<Latency target="7500" min="6000" max="12000"\/>/, 'latency target, min and max + 4000 ms');
    t.equal(dashJsStart(sdOut, 60), 52.5, '3.5 s behind the trimmed end');
    t.match(sdOut, /availabilityStartTime="[^"]*"/.exec(sd)?.[0] ?? /$/, 'availabilityStartTime unchanged');
    // A delay the upstream MPD cannot give (three segments of content left) changes nothing.
    const three = mpd(period(as('v', 1, '<S t="0" d="2" r="2"/>')), ' suggestedPresentationDelay="PT6S"');
    t.equal(trimMpdWindow(three, { windowSegments: 0, delaySegments: 2 }).text, three);
  },
);

t.test('issue 30.1: a rendering served up to servedForSec late raises the delay by that much more', async (t) => {
  const src = mpd(period(as('v', 1, '<S t="0" d="2" r="29"/>')), ' suggestedPresentationDelay="PT6S"');
  const sd = src.replace(
    /(<MPD[^>]*>)/,
    '$1<ServiceDescription id="0"><Latency target="3500" min="2000" max="8000"/></ServiceDescription>',
  );
  const out = trimMpdWindow(sd, { windowSegments: 0, delaySegments: 2, servedForSec: 1 }).text;
  t.match(out, /suggestedPresentationDelay="PT11S"/, '6 s + the 4 s removed + 1 s served late');
  t.match(out, /<Latency target="8500" min="7000" max="13000"\/>/, 'the latency target, min and max too');
  // The MPD dash.js holds was rendered up to 1 s before: its timeline ends at 55 s, not 56 s.
  t.ok(dashJsStart(out, 60) <= 55 - 3.5, 'dash.js aims the upstream latency behind the end it may hold');
  t.equal(
    trimMpdWindow(src, { windowSegments: 0, delaySegments: 0, servedForSec: 1 }).text,
    src,
    'nothing trimmed: nothing raised (the MPD passes through, spec rule 7)',
  );
  const dur = mpd(
    period(
      '  <AdaptationSet><SegmentTemplate media="$Number$.m4s" duration="2000" timescale="1000" startNumber="1"/><Representation id="v" bandwidth="1"/></AdaptationSet>',
    ),
    ' suggestedPresentationDelay="PT6S"',
  );
  const durOut = trimMpdWindow(dur, { windowSegments: 0, delaySegments: 2, servedForSec: 1 }).text;
  t.match(durOut, /suggestedPresentationDelay="PT11S"/, '@duration form: 6 s + 4 s + 1 s');
});

t.test('multi-Period: only the last Period is trimmed; PatchLocation removed once anything changed', async (t) => {
  const p1 = period(as('v', 1, '        <S t="0" d="2" r="9"/>'), 'a');
  const p2 = period(as('v', 1, '        <S t="0" d="2" r="9"/>'), 'b').replace('start="PT0S"', 'start="PT20S"');
  const src = mpd(`  <PatchLocation ttl="60">https://x/p.mpp</PatchLocation>\n${p1}\n${p2}`);
  const out = trimMpdWindow(src, { windowSegments: 3, delaySegments: 1 }).text;
  t.ok(out.includes(p1), 'first Period byte-identical');
  t.match(out, /<S t="12" d="2" r="2"\/>/);
  t.notMatch(out, /PatchLocation/);
  t.match(trimMpdWindow(src, { windowSegments: 0, delaySegments: 0 }).text, /PatchLocation/);
});

t.test('every dynamic DASH fixture', async (t) => {
  const files = fixtureFiles('dash', ['.mpd']).filter((f) => /<(\w+:)?MPD[^>]*type="dynamic"/.test(fixture(f)));
  t.ok(files.length >= 30, `${files.length} dynamic fixtures read`);
  let timelineFiles = 0;
  let fails = 0;
  for (const f of files) {
    const src = fixture(f);
    t.equal(trimMpdWindow(src, { windowSegments: 0, delaySegments: 0 }).text, src, `${f}: identity`);
    let root: Element;
    try {
      root = parse(src);
    } catch {
      continue; // a fixture that is not well-formed itself proves nothing here
    }
    if (timelines(root).some((tl) => tl.segs.length && !tl.openEnded)) timelineFiles++;
    for (const [w, d] of combos) fails += check(t, src, w, d, f);
  }
  t.ok(timelineFiles >= 9, `${timelineFiles} fixtures with SegmentTimelines`);
  t.equal(fails, 0);
});

const timelineArb = fc.array(
  fc.record({
    gap: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }),
    d: fc.integer({ min: 1, max: 1000 }),
    r: fc.integer({ min: -1, max: 20 }),
  }),
  {
    minLength: 1,
    maxLength: 30,
  },
);

/** S elements from random runs; r=-1 only where the next S states t (otherwise open-ended). */
function sElements(input: { gap: number | undefined; d: number; r: number }[], t0: number): string {
  const runs = input.map((x) => ({ ...x })); // fast-check values are reused while shrinking
  let time = t0;
  const out: string[] = [];
  runs.forEach((x, i) => {
    const next = runs[i + 1];
    const tAttr = i === 0 || x.gap !== undefined ? ` t="${(time += i === 0 ? 0 : (x.gap ?? 0))}"` : '';
    let r = x.r;
    if (r === -1 && next && next.gap === undefined) r = 0;
    const count = r === -1 ? (next ? Math.max(1, (next.gap ?? 0) % 7) : 1) : r + 1;
    if (r === -1 && next) next.gap = 0; // the next S starts where the open run ends
    out.push(`<S${tAttr} d="${x.d}"${r ? ` r="${r}"` : ''}/>`);
    time += count * x.d;
  });
  return out.join('\n');
}

t.test(
  'property: random timelines never throw and keep a contiguous run (the HLS rule on the reference)',
  async (t) => {
    let fails = 0;
    fc.assert(
      fc.property(
        timelineArb,
        timelineArb,
        fc.integer({ min: 1, max: 100000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 10 }),
        fc.boolean(),
        (a, b, ts, w, d, two) => {
          const body = two
            ? [as('v', ts, sElements(a, 1000)), as('a', 1000, sElements(b, 0))].join('\n')
            : as('v', ts, sElements(a, 1000));
          const src = mpd(period(body));
          fails += check(t, src, w, d, 'fuzz');
          return fails === 0;
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
    t.equal(fails, 0);
  },
);

t.test('property: garbage and damaged MPDs never throw', async (t) => {
  const base = fixture('dash/livesim2/patch/testpic_2s_1.mpd');
  fc.assert(
    fc.property(
      fc.string({ maxLength: 300 }),
      fc.integer({ min: 0, max: base.length }),
      fc.integer({ min: 0, max: base.length }),
      fc.string({ maxLength: 20 }),
      (junk, i, j, ins) => {
        for (const s of [junk, `<MPD type="dynamic">${junk}`, base.slice(0, i) + ins + base.slice(j)]) {
          const r = trimMpdWindow(s, { windowSegments: 5, delaySegments: 2 });
          if (typeof r.text !== 'string') return false;
        }
        return true;
      },
    ),
    { numRuns: FUZZ_RUNS },
  );
  t.pass('no throw');
});
