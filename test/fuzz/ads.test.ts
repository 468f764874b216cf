/**
 * Property tests of the VAST and VMAP readers and the wrapper resolution (issue 18 item 5):
 * generated documents read back with the values generated (whatever the encoding: entities,
 * numeric references, CDATA, padding, prefixes, namespaces); anything else gives an AdXmlError and
 * nothing else; a DOCTYPE (entity bombs) is always refused; resolveAds never rejects.
 * 200 runs per property by default; `FUZZ_RUNS=N npx tap -t0 test/fuzz` for a long run, `FUZZ_SEED=S` to replay.
 */
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import fc from 'fast-check';
import type { Element } from '@xmldom/xmldom';
import {
  AdXmlError,
  localNameOf,
  parseVast,
  parseVmap,
  parseXml,
  resolveAds,
  formatVastDuration,
  type VastDocument,
  type VastLinear,
  type VastMediaFile,
  type VmapBreak,
  type VmapDocument,
} from '../../lib/ads/index.js';
import {
  doctypeDoc,
  encodeText,
  fixtureTexts,
  httpUrl,
  mutated,
  outcome,
  paramsFor,
  textEncoding,
  xmlEscape,
  xmlText,
} from './common.js';

const vastFixtures = fixtureTexts('vast', ['.xml']).map((f) => f.text);
const vmapFixtures = fixtureTexts('vmap', ['.xml']).map((f) => f.text);

/** How a generated document is written: element prefix, namespace declarations, XML declaration, comments. */
interface Style {
  prefix: string;
  declare: boolean;
  defaultNs: boolean;
  decl: string;
  comments: boolean;
  enc: Array<'escape' | 'numeric' | 'cdata' | 'cdata-padded' | 'padded'>;
  attrNumeric: boolean;
}
const style: fc.Arbitrary<Style> = fc.record({
  prefix: fc.constantFrom('', '', '', 'v:', 'vast:'),
  declare: fc.boolean(),
  defaultNs: fc.boolean(),
  decl: fc.constantFrom(
    '',
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    '<?xml version="1.0" encoding="utf-8" standalone="yes"?>',
    '\ufeff<?xml version="1.0"?>\n<!-- served by x -->\n',
  ),
  comments: fc.boolean(),
  enc: fc.array(textEncoding, { minLength: 1, maxLength: 5 }),
  attrNumeric: fc.boolean(),
});

class Writer {
  private n = 0;
  constructor(private readonly s: Style) {}
  text(v: string): string {
    return encodeText(v, this.s.enc[this.n++ % this.s.enc.length]!);
  }
  attrs(a: Record<string, string | number | undefined>): string {
    return Object.entries(a)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => ` ${k}="${xmlEscape(String(v), this.s.attrNumeric)}"`)
      .join('');
  }
  el(name: string, body: string, attrs: Record<string, string | number | undefined> = {}): string {
    const p = this.s.prefix;
    return `<${p}${name}${this.attrs(attrs)}>${this.s.comments ? '<!-- c -->' : ''}${body}</${p}${name}>`;
  }
  root(name: string, ns: string, body: string, attrs: Record<string, string | number | undefined>): string {
    const p = this.s.prefix;
    const decls = `${this.s.defaultNs ? ` xmlns="${ns}"` : ''}${p && this.s.declare ? ` xmlns:${p.slice(0, -1)}="${ns}"` : ''}`;
    return `${this.s.decl}<${p}${name}${decls}${this.attrs(attrs)}>\n${body}\n</${p}${name}>\n`;
  }
}

// VAST model arbitraries.
const events = fc.constantFrom(
  'start',
  'firstQuartile',
  'midpoint',
  'thirdQuartile',
  'complete',
  'progress',
  'pause',
  'creativeView',
);
const tracking = fc.array(fc.tuple(events, httpUrl), { maxLength: 5 }).map((pairs) => {
  const out: Record<string, string[]> = {};
  for (const [e, u] of pairs) (out[e] ??= []).push(u);
  return out;
});
const mediaFile: fc.Arbitrary<VastMediaFile> = fc
  .record({
    uri: httpUrl,
    type: fc.option(fc.constantFrom('video/mp4', 'application/x-mpegURL', 'video/webm'), { nil: undefined }),
    width: fc.option(fc.nat({ max: 4000 }), { nil: undefined }),
    height: fc.option(fc.nat({ max: 3000 }), { nil: undefined }),
    bitrate: fc.option(fc.nat({ max: 50000 }), { nil: undefined }),
    delivery: fc.option(fc.constantFrom('progressive', 'streaming'), { nil: undefined }),
  })
  .map((f) => JSON.parse(JSON.stringify(f)) as VastMediaFile);
