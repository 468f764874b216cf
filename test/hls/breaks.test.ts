import t from 'tap';
import {
  applyBreak,
  applyBreakText,
  joinLines,
  parseMedia,
  rewritePlaylist,
  splitLines,
  textPathSnapshot,
  textPathStats,
  trimLiveWindow,
} from '../../lib/hls/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { livePlaylist, defaultShape, type LiveShape } from '../../lib/sim/live-playlist.js';
import { reparse } from './reparse.js';
import { carriesCues, lateHeaderTag } from './text-path-shapes.js';

const shape: LiveShape = { ...defaultShape, adEvery: 0 };
const rules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge/dai/manifest',
  contentOrigin: 'https://origin.example.org',
  playlistUrl: 'https://dai.example.com/x/v.m3u8',
};
const now = shape.epochMs + 1000 * 6000 + 500; // live edge: seq 1000, window 971..1000
const at = (seq: number) => shape.epochMs + seq * 6000;

/**
 * The breaks the overlap tests place against the pod (segments 977–979): starts from 3 segments
 * before it to 3 after, lengths 1–9 segments, on a segment boundary and mid-segment; so starting
 * before/inside/after the pod, ending before/inside/after it, and covering it whole. 180 windows.
 */
function* breaksAroundPod() {
  for (let startSeq = 974; startSeq <= 983; startSeq++)
    for (let len = 1; len <= 9; len++)
      for (const offsetMs of [0, 2500])
        yield {
          window: { startMs: at(startSeq) + offsetMs, endMs: at(startSeq + len) + offsetMs, durationSec: len * 6 },
          label: `${startSeq}+${len}${offsetMs ? ' (mid-segment)' : ''}`,
        };
}
const media = () => splitLines(rewritePlaylist(livePlaylist('ev', now, shape), rules).text);
const squeezedUri = (u: string) => u.replace('https://origin.example.org/content/', 'https://objects.example.com/sqz/');

