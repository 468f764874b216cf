/** The hot path's offset-based trim must equal the line-based reference on every playlist. */
import t, { type Test } from 'tap';
import {
  trimText,
  trimThenRewrite,
  trimLiveWindow,
  rewritePlaylist,
  splitLines,
  joinLines,
  PlaylistRewriter,
  textPathStats,
  textPathSnapshot,
} from '../../lib/hls/index.js';
import { livePlaylist, defaultShape, type LiveShape } from '../../lib/sim/live-playlist.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { kindInHeader, lateHeaderTag, normalised, trimNeedsReference } from './text-path-shapes.js';

const rules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge/dai/manifest',
  contentOrigin: 'https://origin.example.org',
  playlistUrl: 'https://dai.example.com/a/b.m3u8',
};
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

function same(t: Test, text: string, label: string): number {
  let bad = 0;
  for (const [w, d] of combos) {
    const opts = { windowSegments: w, delaySegments: d };
    const fast = trimText(text, opts) ?? text;
    const ref = joinLines(trimLiveWindow(splitLines(text), opts));
    if (fast !== ref) {
      bad++;
      t.equal(fast, ref, `${label} w=${w} d=${d}`);
    }
  }
  return bad;
}

/** Runs fn and tells whether every trim it made went by offsets (true) or every one to the reference (false); undefined when mixed. */
function trimWay(fn: () => void): boolean | undefined {
  const before = textPathSnapshot();
  fn();
  const offsets = textPathStats.trimOffsets - before.trimOffsets;
  const reference = textPathStats.trimReference - before.trimReference;
  return reference === 0 && offsets > 0 ? true : offsets === 0 && reference > 0 ? false : undefined;
}

t.test('every HLS media fixture', async (t) => {
  let n = 0;
  let bad = 0;
  const files = fixtureFiles('hls', ['.m3u8']);
  t.equal(files.length, 254, 'HLS fixtures read');
  const wrongWay: string[] = [];
  let referenced = 0;
  for (const f of files) {
    const { kind, text } = rewritePlaylist(fixture(f), rules);
    if (kind !== 'media') continue;
    n++;
    const expectReference = trimNeedsReference(text);
    if (expectReference) referenced++;
    if (trimWay(() => (bad += same(t, text, f))) !== !expectReference) wrongWay.push(f);
  }
  t.equal(bad, 0, `${n} media fixtures × ${combos.length} windows agree`);
  t.equal(n, 176, 'media fixtures');
  t.same(wrongWay, [], 'by offsets unless a shape left to the reference (then only by the reference)');
  // 65 of them have a header tag after a comment or segment tag (USP's "## Created with…" among
  // them), one is a live byte-range playlist: see trimNeedsReference.
  t.equal(referenced, 66, 'fixtures left to the reference');
});

t.test('live DAI-shaped playlists at many moments, with cue state at every head', async (t) => {
  let bad = 0;
  const notByOffsets: string[] = [];
  for (const shape of [
    { ...defaultShape },
    { ...defaultShape, windowSegments: 120, adEvery: 7, adSegments: 4 },
    { ...defaultShape, adEvery: 0 },
  ] as LiveShape[]) {
    for (let step = 0; step < 60; step++) {
      const { text } = rewritePlaylist(livePlaylist('s', shape.epochMs + (500 + step) * 6000, shape), rules);
      if (trimWay(() => (bad += same(t, text, `step ${step}`))) !== true)
        notByOffsets.push(`${shape.windowSegments}/${shape.adEvery} step ${step}`);
    }
  }
  t.equal(bad, 0);
  t.same(notByOffsets, [], 'every one trimmed by offsets');
});