const linear = fc
  .record({
    creativeId: fc.option(xmlText(12), { nil: undefined }),
    sequence: fc.option(fc.nat({ max: 9 }), { nil: undefined }),
    ms: fc.nat({ max: 3 * 3600_000 }),
    mediaFiles: fc.array(mediaFile, { maxLength: 3 }),
    tracking,
    clickThrough: fc.option(httpUrl, { nil: undefined }),
    clickTrackings: fc.array(httpUrl, { maxLength: 2 }),
  })
  .map(
    ({ ms, ...l }) =>
      ({ ...JSON.parse(JSON.stringify(l)), durationSec: ms / 1000, clickTrackings: l.clickTrackings }) as VastLinear,
  );
const bool = fc.option(fc.boolean(), { nil: undefined });
const ad = fc.record({
  id: fc.option(xmlText(10), { nil: undefined }),
  sequence: fc.option(fc.nat({ max: 5 }), { nil: undefined }),
  adSystem: fc.option(xmlText(), { nil: undefined }),
  title: fc.option(xmlText(), { nil: undefined }),
  impressions: fc.array(httpUrl, { maxLength: 3 }),
  errors: fc.array(httpUrl, { maxLength: 2 }),
  wrapper: fc.boolean(),
  linears: fc.array(linear, { maxLength: 3 }),
  tagUri: httpUrl,
  follow: bool,
  multiple: bool,
  fallback: bool,
  boolForm: fc.constantFrom('word', 'digit', 'upper'),
});
type GenAd = typeof ad extends fc.Arbitrary<infer T> ? T : never;
const vast = fc.record({
  version: fc.constantFrom('2.0', '3.0', '4.0', '4.1', '4.2'),
  ads: fc.array(ad, { maxLength: 4 }),
  errors: fc.array(httpUrl, { maxLength: 2 }),
});
type GenVast = typeof vast extends fc.Arbitrary<infer T> ? T : never;

const boolText = (b: boolean | undefined, form: string) =>
  b === undefined
    ? undefined
    : form === 'digit'
      ? b
        ? '1'
        : '0'
      : form === 'upper'
        ? String(b).toUpperCase()
        : String(b);

function duration(w: Writer, sec: number, i: number): string {
  // VAST time format, or a bare number of seconds (accepted too).
  return w.text(i % 3 === 2 ? String(sec) : formatVastDuration(sec));
}

function renderLinear(w: Writer, l: VastLinear, i: number, inWrapper: boolean): string {
  const tr = Object.entries(l.tracking)
    .flatMap(([e, us]) => us.map((u) => w.el('Tracking', w.text(u), { event: e })))
    .join('');
  const clicks = w.el(
    'VideoClicks',
    (l.clickThrough && !inWrapper ? w.el('ClickThrough', w.text(l.clickThrough)) : '') +
      l.clickTrackings.map((u) => w.el('ClickTracking', w.text(u))).join(''),
  );
  const files = inWrapper
    ? ''
    : w.el(
        'MediaFiles',
        l.mediaFiles
          .map((f) =>
            w.el('MediaFile', w.text(f.uri), {
              type: f.type,
              width: f.width,
              height: f.height,
              bitrate: f.bitrate,
              delivery: f.delivery,
            }),
          )
          .join(''),
      );
  const body =
    (inWrapper ? '' : w.el('Duration', duration(w, l.durationSec, i))) + w.el('TrackingEvents', tr) + files + clicks;
  return w.el('Creative', w.el('Linear', body), { id: l.creativeId, sequence: l.sequence });
}

