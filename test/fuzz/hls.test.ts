/**
 * Property tests of the HLS rewrite, trim and break substitution (issue 18 item 5).
 * 200 runs per property by default; `FUZZ_RUNS=5000 npx tap -t0 test/fuzz/hls.test.ts` for a long run,
 * `FUZZ_SEED=<seed>` to replay a failure printed by fast-check.
 */
import t from 'tap';
import fc from 'fast-check';
import * as HLS from 'hls-parser';
import {
  PlaylistRewriter,
  UriRewriter,
  isAbsolute,
  attribute,
  mapUriAttribute,
  tagName,
  tagValue,
  rewritePlaylist,
  splitLines,
  joinLines,
  trimText,
  trimThenRewrite,
  trimLiveWindow,
  parseMedia,
  applyBreak,
  applyBreakText,
  type TrimOptions,
} from '../../lib/hls/index.js';
import { reparse } from '../hls/reparse.js';
import { cuts, fixtureTexts, mutated, paramsFor, splitAt } from './common.js';
import {
  DAI,
  genMaster,
  genMedia,
  layout,
  mediaLines,
  render,
  rules,
  type GenMedia,
  type GenSegment,
} from './hls-gen.js';

HLS.setOptions({ strictMode: false, silent: true });

const fixtures = fixtureTexts('hls', ['.m3u8']).map((f) => f.text);
const trimOpts: fc.Arbitrary<TrimOptions> = fc.record({
  windowSegments: fc.oneof(fc.integer({ min: 0, max: 45 }), fc.constantFrom(-1, 1e9)),
  delaySegments: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom(-3, 1e9)),
});
const generatedRaw = fc.tuple(genMedia(), layout).map(([m, l]) => render(mediaLines(m), l));
/** Anything: random text, mutated fixtures, mutated generated playlists. */
const anyInput = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({
    unit: fc.constantFrom(
      '#',
      'EXT',
      '-X-',
      'INF:',
      ':',
      ',',
      '\n',
      '\r',
      ' ',
      '/',
      'a',
      '1',
      '.',
      '"',
      'URI="',
      '#EXTM3U\n',
      '#EXTINF:6,\n',
      '#EXT-X-MEDIA-SEQUENCE:',
      '#EXT-X-TARGETDURATION:6\n',
      '#EXT-X-DISCONTINUITY\n',
      '#EXT-X-PROGRAM-DATE-TIME:',
      '\\',
      '../',
      './',
      '//',
      '?',
    ),
    maxLength: 80,
  }),
  mutated(fc.constantFrom(...fixtures)),
  mutated(generatedRaw),
  generatedRaw,
);
const breakWindow = fc
  .record({
    startMs: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
    len: fc.integer({ min: 0, max: 600_000 }),
  })
  .map(({ startMs, len }) => ({ startMs, endMs: startMs + len, durationSec: len / 1000 }));
/** A break window near the playlist's first program date-time (so that it covers some of its segments). */
const breakNear = fc.record({
  offset: fc.integer({ min: -60_000, max: 240_000 }),
  len: fc.integer({ min: 0, max: 120_000 }),
  exact: fc.boolean(),
});
function windowNear(text: string, b: { offset: number; len: number; exact: boolean }) {
  const m = /#EXT-X-PROGRAM-DATE-TIME:([^\n]*)/.exec(text);
  const t0 = (m && Date.parse(m[1]!)) || 0;
  const startMs = t0 + (b.exact ? Math.round(b.offset / 6000) * 6000 : b.offset);
  return { startMs, endMs: startMs + b.len, durationSec: b.len / 1000 };
}
const squeezed = (u: string) => (u.includes('5') ? undefined : `https://sq.example.org/s/${u.length}.ts`);

function streamed(raw: string, fractions: number[], bytes: boolean): { text: string; kind: string; valid: boolean } {
  const r = new PlaylistRewriter(rules);
  let text = '';
  if (bytes) for (const c of splitAt(Buffer.from(raw, 'utf8'), fractions)) text += r.push(new Uint8Array(c));
  else for (const c of splitAt(raw, fractions)) text += r.push(c);
  text += r.end();
  return { text, kind: r.kind, valid: r.valid };
}