const seg = (i: number, extra: string[] = []) => [...extra, '#EXTINF:6.0,', `/s${i}.ts`];
const build = (header: string[], body: string[][]) => joinLines(['#EXTM3U', ...header, ...body.flat()]);
const cases: Record<string, string> = {
  'no media sequence': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) => seg(i, i === 4 ? ['#EXT-X-DISCONTINUITY'] : [])),
  ),
  'disc sequence before media sequence': build(
    ['#EXT-X-TARGETDURATION:6', '#EXT-X-DISCONTINUITY-SEQUENCE:7', '#EXT-X-MEDIA-SEQUENCE:3'],
    Array.from({ length: 20 }, (_, i) => seg(i, i % 5 === 0 ? ['#EXT-X-DISCONTINUITY'] : [])),
  ),
  'keys with formats and NONE': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) =>
      seg(
        i,
        i === 1
          ? [
              '#EXT-X-KEY:METHOD=AES-128,URI="/k1"',
              '#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://x",KEYFORMAT="com.apple.streamingkeydelivery"',
            ]
          : i === 5
            ? ['#EXT-X-KEY:METHOD=NONE']
            : [],
      ),
    ),
  ),
  'cue out without duration': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) => seg(i, i === 3 ? ['#EXT-X-CUE-OUT'] : [])),
  ),
  'cue out attribute form': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) => seg(i, i === 3 ? ['#EXT-X-CUE-OUT:DURATION=120'] : [])),
  ),
  'cont slash form': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) => seg(i, i === 3 ? ['#EXT-X-CUE-OUT-CONT:6/60'] : [])),
  ),
  'bare cont': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) =>
      seg(i, i === 2 ? ['#EXT-X-CUE-OUT:60'] : i === 3 ? ['#EXT-X-CUE-OUT-CONT'] : []),
    ),
  ),
  'pdt after extinf': joinLines([
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:6',
    ...Array.from({ length: 20 }, (_, i) => [
      '#EXTINF:6.0,',
      `#EXT-X-PROGRAM-DATE-TIME:${new Date(Date.UTC(2026, 0, 1) + i * 6000).toISOString()}`,
      `/s${i}.ts`,
    ]).flat(),
  ]),
  // Tags that share their first letters with PDT and cue tags: the scan only marks them as candidates.
  'look-alike tags': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) =>
      seg(
        i,
        i === 2
          ? ['#EXT-X-CUE-OUT:30', '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z']
          : i === 9
            ? ['#EXT-X-PROXIED:YES', '#EXT-X-CUSTOM-CUE:1']
            : [],
      ),
    ),
  ),
  'no tag that decides the kind in the header': build(
    ['#EXT-X-VERSION:3'],
    Array.from({ length: 20 }, (_, i) => seg(i)),
  ),
  'a master tag in the first segment': build(
    ['#EXT-X-VERSION:3'],
    Array.from({ length: 20 }, (_, i) => seg(i, i === 0 ? ['#EXT-X-SESSION-DATA:DATA-ID="x",VALUE="y"'] : [])),
  ),
  // Found by test/fuzz: with two EXTINF tags in a segment the last one counts (the reference overwrites); the fast path took the first.
  'two EXTINF in a segment': build(
    ['#EXT-X-TARGETDURATION:10'],
    Array.from({ length: 20 }, (_, i) => ['#EXTINF:10,', '#EXTINF:1,', `/s${i}.ts`]),
  ),
  // Found by test/fuzz: durations that add up to exactly 30 s one way and to 29.999… the other (float addition order).
  'window at exactly three target durations': build(
    ['#EXT-X-TARGETDURATION:10'],
    [10, 9.995, 4.004, 0.001, 6, 6, 0.001, 0.001].map((d, i) => [`#EXTINF:${d},`, `/s${i}.ts`]),
  ),
  // Found by test/fuzz: tags whose names only start like ENDLIST, SKIP or a cue tag are other tags to the reference.
  'look-alike ENDLIST': build(
    ['#EXT-X-TARGETDURATION:6'],
    [...Array.from({ length: 20 }, (_, i) => seg(i)), ['#EXT-X-ENDLIST\u0000']],
  ),
  'look-alike SKIP and CUE-IN': build(
    ['#EXT-X-TARGETDURATION:6'],
    Array.from({ length: 20 }, (_, i) =>
      seg(i, i === 2 ? ['#EXT-X-CUE-OUT:120'] : i === 5 ? ['#EXT-X-CUE-INX', '#EXT-X-SKIPPED'] : []),
    ),
  ),
  'll-hls tail': build(
    ['#EXT-X-TARGETDURATION:4', '#EXT-X-PART-INF:PART-TARGET=1', '#EXT-X-MEDIA-SEQUENCE:10'],
    [
      ...Array.from({ length: 20 }, (_, i) => seg(i)),
      [
        '#EXT-X-PART:DURATION=1,URI="/p1.mp4"',
        '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="/p2.mp4"',
        '#EXT-X-RENDITION-REPORT:URI="/r.m3u8"',
      ],
    ],
  ),
};