function renderVast(v: GenVast, s: Style): string {
  const w = new Writer(s);
  const ads = v.ads.map((a: GenAd, i) => {
    const common =
      (a.adSystem ? w.el('AdSystem', w.text(a.adSystem), { version: '1' }) : '') +
      a.impressions.map((u) => w.el('Impression', w.text(u), { id: `i${i}` })).join('') +
      a.errors.map((u) => w.el('Error', w.text(u))).join('');
    const creatives = w.el('Creatives', a.linears.map((l, j) => renderLinear(w, l, j, a.wrapper)).join(''));
    const inner = a.wrapper
      ? w.el('Wrapper', common + w.el('VASTAdTagURI', w.text(a.tagUri)) + creatives, {
          followAdditionalWrappers: boolText(a.follow, a.boolForm),
          allowMultipleAds: boolText(a.multiple, a.boolForm),
          fallbackOnNoAd: boolText(a.fallback, a.boolForm),
        })
      : w.el('InLine', common + (a.title ? w.el('AdTitle', w.text(a.title)) : '') + creatives);
    return w.el('Ad', inner, { id: a.id, sequence: a.sequence });
  });
  return w.root(
    'VAST',
    'http://www.iab.com/VAST',
    ads.join('\n') + v.errors.map((u) => w.el('Error', w.text(u))).join(''),
    { version: v.version },
  );
}

/** What parseVast should return for a generated document. */
function expectedVast(v: GenVast): VastDocument {
  const strip = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;
  return {
    version: v.version,
    errors: v.errors,
    ads: v.ads.map((a) => {
      const head = strip({ id: a.id ?? '', sequence: a.sequence });
      if (!a.wrapper)
        return {
          ...head,
          inline: strip({
            impressions: a.impressions,
            errors: a.errors,
            linears: a.linears,
            adSystem: a.adSystem,
            title: a.title,
          }),
        };
      const trackingAll: Record<string, string[]> = {};
      for (const l of a.linears) for (const [e, us] of Object.entries(l.tracking)) (trackingAll[e] ??= []).push(...us);
      return {
        ...head,
        wrapper: strip({
          vastAdTagUri: a.tagUri,
          adSystem: a.adSystem,
          impressions: a.impressions,
          errors: a.errors,
          tracking: trackingAll,
          clickTrackings: a.linears.flatMap((l) => l.clickTrackings),
          followAdditionalWrappers: a.follow,
          allowMultipleAds: a.multiple,
          fallbackOnNoAd: a.fallback,
        }),
      };
    }),
  };
}

/** Linear durations compared to the millisecond (HH:MM:SS.mmm sums are floats). */
function normaliseVast(d: VastDocument): unknown {
  return JSON.parse(
    JSON.stringify(d, (k, v: unknown) => (k === 'durationSec' && typeof v === 'number' ? Math.round(v * 1000) : v)),
  );
}

const sortKeys = (o: unknown): unknown =>
  Array.isArray(o)
    ? o.map(sortKeys)
    : o && typeof o === 'object'
      ? Object.fromEntries(
          Object.entries(o)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, sortKeys(v)]),
        )
      : o;

t.test('generated VAST documents read back with the generated values', async () => {
  fc.assert(
    fc.property(vast, style, (v, s) => {
      const xml = renderVast(v, s);
      const got = sortKeys(normaliseVast(parseVast(xml)));
      const want = sortKeys(normaliseVast(expectedVast(v)));
      if (!isDeepStrictEqual(got, want))
        throw new Error(
          `read back differs\n${xml}\n--- got\n${JSON.stringify(got)}\n--- want\n${JSON.stringify(want)}`,
        );
    }),
    paramsFor(1),
  );
});

// VMAP.
const timeOffset = fc.oneof(
  fc.constantFrom('start', 'end', '', '0%', '100%', '#1', '#12'),
  fc.nat({ max: 36_000_000 }).map((ms) => formatVastDuration(ms / 1000)),
  fc.nat({ max: 100 }).map((p) => `${p}%`),
  fc.nat({ max: 99 }).map((h) => `${String(h).padStart(2, '0')}:00:00`),
);
const adBreak = fc.record({
  breakId: fc.option(xmlText(10), { nil: undefined }),
  breakType: fc.constantFrom('linear', 'nonlinear', 'display', 'linear,nonlinear', ''),
  timeOffset,
  repeatAfter: fc.option(fc.constantFrom('00:05:00', '00:00:30.500'), { nil: undefined }),
  source: fc.option(
    fc.record({
      id: fc.option(xmlText(8), { nil: undefined }),
      multiple: bool,
      follow: bool,
      kind: fc.constantFrom('tag', 'inline', 'cdata'),
      tag: httpUrl,
      templateType: fc.option(fc.constantFrom('vast3', 'vast4'), { nil: undefined }),
      inline: vast,
    }),
    { nil: undefined },
  ),
  tracking: fc.array(fc.tuple(fc.constantFrom('breakStart', 'breakEnd', 'error'), httpUrl), { maxLength: 4 }),
});
const vmap = fc.record({ breaks: fc.array(adBreak, { maxLength: 4 }), vastStyle: style });
type GenVmap = typeof vmap extends fc.Arbitrary<infer T> ? T : never;