t.test('no exception escapes the rewrite, trims and break substitution, on any input', async () => {
  fc.assert(
    fc.property(anyInput, trimOpts, breakWindow, (raw, opts, win) => {
      const whole = rewritePlaylist(raw, rules);
      trimThenRewrite(raw, new PlaylistRewriter(rules), opts);
      trimLiveWindow(splitLines(raw), opts);
      trimText(whole.text, opts);
      trimLiveWindow(splitLines(whole.text), opts);
      parseMedia(splitLines(raw));
      applyBreak(splitLines(whole.text), win, squeezed);
      applyBreakText(whole.text, win, squeezed);
      applyBreakText(raw, win, squeezed);
    }),
    paramsFor(1),
  );
});

t.test('streamed rewrite (string or UTF-8 byte chunks split anywhere) equals the whole-document rewrite', async () => {
  fc.assert(
    fc.property(anyInput, cuts, fc.boolean(), (raw, fractions, bytes) => {
      const whole = rewritePlaylist(raw, rules);
      // Byte chunks decode as the whole does only for well-formed UTF-16 (a lone surrogate becomes U+FFFD in both).
      const expected = bytes ? rewritePlaylist(Buffer.from(raw, 'utf8').toString('utf8'), rules) : whole;
      const got = streamed(raw, fractions, bytes);
      return got.text === expected.text && got.kind === expected.kind && got.valid === expected.valid;
    }),
    paramsFor(1),
  );
});

t.test(
  'fast text trim equals the line-based reference; text break substitution equals the line-based one',
  async () => {
    fc.assert(
      fc.property(anyInput, trimOpts, breakNear, (raw, opts, near) => {
        const { text, kind } = rewritePlaylist(raw, rules);
        const win = windowNear(text, near);
        if (kind !== 'media') return true;
        const fast = trimText(text, opts) ?? text;
        const ref = joinLines(trimLiveWindow(splitLines(text), opts));
        if (fast !== ref) throw new Error(`trimText differs from reference:\n--- fast\n${fast}\n--- reference\n${ref}`);
        const b = applyBreak(splitLines(fast), win, squeezed);
        const bt = applyBreakText(fast, win, squeezed);
        if (bt.text !== joinLines(b.lines) || bt.notReady !== b.notReady || bt.squeezed.join() !== b.squeezed.join())
          throw new Error(`applyBreakText differs from applyBreak:\n${bt.text}\n---\n${joinLines(b.lines)}`);
        return true;
      }),
      paramsFor(1),
    );
  },
);

t.test('trimThenRewrite on raw input (the hot path) equals rewrite then trim', async () => {
  fc.assert(
    fc.property(
      fc.oneof(generatedRaw, mutated(generatedRaw), mutated(fc.constantFrom(...fixtures))),
      trimOpts,
      (raw, opts) => {
        const whole = rewritePlaylist(raw, rules);
        const expected = whole.kind === 'media' ? (trimText(whole.text, opts) ?? whole.text) : whole.text;
        const hls = new PlaylistRewriter(rules);
        const got = trimThenRewrite(raw, hls, opts);
        if (got !== expected || hls.kind !== whole.kind || hls.valid !== whole.valid)
          throw new Error(`trimThenRewrite differs:\n${got}\n---\n${expected}`);
      },
    ),
    paramsFor(1),
  );
});

/** The rewritten URI the spec asks for (docs/design.md §4): root-relative → content origin, relative → upstream, absolute untouched. */
function expectedUri(s: GenSegment): string {
  switch (s.uriKind) {
    case 'root':
    case 'unicode':
      return rules.contentOrigin + s.uri;
    case 'relative':
      return 'https://dai.example.com/linear/hls/event/EV1/stream/s1:LOC/variant/' + s.uri;
    case 'dot':
    case 'parent':
      return new URL(s.uri, rules.playlistUrl).href;
    default:
      return s.uri;
  }
}

/** Which segments the trim keeps, from the spec: drop the last `delay` then keep the last `window`, never under 3 target durations (RFC 8216 §6.2.2). */
function expectedWindow(m: GenMedia, opts: TrimOptions): [number, number] {
  const n = m.segments.length;
  if (m.endList || m.type === 'VOD' || n === 0) return [0, n];
  // Summed from the live edge (the order of the float additions decides a window of exactly 3 target durations).
  const sum = (a: number, b: number) => m.segments.slice(a, b).reduceRight((s, x) => s + x.duration, 0);
  const min = 3 * m.targetDuration;
  let delay = Math.min(Math.max(0, opts.delaySegments), n - 1);
  while (delay > 0 && sum(0, n - delay) < min) delay--;
  const remaining = n - delay;
  let start = 0;
  if (opts.windowSegments > 0 && opts.windowSegments < remaining && m.type !== 'EVENT') {
    start = remaining - opts.windowSegments;
    while (start > 0 && sum(start, remaining) < min) start--;
  }
  return [start, remaining];
}