t.test('synthetic corner cases', async (t) => {
  let bad = 0;
  // The bare CONT's elapsed time is unknown to the offsets form: the reference re-states the break.
  const toReference = new Set(['bare cont']);
  for (const [name, text] of Object.entries(cases)) {
    const way = trimWay(() => (bad += same(t, text, name)));
    if (toReference.has(name)) t.not(way, true, `${name}: the reference for some windows`);
    else t.equal(way, true, `${name}: by offsets`);
  }
  t.equal(bad, 0);
});

t.test('trimThenRewrite (raw in, as the proxy calls it) equals rewrite then trim, masters untouched', async (t) => {
  let bad = 0;
  let n = 0;
  const live = Array.from({ length: 12 }, (_, step) =>
    livePlaylist('s', defaultShape.epochMs + (700 + step) * 6000, defaultShape),
  );
  // Raw input that is not in normalised form, at a line in the dropped part and one in the kept part.
  const lines = splitLines(live[0]!);
  const padded = ['\r', ' ', '\t', '\v', '\f', '\x01', '\u00a0', '\ufeff'].flatMap((pad) =>
    [20, lines.length - 8].flatMap((at) => [
      joinLines(lines.map((l, i) => (i === at ? l + pad : l))),
      joinLines(lines.map((l, i) => (i === at ? pad + l : l))),
      joinLines(lines.map((l, i) => (i === at ? `${l}\n${pad}` : l))),
    ]),
  );
  // A control character at a line's end makes the rewriter trim the line, Unicode whitespace at its start included.
  const at = lines.length - 8;
  const mixed = ['\u00a0', '\ufeff', '\u3000'].flatMap((lead) =>
    ['\x00', '\x01', '\x1f'].flatMap((end) => [
      joinLines(lines.map((l, i) => (i === at ? lead + l + end : l))),
      joinLines(lines.map((l, i) => (i === at - 1 ? lead + l + end : l))),
    ]),
  );
  const raws = [
    ...fixtureFiles('hls', ['.m3u8']).map((f) => fixture(f)),
    ...live,
    ...Object.values(cases),
    ...padded,
    ...mixed,
  ];
  t.equal(raws.length, 254 + live.length + Object.keys(cases).length + padded.length + mixed.length, 'playlists read');
  const wrongWay: string[] = [];
  for (const raw of raws) {
    n++;
    const whole = rewritePlaylist(raw, rules);
    // Raw media text is trimmed by offsets as it arrives unless it is not normalised, has no header
    // tag deciding its kind, has a header tag after a segment tag, or carries a master tag (the
    // scan's master test); then it is rewritten first.
    const before = textPathStats.trimRewrittenFirst;
    const rawWay =
      whole.kind !== 'media' ||
      (normalised(raw) && kindInHeader(raw) && !lateHeaderTag(raw) && !raw.includes('\n#EXT-X-STREAM-INF'));
    for (const [w, d] of combos) {
      const opts = { windowSegments: w, delaySegments: d };
      const expected = whole.kind === 'media' ? (trimText(whole.text, opts) ?? whole.text) : whole.text;
      const hls = new PlaylistRewriter(rules);
      const got = trimThenRewrite(raw, hls, opts);
      if (got !== expected || hls.kind !== whole.kind || hls.valid !== whole.valid) {
        bad++;
        t.same(
          { text: got, kind: hls.kind, valid: hls.valid },
          { text: expected, kind: whole.kind, valid: whole.valid },
          `playlist ${n} w=${w} d=${d}`,
        );
      }
    }
    if ((textPathStats.trimRewrittenFirst === before) !== rawWay) wrongWay.push(`playlist ${n}: ${raw.slice(0, 80)}`);
  }
  t.equal(bad, 0, `${n} playlists × ${combos.length} windows`);
  t.same(wrongWay, [], 'raw text rewritten first exactly when the offsets trim cannot read it');
});