function renderVmap(m: GenVmap, s: Style): { xml: string; inline: Map<number, string> } {
  const w = new Writer({ ...s, prefix: s.prefix ? 'vmap:' : '' });
  const inline = new Map<number, string>();
  const breaks = m.breaks.map((b, i) => {
    let src = '';
    if (b.source) {
      const so = b.source;
      let body: string;
      if (so.kind === 'tag') body = w.el('AdTagURI', w.text(so.tag), { templateType: so.templateType });
      else {
        // The inline VAST keeps its own (unprefixed) names; a CDATA one is text.
        const vastXml = renderVast(so.inline, { ...m.vastStyle, prefix: '', decl: '', comments: false });
        inline.set(i, vastXml);
        body = w.el(
          'VASTAdData',
          so.kind === 'cdata' ? `<![CDATA[${vastXml.trim().replace(/]]>/g, ']]]]><![CDATA[>')}]]>` : vastXml,
        );
      }
      src = w.el('AdSource', body, {
        id: so.id,
        allowMultipleAds: boolText(so.multiple, 'word'),
        followRedirects: boolText(so.follow, 'digit'),
      });
    }
    const tr = b.tracking.length
      ? w.el('TrackingEvents', b.tracking.map(([e, u]) => w.el('Tracking', w.text(u), { event: e })).join(''))
      : '';
    return w.el('AdBreak', src + tr, {
      timeOffset: b.timeOffset,
      breakType: b.breakType,
      breakId: b.breakId,
      repeatAfter: b.repeatAfter,
    });
  });
  return { xml: w.root('VMAP', 'http://www.iab.net/videosuite/vmap', breaks.join('\n'), { version: '1.0' }), inline };
}

t.test(
  'generated VMAP documents read back: breaks, every time offset form, ad sources (tag, inline VAST, CDATA VAST), tracking',
  async () => {
    fc.assert(
      fc.property(vmap, style, (m, s) => {
        const { xml, inline } = renderVmap(m, s);
        const doc: VmapDocument = parseVmap(xml);
        if (doc.version !== '1.0' || doc.breaks.length !== m.breaks.length)
          throw new Error(`breaks ${doc.breaks.length}\n${xml}`);
        m.breaks.forEach((b, i) => {
          const got: VmapBreak = doc.breaks[i]!;
          const trackingWant: Record<string, string[]> = {};
          for (const [e, u] of b.tracking) (trackingWant[e] ??= []).push(u);
          const head = {
            breakId: got.breakId,
            breakType: got.breakType,
            timeOffset: got.timeOffset,
            repeatAfter: got.repeatAfter,
            tracking: got.tracking,
          };
          const want = JSON.parse(
            JSON.stringify({
              breakId: b.breakId,
              breakType: b.breakType,
              timeOffset: b.timeOffset,
              repeatAfter: b.repeatAfter,
              tracking: trackingWant,
            }),
          );
          if (!isDeepStrictEqual(sortKeys(JSON.parse(JSON.stringify(head))), sortKeys(want)))
            throw new Error(`break ${i}: ${JSON.stringify(head)} vs ${JSON.stringify(want)}\n${xml}`);
          const so = b.source;
          if (!so) {
            if (got.adSource) throw new Error('unexpected ad source');
            return;
          }
          const src = got.adSource!;
          if (src.id !== so.id || src.allowMultipleAds !== so.multiple || src.followRedirects !== so.follow)
            throw new Error(`ad source attributes of break ${i}\n${xml}`);
          if (so.kind === 'tag') {
            if (src.adTagUri !== so.tag || src.templateType !== so.templateType || src.vastXml !== undefined)
              throw new Error(`ad tag of break ${i}`);
          } else {
            const v = src.vastXml;
            if (
              so.kind === 'cdata'
                ? v !== inline.get(i)!.trim()
                : typeof v !== 'object' || localNameOf(v as Element) !== 'VAST'
            )
              throw new Error(`inline VAST of break ${i}: ${typeof v}`);
            const read = parseVast(v as Element | string);
            if (!isDeepStrictEqual(sortKeys(normaliseVast(read)), sortKeys(normaliseVast(expectedVast(so.inline)))))
              throw new Error(`inline VAST of break ${i} reads back differently`);
          }
        });
      }),
      paramsFor(0.5),
    );
  },
);