t.test(
  'trimmed live playlists: still parse (m3u8-parser, hls-parser), keep the expected window, sequences advance by what was dropped, absolute URIs of other hosts untouched',
  async () => {
    fc.assert(
      fc.property(
        genMedia({ minSegments: 1, maxSegments: 40, live: true }),
        layout,
        trimOpts,
        fc.boolean(),
        (m, l, opts, byteranges) => {
          if (!byteranges)
            m = { ...m, segments: m.segments.map((s) => ({ ...s, byterange: undefined })) as GenSegment[] };
          const raw = render(mediaLines(m), l);
          const hls = new PlaylistRewriter(rules);
          const out = trimThenRewrite(raw, hls, opts);
          if (hls.kind !== 'media' || !hls.valid) throw new Error(`kind ${hls.kind} valid ${hls.valid}`);
          const [start, end] = expectedWindow(m, opts);
          const kept = m.segments.slice(start, end);
          const dropped = m.segments.slice(0, start);

          const parsed = reparse(out);
          const uris = parsed.segments.map((s) => s.uri);
          const want = kept.map(expectedUri);
          if (uris.join('\n') !== want.join('\n'))
            throw new Error(`m3u8-parser segments:\n${uris.join('\n')}\nexpected:\n${want.join('\n')}\n---\n${out}`);
          const ms = (m.mediaSequence ?? 0) + start;
          const ds = (m.discontinuitySequence ?? 0) + dropped.filter((s) => s.discontinuity).length;
          if ((parsed.mediaSequence ?? 0) !== ms)
            throw new Error(`media sequence ${parsed.mediaSequence}, expected ${ms}\n${out}`);
          if ((parsed.discontinuitySequence ?? 0) !== ds)
            throw new Error(`discontinuity sequence ${parsed.discontinuitySequence}, expected ${ds}\n${out}`);
          parsed.segments.forEach((s, i) => {
            if (Boolean(s.discontinuity) !== kept[i]!.discontinuity)
              throw new Error(`discontinuity flag of segment ${i}\n${out}`);
            if (Math.abs(s.duration - kept[i]!.duration) > 1e-9) throw new Error(`duration of segment ${i}`);
          });

          const h = HLS.parse(out);
          if (h.isMasterPlaylist) throw new Error('hls-parser: master');
          const media = h as HLS.types.MediaPlaylist;
          // A tail of partial segments (EXT-X-PART) is a segment without URI to hls-parser.
          if (
            media.segments
              .filter((s) => s.uri)
              .map((s) => s.uri)
              .join('\n') !== want.join('\n')
          )
            throw new Error(`hls-parser segments differ\n${out}`);
          if (media.mediaSequenceBase !== undefined && media.mediaSequenceBase !== ms)
            throw new Error(`hls-parser media sequence ${media.mediaSequenceBase}`);

          // Absolute URIs of other hosts (segments, keys) are never changed.
          for (const line of splitLines(out)) {
            const u = line.startsWith('#') ? /URI="([^"]*)"/.exec(line)?.[1] : line;
            if (
              u &&
              /^https?:\/\//.test(u) &&
              !u.startsWith(rules.contentOrigin) &&
              !u.startsWith(DAI) &&
              !raw.includes(u)
            )
              throw new Error(`absolute URI changed: ${u}`);
          }
          // Program date-time of the first kept segment is right when the model tags any dropped one.
          if (
            start > 0 &&
            m.segments.slice(0, start + 1).some((s) => s.pdt) &&
            !m.segments.slice(0, start + 1).some((s) => s.byterange)
          ) {
            const pdt = parsed.segments[0]!.dateTimeString;
            const t0 = m.startMs + m.segments.slice(0, start).reduce((a, s) => a + s.duration * 1000, 0);
            if (pdt === undefined || Math.abs(Date.parse(pdt) - t0) > 1)
              throw new Error(`PDT at the new head ${pdt}, expected ${new Date(t0).toISOString()}\n${out}`);
          }
        },
      ),
      paramsFor(1),
    );
  },
);