t.test('break segments replaced, cue-out / cue-out-cont / cue-in placed', async (t) => {
  const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
  const { lines, notReady, squeezed } = applyBreak(media(), window, squeezedUri);
  t.equal(notReady, 0);
  t.equal(squeezed.length, 5);
  const text = joinLines(lines);
  t.match(
    text,
    /#EXT-X-CUE-OUT:30\n#EXT-X-PROGRAM-DATE-TIME:[^\n]+\n#EXTINF:6\.000,\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_990\.ts\n/,
  );
  t.match(
    text,
    /#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=30\n[^\n]+\n[^\n]+\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_991\.ts\n/,
  );
  t.match(text, /#EXT-X-CUE-IN\n[^\n]+\n[^\n]+\nhttps:\/\/origin\.example\.org\/content\/ev\/seg_995\.ts\n/);
  t.equal(lines.filter((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')).length, 4);
  t.equal(reparse(text).segments.length, 30, 'still 30 segments');
});

t.test('not-ready squeezeback segments leave the content in place', async (t) => {
  const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
  const ready = new Set(['https://origin.example.org/content/ev/seg_990.ts']);
  const { lines, notReady } = applyBreak(media(), window, (u) => (ready.has(u) ? squeezedUri(u) : undefined));
  t.equal(notReady, 4);
  t.ok(lines.includes('https://origin.example.org/content/ev/seg_991.ts'));
  t.ok(lines.includes('https://objects.example.com/sqz/ev/seg_990.ts'));
});

t.test('a break that began before the window head starts with cue-out-cont; an open break has no cue-in', async (t) => {
  const window = { startMs: at(960), endMs: at(2000), durationSec: 600 };
  const { lines } = applyBreak(media(), window, squeezedUri);
  t.notOk(lines.some((l) => l.startsWith('#EXT-X-CUE-OUT:')));
  t.notOk(lines.includes('#EXT-X-CUE-IN'));
  t.equal(
    lines.find((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')),
    '#EXT-X-CUE-OUT-CONT:ElapsedTime=66,Duration=600',
  );
});

t.test('absolute DAI ad segments are never squeezed', async (t) => {
  const withAds = splitLines(
    rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text,
  );
  const window = { startMs: at(971), endMs: at(1001), durationSec: 180 };
  const { lines } = applyBreak(withAds, window, squeezedUri, (u) => u.startsWith('https://origin.example.org/'));
  t.ok(
    lines.some((l) => l.startsWith('https://dai.example.com/linear/pod/')),
    'ads kept',
  );
  t.notOk(
    lines.some((l) => l.startsWith('https://origin.example.org/content/')),
    'every content segment squeezed',
  );
});

t.test('trim then break (the variant rewrite order)', async (t) => {
  const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
  const trimmed = trimLiveWindow(media(), { windowSegments: 10, delaySegments: 2 });
  const { lines } = applyBreak(trimmed, window, squeezedUri);
  const parsed = reparse(joinLines(lines));
  t.equal(parsed.segments.length, 10);
  t.equal(parsed.mediaSequence, 989);
  t.equal(lines.filter((l) => l.startsWith('https://objects.example.com/')).length, 5);
});

t.test(
  'the text form equals the line-based form on every fixture and live shape, for windows at every segment boundary',
  async (t) => {
    const docs: Array<[string, string]> = fixtureFiles('hls', ['.m3u8']).map((f) => [f, fixture(f)]);
    t.equal(docs.length, 254, 'HLS fixtures read');
    docs.push(['live', rewritePlaylist(livePlaylist('ev', now, shape), rules).text]);
    docs.push([
      'live with DAI pods',
      rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text,
    ]);
    docs.push(['no trailing newline', rewritePlaylist(livePlaylist('ev', now, shape), rules).text.trimEnd()]);
    docs.push([
      'header tag among the first segment’s tags',
      '#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00Z\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\na.ts\n#EXTINF:6,\nb.ts\n',
    ]);
    let compared = 0;
    const wrongWay: string[] = [];
    let referenced = 0;
    for (const [name, text] of docs) {
      const lines = splitLines(text);
      // The text form defers to the line-based one only for a header tag after a segment's tag, or cue tags of the source's.
      const toReference = lateHeaderTag(text) || carriesCues(text);
      if (toReference) referenced++;
      const before = textPathSnapshot();
      let calls = 0;
      const times = parseMedia(lines)
        .segments.map((s) => s.pdt)
        .filter((x): x is number => x !== undefined);
      const base = times[0] ?? Date.UTC(2026, 0, 1);
      const starts = [base - 10_000, ...times, ...times.map((x) => x + 1500), base + 3_600_000];
      for (const startMs of starts) {
        for (const len of [6_000, 18_000, 600_000]) {
          const window = { startMs, endMs: startMs + len, durationSec: len / 1000 };
          let i = 0;
          const squeeze = (u: string) => (i++ % 3 === 2 ? undefined : `https://objects.example.com/sqz/${u.length}.ts`);
          const reference = applyBreak(lines, window, squeeze, (u) => !u.includes('/linear/pod/'));
          i = 0;
          const fast = applyBreakText(text, window, squeeze, (u) => !u.includes('/linear/pod/'));
          calls++;
          if (
            fast.text !== joinLines(reference.lines) ||
            fast.notReady !== reference.notReady ||
            fast.squeezed.join() !== reference.squeezed.join()
          ) {
            t.fail(`${name}: differs for window ${startMs}+${len}`);
            return;
          }
          compared++;
        }
      }
      const byText = textPathStats.breakText - before.breakText;
      const byLines = textPathStats.breakReference - before.breakReference;
      if (toReference ? byText !== 0 || byLines !== calls : byLines !== 0 || byText !== calls)
        wrongWay.push(`${name}: ${byText} on the text, ${byLines} by lines`);
    }
    t.ok(compared > 100, `${compared} renderings identical`);
    t.same(
      wrongWay,
      [],
      'on the text, unless a header tag stands after a segment tag or the source has cue tags (then always by lines)',
    );
    // Raw fixtures here: CRLF ones count too (`#EXTM3U\r` is no header tag); on rewritten text it is 65 of 176.
    // Cue tags add 18 fixtures and the live shape with DAI pods (issues 25 and 30: no nested cues).
    t.equal(referenced, 96, 'documents left to the line-based form (77 with a late header tag, 19 more with cue tags)');
  },
);

t.test('a window that starts between segment boundaries still opens with CUE-OUT', async (t) => {
  const window = { startMs: at(990) + 3000, endMs: at(995) + 3000, durationSec: 30 };
  for (const text of [
    joinLines(applyBreak(media(), window, squeezedUri).lines),
    applyBreakText(joinLines(media()), window, squeezedUri).text,
  ]) {
    const lines = splitLines(text);
    const out = lines.indexOf('#EXT-X-CUE-OUT:30');
    t.ok(out > 0, 'CUE-OUT present');
    t.equal(
      lines.slice(out).find((l) => !l.startsWith('#')),
      'https://objects.example.com/sqz/ev/seg_991.ts',
      'on the first segment inside the window',
    );
    t.equal(lines.filter((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')).length, 4);
  }
});

t.test('back-to-back breaks: the first one’s CUE-IN comes before the next one’s CUE-OUT', async (t) => {
  const first = { startMs: at(985), endMs: at(990), durationSec: 30 };
  const second = { startMs: at(990), endMs: at(993), durationSec: 18 };
  const once = applyBreakText(joinLines(media()), first, squeezedUri).text;
  const twice = applyBreakText(once, second, squeezedUri).text;
  t.equal(twice, joinLines(applyBreak(splitLines(once), second, squeezedUri).lines), 'text and line forms agree');
  t.match(twice, /#EXT-X-CUE-IN\n#EXT-X-CUE-OUT:18\n#EXT-X-PROGRAM-DATE-TIME/);
});

t.test(
  'without program date-time: break segments placed by media sequence and accumulated EXTINF durations',
  async (t) => {
    const noPdt = splitLines(rewritePlaylist(livePlaylist('ev', now, { ...shape, pdt: false }), rules).text); // 971..1000
    t.notOk(
      noPdt.some((l) => l.startsWith('#EXT-X-PROGRAM-DATE-TIME')),
      'the shape has no PDT',
    );
    const startMs = Date.UTC(2030, 0, 1); // any time: only the sequence and the durations place the segments
    const window = { startMs, endMs: startMs + 30_000, durationSec: 30, startSeq: 990 };
    t.equal(
      applyBreak(noPdt, { ...window, startSeq: undefined }, squeezedUri).squeezed.length,
      0,
      'without a sequence anchor nothing is placed (as before)',
    );
    const { lines, squeezed } = applyBreak(noPdt, window, squeezedUri);
    t.same(
      squeezed.map((u) => u.slice(-11)),
      ['seg_990.ts', 'seg_991.ts', 'seg_992.ts', 'seg_993.ts', 'seg_994.ts'].map((x) => x.padStart(11, '/')),
      'segments 990..994 squeezed',
    );
    const text = joinLines(lines);
    t.match(
      text,
      /#EXT-X-CUE-OUT:30\n#EXTINF:6\.000,\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_990\.ts\n/,
      'cue-out on the first',
    );
    t.match(
      text,
      /#EXT-X-CUE-OUT-CONT:ElapsedTime=24,Duration=30\n#EXTINF:6\.000,\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_994\.ts\n/,
    );
    t.match(
      text,
      /#EXT-X-CUE-IN\n#EXTINF:6\.000,\nhttps:\/\/origin\.example\.org\/content\/ev\/seg_995\.ts\n/,
      'cue-in after the last',
    );
    t.equal(applyBreakText(joinLines(noPdt), window, squeezedUri).text, text, 'the text form agrees');
    // Identical for the same playlist and break whatever renders it: no clock, no per-instance state.
    t.equal(
      applyBreakText(joinLines(noPdt), window, squeezedUri).text,
      applyBreakText(joinLines(noPdt), { ...window }, squeezedUri).text,
    );
  },
);

t.test(
  'without program date-time: variable durations, a window that slid past the break start, a playlist before it',
  async (t) => {
    const durations = [6, 4, 5, 6, 3, 6, 6, 2];
    const playlist = (first: number) =>
      [
        '#EXTM3U',
        '#EXT-X-TARGETDURATION:6',
        `#EXT-X-MEDIA-SEQUENCE:${first}`,
        ...durations.flatMap((d, i) => [`#EXTINF:${d}.000,`, `https://origin.example.org/c/s${first + i}.ts`]),
        '',
      ].join('\n');
    const w = (startSeq: number, durationSec: number) => ({
      startMs: 1_000_000,
      endMs: 1_000_000 + durationSec * 1000,
      durationSec,
      startSeq,
    });
    const inBreak = (text: string, window: ReturnType<typeof w>) =>
      applyBreakText(text, window, squeezedUri).squeezed.map((u) => u.slice(u.lastIndexOf('/') + 1));
    // From s102: 5 + 6 + 3 = 14 s < 15 s, so s102..s105 (s105 starts at 14 s).
    t.same(
      inBreak(playlist(100), w(102, 15)),
      ['s102.ts', 's103.ts', 's104.ts', 's105.ts'],
      'accumulated durations, not a segment count',
    );
    t.same(
      inBreak(playlist(100), w(102, 14)),
      ['s102.ts', 's103.ts', 's104.ts'],
      'a segment starting at the end is out',
    );
    t.same(inBreak(playlist(100), w(120, 30)), [], 'a break that starts after the playlist');
    // The window starts 2 segments after the break's start: they count at the mean EXTINF (38 / 8 = 4.75 s each), 9.5 s.
    t.same(inBreak(playlist(104), w(102, 20)), ['s104.ts', 's105.ts', 's106.ts'], 'slid past: 9.5, 15.5, 19.5 s');
    const slid = applyBreakText(playlist(104), w(102, 20), squeezedUri).text;
    t.match(
      slid,
      /^#EXT-X-CUE-OUT-CONT:ElapsedTime=9\.5,Duration=20$/m,
      'joined mid-break: CUE-OUT-CONT with the elapsed time',
    );
    t.notOk(slid.includes('#EXT-X-CUE-OUT:'), 'no CUE-OUT when the start is gone');
    for (const first of [95, 100, 102, 104, 110]) {
      for (const startSeq of [90, 99, 100, 101, 102, 105, 107, 108]) {
        for (const len of [1, 6, 11, 15, 60]) {
          const window = w(startSeq, len);
          const text = playlist(first);
          t.equal(
            applyBreakText(text, window, squeezedUri).text,
            joinLines(applyBreak(splitLines(text), window, squeezedUri).lines),
            `text = lines (first ${first}, start ${startSeq}, ${len} s)`,
          );
        }
      }
    }
  },
);

t.test(
  'program date-time wins over the sequence anchor; untimed segments before the first PDT are placed by sequence',
  async (t) => {
    const withPdt = joinLines(media()); // 971..1000, PDT on every segment
    const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
    t.equal(
      applyBreakText(withPdt, { ...window, startSeq: 980 }, squeezedUri).text,
      applyBreakText(withPdt, window, squeezedUri).text,
      'PDT places the segments, not the anchor',
    );
    const mixed = [
      '#EXTM3U',
      '#EXT-X-TARGETDURATION:6',
      '#EXT-X-MEDIA-SEQUENCE:10',
      '#EXTINF:6,',
      'https://origin.example.org/a.ts',
      '#EXTINF:6,',
      'https://origin.example.org/b.ts',
      '#EXT-X-PROGRAM-DATE-TIME:2030-01-01T00:00:00Z',
      '#EXTINF:6,',
      'https://origin.example.org/c.ts',
      '',
    ].join('\n');
    const w = {
      startMs: Date.UTC(2030, 0, 1) - 12_000,
      endMs: Date.UTC(2030, 0, 1) + 6000,
      durationSec: 18,
      startSeq: 10,
    };
    const r = applyBreakText(mixed, w, squeezedUri);
    t.equal(r.squeezed.length, 3, 'a and b by sequence, c by its PDT');
    t.equal(r.text, joinLines(applyBreak(splitLines(mixed), w, squeezedUri).lines));
  },
);

t.test('the text form equals the line-based form on every fixture with a sequence anchor', async (t) => {
  let compared = 0;
  for (const f of fixtureFiles('hls', ['.m3u8'])) {
    const text = fixture(f);
    const lines = splitLines(text);
    const ms = parseMedia(lines).mediaSequence;
    for (const startSeq of [ms - 2, ms, ms + 1, ms + 4]) {
      for (const len of [6_000, 600_000]) {
        const window = {
          startMs: Date.UTC(2026, 0, 1),
          endMs: Date.UTC(2026, 0, 1) + len,
          durationSec: len / 1000,
          startSeq,
        };
        const squeeze = (u: string) => `https://objects.example.com/sqz/${u.length}.ts`;
        const reference = applyBreak(lines, window, squeeze);
        const fast = applyBreakText(text, window, squeeze);
        if (fast.text !== joinLines(reference.lines) || fast.squeezed.join() !== reference.squeezed.join()) {
          t.fail(`${f}: differs for start ${startSeq}, ${len} ms`);
          return;
        }
        compared++;
      }
    }
  }
  t.ok(compared > 1000, `${compared} renderings identical`);
});

/**
 * Issues 25 and 30: a squeeze break meeting a DAI provider's pod. Walks the output's cue tags and
 * fails on any nesting: a CUE-OUT while one is open, a CUE-IN with none open. A CUE-OUT-CONT with
 * none open is a join and only allowed on the playlist's first segment.
 */
function cueNesting(text: string): string[] {
  const problems: string[] = [];
  let open = false;
  let segment = 0;
  for (const l of splitLines(text)) {
    if (!l.startsWith('#')) segment++;
    else if (l.startsWith('#EXT-X-CUE-OUT-CONT')) {
      if (!open && segment > 0) problems.push(`CONT with no cue open before segment ${segment}`);
      open = true;
    } else if (l.startsWith('#EXT-X-CUE-OUT')) {
      if (open) problems.push(`CUE-OUT inside an open cue before segment ${segment}`);
      open = true;
    } else if (l === '#EXT-X-CUE-IN') {
      if (!open) problems.push(`CUE-IN with no cue open before segment ${segment}`);
      open = false;
    }
  }
  return problems;
}

t.test(
  'a squeeze break against a DAI pod at every offset: one cue-out open at a time, the pod’s tags as the DAI host wrote them',
  async (t) => {
    const source = rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text;
    const lines = splitLines(source);
    const p = parseMedia(lines);
    const isContent = (u: string) => u.startsWith('https://origin.example.org/');
    // The pod at 977–979 as the DAI host wrote it: CUE-OUT, its segments, the CUE-IN on the next one.
    const podFrom = source.indexOf('#EXT-X-CUE-OUT:18\n');
    const podTo = source.indexOf('#EXT-X-CUE-IN\n', podFrom) + '#EXT-X-CUE-IN\n'.length;
    const pod = source.slice(podFrom, podTo);
    t.match(pod, /ad_17_977\.ts[\s\S]*ad_19_979\.ts\n#EXT-X-CUE-IN\n$/, 'the pod read from the source');
    let cases = 0;
    const failures: string[] = [];
    for (const { window, label } of breaksAroundPod()) {
      const name = `break ${label}`;
      for (const [form, text] of [
        ['lines', joinLines(applyBreak(lines, window, squeezedUri, isContent).lines)],
        ['text', applyBreakText(source, window, squeezedUri, isContent).text],
      ] as const) {
        cases++;
        const nesting = cueNesting(text);
        if (nesting.length) failures.push(`${name} (${form}): ${nesting.join('; ')}`);
        if (!text.includes(pod)) failures.push(`${name} (${form}): the pod's lines changed`);
        const out = parseMedia(splitLines(text));
        if (out.segments.length !== p.segments.length) failures.push(`${name} (${form}): segment count`);
        // Rule 4: every ad segment stays; every content segment in the window is squeezed, no other.
        p.segments.forEach((s, i) => {
          const got = out.segments[i]!.uri;
          const inWindow = s.pdt! >= window.startMs - 1 && s.pdt! < window.endMs - 1;
          const want = isContent(s.uri) && inWindow ? squeezedUri(s.uri) : s.uri;
          if (got !== want) failures.push(`${name} (${form}): segment ${i} is ${got}, wanted ${want}`);
        });
        // Each run of squeezed segments is opened by one CUE-OUT and, when it ends inside the playlist, closed by one CUE-IN.
        const runs = out.segments.reduce(
          (n, s, i) =>
            n +
            (s.uri.startsWith('https://objects.example.com/') &&
            !out.segments[i - 1]?.uri.startsWith('https://objects.example.com/')
              ? 1
              : 0),
          0,
        );
        const podOut = 2; // the pods at 977 and 997 keep their own CUE-OUT and CUE-IN
        const cueOuts = splitLines(text).filter((l) => /^#EXT-X-CUE-OUT:/.test(l)).length;
        if (cueOuts !== runs + podOut) failures.push(`${name} (${form}): ${cueOuts} CUE-OUT for ${runs} squeezed runs`);
      }
    }
    t.equal(cases, 360, 'break/pod overlaps rendered in both forms');
    t.same(failures, [], 'no nesting, the pod untouched, every break segment squeezed');
  },
);

/**
 * The source's pods as text slices: from the cue line that opens each (its CUE-OUT, or the CONT
 * of the window's first segment when the window joined it) through its CUE-IN line, or to the
 * end when still open. A CUE-IN on the window's first segment closes a pod wholly above the window.
 */
function podSlices(source: string): string[] {
  const slices: string[] = [];
  let from = -1;
  let pos = 0;
  for (const l of source.split('\n')) {
    const end = pos + l.length + 1;
    if (from === -1 && (l.startsWith('#EXT-X-CUE-OUT:') || l.startsWith('#EXT-X-CUE-OUT-CONT'))) from = pos;
    else if (l === '#EXT-X-CUE-IN' && from !== -1) {
      slices.push(source.slice(from, end));
      from = -1;
    }
    pos = end;
  }
  if (from !== -1) slices.push(source.slice(from));
  return slices;
}

t.test(
  'a squeeze break against a DAI pod at every offset, with the live window sliding across the pod (joined at the head, open at the live edge)',
  async (t) => {
    const podShape = { ...shape, adEvery: 20, adSegments: 3 };
    const isContent = (u: string) => u.startsWith('https://origin.example.org/');
    let cases = 0;
    const failures: string[] = [];
    // Live edges 975–1012: the window's last segment walks through the pods at 977–979 and 997–999
    // (the pod opening at the edge with no CUE-IN yet), its first one through 957–959 and 977–979
    // (the window joining a pod by its CONT tags, and a pod's CUE-IN on the first segment).
    for (let live = 975; live <= 1012; live++) {
      const source = rewritePlaylist(livePlaylist('ev', at(live) + 500, podShape), rules).text;
      const p = parseMedia(splitLines(source));
      const pods = podSlices(source);
      for (const { window, label } of breaksAroundPod()) {
        const name = `edge ${live}, break ${label}`;
        for (const [form, text] of [
          ['lines', joinLines(applyBreak(splitLines(source), window, squeezedUri, isContent).lines)],
          ['text', applyBreakText(source, window, squeezedUri, isContent).text],
        ] as const) {
          cases++;
          // The window's first segment may carry the CUE-IN of a pod above it: allowed there only.
          const nesting = cueNesting(text).filter((n) => n !== 'CUE-IN with no cue open before segment 0');
          if (nesting.length) failures.push(`${name} (${form}): ${nesting.join('; ')}`);
          for (const pod of pods) if (!text.includes(pod)) failures.push(`${name} (${form}): a pod's lines changed`);
          const out = parseMedia(splitLines(text));
          p.segments.forEach((s, i) => {
            const inWindow = s.pdt! >= window.startMs - 1 && s.pdt! < window.endMs - 1;
            const want = isContent(s.uri) && inWindow ? squeezedUri(s.uri) : s.uri;
            if (out.segments[i]?.uri !== want) failures.push(`${name} (${form}): segment ${i} changed wrongly`);
          });
        }
      }
    }
    t.equal(cases, 38 * 360, 'every break/pod offset under every window position, both forms');
    t.same(failures.slice(0, 20), [], 'no nesting, the pods untouched, exactly the break’s content segments squeezed');
  },
);

t.test(
  'a pod that scrolled out above the window: the break reopens on the segment with its CUE-IN as before',
  async (t) => {
    const podShape = { ...shape, adEvery: 20, adSegments: 3 };
    const window = { startMs: at(975), endMs: at(984), durationSec: 54 };
    const isContent = (u: string) => u.startsWith('https://origin.example.org/');
    const render = (live: number) =>
      applyBreakText(
        rewritePlaylist(livePlaylist('ev', at(live) + 500, podShape), rules).text,
        window,
        squeezedUri,
        isContent,
      ).text;
    // Live edge 1008: the pod's last segment heads the window; the break reopens after it on seg 980.
    t.match(
      render(1008),
      /ad_19_979\.ts\n#EXT-X-CUE-IN\n#EXT-X-CUE-OUT:24\n#EXT-X-DISCONTINUITY\n[^\n]+\n[^\n]+\n[^\n]+seg_980\.ts/,
    );
    // Live edge 1009: seg 980 heads it, carrying the pod's CUE-IN: the same CUE-OUT:24, not a join of the whole break.
    t.match(
      render(1009),
      /#EXT-X-CUE-IN\n#EXT-X-CUE-OUT:24\n#EXT-X-DISCONTINUITY\n[^\n]+\n[^\n]+\n[^\n]+seg_980\.ts\n#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=24\n/,
    );
  },
);

t.test(
  'a break suspended across a pod: CUE-IN before the pod, a fresh CUE-OUT for the rest of the break after it',
  async (t) => {
    const source = rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text;
    const window = { startMs: at(975), endMs: at(985), durationSec: 60 };
    const text = applyBreakText(source, window, squeezedUri, (u) => u.startsWith('https://origin.example.org/')).text;
    t.match(
      text,
      /#EXT-X-CUE-OUT:60\n[^\n]+\n[^\n]+\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_975\.ts\n#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=60\n[^\n]+\n[^\n]+\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_976\.ts\n#EXT-X-CUE-IN\n#EXT-X-CUE-OUT:18\n#EXT-X-DISCONTINUITY\n/,
      'the break closes right before the pod’s own CUE-OUT',
    );
    t.match(
      text,
      /ad_19_979\.ts\n#EXT-X-CUE-IN\n#EXT-X-CUE-OUT:30\n#EXT-X-DISCONTINUITY\n[^\n]+\n[^\n]+\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_980\.ts\n#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=30\n/,
      'after the pod’s CUE-IN, a CUE-OUT for the 30 s left of the break',
    );
    t.match(
      text,
      /sqz\/ev\/seg_984\.ts\n#EXT-X-CUE-IN\n[^\n]+\n[^\n]+\nhttps:\/\/origin\.example\.org\/content\/ev\/seg_985\.ts\n/,
      'and its CUE-IN after the last',
    );
  },
);

t.test(
  'the squeezeback flow: an origin cue the break overlaps is replaced by the break’s own tags (one CUE-OUT, one CUE-IN)',
  async (t) => {
    // An origin playlist with SCTE-35 cue tags around 990–992 (as the cue monitor starts a break from) and another at 996.
    const origin = splitLines(rewritePlaylist(livePlaylist('ev', now, shape), rules).text);
    const withCue = origin.flatMap((l) => {
      if (l.endsWith('seg_990.ts'))
        return ['#EXT-OATCLS-SCTE35:/DAlAAAAAAAAAP/wFAUAAAABf+/+AAAAAH4AG3dAAAEAAAAAAGA=', '#EXT-X-CUE-OUT:18', l];
      if (l.endsWith('seg_991.ts') || l.endsWith('seg_992.ts'))
        return [`#EXT-X-CUE-OUT-CONT:ElapsedTime=${l.endsWith('1.ts') ? 6 : 12},Duration=18`, l];
      if (l.endsWith('seg_993.ts')) return ['#EXT-X-CUE-IN', l];
      if (l.endsWith('seg_996.ts')) return ['#EXT-X-CUE-OUT:6', l];
      if (l.endsWith('seg_997.ts')) return ['#EXT-X-CUE-IN', l];
      return [l];
    });
    const source = joinLines(withCue);
    for (const [name, window, elapsed] of [
      ['the cue’s own window', { startMs: at(990), endMs: at(993), durationSec: 18 }, [6, 12]],
      [
        'a window a second after the cue',
        { startMs: at(990) + 1000, endMs: at(993) + 1000, durationSec: 18 },
        [11, 17],
      ],
    ] as const) {
      for (const text of [
        applyBreakText(source, window, squeezedUri, () => true, 'replace').text,
        joinLines(applyBreak(withCue, window, squeezedUri, () => true, 'replace').lines),
      ]) {
        const cueLines = splitLines(text).filter((l) => l.startsWith('#EXT-X-CUE') || l.startsWith('#EXT-OATCLS'));
        t.same(
          cueLines,
          [
            '#EXT-X-CUE-OUT:18',
            `#EXT-X-CUE-OUT-CONT:ElapsedTime=${elapsed[0]},Duration=18`,
            `#EXT-X-CUE-OUT-CONT:ElapsedTime=${elapsed[1]},Duration=18`,
            '#EXT-X-CUE-IN',
            '#EXT-X-CUE-OUT:6',
            '#EXT-X-CUE-IN',
          ],
          `${name}: the break's set only, the untouched cue at 996 kept`,
        );
        t.same(cueNesting(text), [], `${name}: no nesting`);
      }
    }
    // The DAI flow's reading of the same playlist keeps the cue as a pod and squeezes nothing inside it.
    const kept = applyBreakText(
      source,
      { startMs: at(990), endMs: at(993), durationSec: 18 },
      squeezedUri,
      () => true,
      'keep',
    );
    t.equal(kept.squeezed.length, 0, 'keep: segments inside a source cue are the provider’s');
    t.same(cueNesting(kept.text), []);
  },
);