const adInput = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({
    unit: fc.constantFrom(
      '<',
      '>',
      '/',
      'VAST',
      'VMAP',
      'vmap:',
      'Ad',
      'InLine',
      'Wrapper',
      ' ',
      '"',
      '=',
      'x',
      '&',
      ';',
      '<![CDATA[',
      ']]>',
      '<!--',
      '-->',
      '<?',
      '?>',
      '<!DOCTYPE',
    ),
    maxLength: 60,
  }),
  mutated(fc.constantFrom(...vastFixtures, ...vmapFixtures)),
  mutated(fc.tuple(vast, style).map(([v, s]) => renderVast(v, s))),
);

t.test(
  'malformed or odd input: parseXml, parseVast and parseVmap return or throw AdXmlError, nothing else',
  async () => {
    fc.assert(
      fc.property(
        adInput,
        fc.option(
          fc.record({ maxBytes: fc.integer({ min: 0, max: 5000 }), maxDepth: fc.integer({ min: 0, max: 12 }) }),
          { nil: undefined },
        ),
        (text, opts) => {
          for (const fn of [
            () => parseXml(text, opts),
            () => parseVast(text, opts),
            () => parseVmap(text, opts),
          ] as Array<() => unknown>) {
            const r = outcome(fn);
            if (!r.ok && !(r.error instanceof AdXmlError)) throw new Error(`threw ${String(r.error)}`);
          }
        },
      ),
      paramsFor(1),
    );
  },
);

t.test('a DOCTYPE (entity bombs, external entities) is always refused with AdXmlError', async () => {
  fc.assert(
    fc.property(doctypeDoc, (text) => {
      for (const fn of [() => parseXml(text), () => parseVast(text), () => parseVmap(text)] as Array<() => unknown>) {
        const r = outcome(fn);
        if (r.ok || !(r.error instanceof AdXmlError))
          throw new Error(`not refused: ${r.ok ? 'parsed' : String(r.error)}`);
        if (!/<[A-Za-z]+ version="3.0"><!/.test(text) && r.error.code !== 'doctype')
          throw new Error(`code ${r.error.code}`);
      }
    }),
    paramsFor(0.25),
  );
});

t.test('resolveAds never rejects, whatever the ad servers answer (wrapper chains, loops, junk, failures)', async () => {
  const urls = [
    'https://ads.example.com/a',
    'https://ads.example.com/b',
    'https://ads.example.com/c',
    'http://x.test/d',
  ];
  const answer = fc.oneof(
    fc.tuple(vast, style).map(([v, s]) => ({
      text: renderVast({ ...v, ads: v.ads.map((a, i) => ({ ...a, tagUri: urls[i % urls.length]! })) }, s),
    })),
    fc.tuple(vmap, style).map(([m, s]) => ({
      text: renderVmap(
        {
          ...m,
          breaks: m.breaks.map((b, i) => ({
            ...b,
            source: b.source && { ...b.source, tag: urls[i % urls.length]! },
          })),
        },
        s,
      ).xml,
    })),
    adInput.map((text) => ({ text })),
    fc.constantFrom({ fail: 'reject' }, { fail: 'throw' }, { fail: 'non-string' }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(answer, { minLength: 4, maxLength: 4 }), fc.boolean(), async (answers, inline) => {
      const fetchText = async (url: string): Promise<string> => {
        const a = answers[Math.max(0, urls.indexOf(url))]!;
        if ('fail' in a) {
          if (a.fail === 'throw') throw new Error('network');
          if (a.fail === 'non-string') return 42 as unknown as string;
          return Promise.reject(new TypeError('reset'));
        }
        return a.text;
      };
      const first = answers[0]!;
      const start = inline && 'text' in first ? { text: first.text, url: urls[0]! } : { url: urls[0]! };
      const r = await resolveAds(start, fetchText, { totalMs: 2000, perRequestMs: 1000 });
      if (!Array.isArray(r.ads)) throw new Error('no ads array');
      for (const d of r.ads)
        if (typeof d.uri !== 'string' || !Number.isFinite(d.durationSec))
          throw new Error(`bad ad ${JSON.stringify(d)}`);
      if (!r.ads.length && typeof r.reason !== 'string') throw new Error('no reason given for no ads');
    }),
    paramsFor(0.5),
  );
});