t.test(
  'master playlists: still parse, every variant kept, DAI-host and root-relative URIs proxied, others untouched',
  async () => {
    fc.assert(
      fc.property(genMaster, layout, (g, l) => {
        const raw = render(g.lines, l);
        const { kind, valid, text } = rewritePlaylist(raw, rules);
        if (kind !== 'master' || !valid) throw new Error(`kind ${kind} valid ${valid}`);
        const expected = g.uris.map((u) => {
          if (/^https?:\/\/dai\.example\.com\//i.test(u)) return rules.proxyBase + u.slice(u.indexOf('/', 8));
          if (u.startsWith('/') && !u.startsWith('//')) return rules.proxyBase + u;
          return u;
        });
        const got = splitLines(text).flatMap((line) =>
          line.startsWith('#') ? (/,URI="([^"]*)"/.exec(line)?.slice(1) ?? []) : [line],
        );
        if (got.join('\n') !== expected.join('\n'))
          throw new Error(`URIs:\n${got.join('\n')}\nexpected:\n${expected.join('\n')}`);
        const parsed = reparse(text);
        if (parsed.playlists?.length !== g.variants)
          throw new Error(`m3u8-parser variants ${parsed.playlists?.length}`);
        const h = HLS.parse(text);
        if (
          !h.isMasterPlaylist ||
          (h as HLS.types.MasterPlaylist).variants.filter((v) => !v.isIFrameOnly).length !== g.variants
        )
          throw new Error('hls-parser variants');
      }),
      paramsFor(1),
    );
  },
);

t.test('tag-line helpers and URI rules: no exception on any line; identity URI mapping keeps the line', async () => {
  const line = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 120 }),
    fc.string({
      unit: fc.constantFrom(
        '#EXT-X-KEY:',
        'URI="',
        'SERVER-URI="',
        '"',
        ',',
        '=',
        ':',
        '/',
        '../',
        './',
        '//',
        'https://',
        'dai.example.com',
        ' ',
        'é',
        '%',
        '?',
        '#',
        'a',
      ),
      maxLength: 30,
    }),
  );
  const uris = new UriRewriter(rules);
  fc.assert(
    fc.property(line, (l) => {
      tagName(l);
      tagValue(l);
      attribute(l, 'URI');
      attribute(l, 'DURATION');
      if (mapUriAttribute(l, (u) => u) !== l) throw new Error('identity mapping changed the line');
      mapUriAttribute(l, (u) => uris.media(u));
      uris.master(l);
      const m = uris.media(l);
      if (isAbsolute(l) && m !== l) throw new Error(`absolute URI changed: ${l} -> ${m}`);
    }),
    paramsFor(1),
  );
});

t.test(
  'break substitution on generated live playlists: still parses, same segments, exactly those in the window squeezed when ready, one CUE-OUT at most',
  async () => {
    fc.assert(
      fc.property(genMedia({ minSegments: 1, maxSegments: 30, live: true }), breakNear, (m, near) => {
        m = {
          ...m,
          segments: m.segments.map((s, i) => ({
            ...s,
            pdt: i === 0 || s.pdt,
            before: [],
            after: [],
            byterange: undefined,
          })) as GenSegment[],
        };
        const { text } = rewritePlaylist(joinLines(mediaLines(m)), rules);
        const win = windowNear(text, near);
        const isContent = (u: string) => u.startsWith(rules.contentOrigin);
        const r = applyBreakText(text, win, squeezed, isContent);
        const parsed = reparse(r.text);
        if (parsed.segments.length !== m.segments.length)
          throw new Error(`segments ${parsed.segments.length}\n${r.text}`);
        let t0 = m.startMs;
        let cueOuts = 0;
        m.segments.forEach((s, i) => {
          const inBreak = t0 >= win.startMs - 1 && t0 < win.endMs - 1;
          const uri = expectedUri(s);
          const want = inBreak && isContent(uri) ? (squeezed(uri) ?? uri) : uri;
          if (parsed.segments[i]!.uri !== want)
            throw new Error(`segment ${i}: ${parsed.segments[i]!.uri}, expected ${want}\n${r.text}`);
          t0 += s.duration * 1000;
        });
        for (const l of splitLines(r.text)) if (l.startsWith('#EXT-X-CUE-OUT:')) cueOuts++;
        if (cueOuts > 1) throw new Error(`${cueOuts} CUE-OUT tags for one break\n${r.text}`);
      }),
      paramsFor(1),
    );
  },
);
