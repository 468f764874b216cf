import t from 'tap';
import { trimLiveWindow, joinLines, rewritePlaylist, splitLines } from '../../lib/hls/index.js';
import { livePlaylist, defaultShape, type LiveShape } from '../../lib/sim/live-playlist.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { reparse } from './reparse.js';

const lines = (text: string) => text.split('\n').filter((l) => l.trim());
const uris = (ls: string[]) => ls.filter((l) => !l.startsWith('#'));

function plain(n: number, extra: (i: number) => string[] = () => [], header: string[] = []): string[] {
  const out = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:6', '#EXT-X-MEDIA-SEQUENCE:100', ...header];
  for (let i = 1; i <= n; i++) out.push(...extra(i), '#EXTINF:6.0,', `seg${i}.ts`);
  return out;
}

t.test('30 segments, WindowsSegs 10, delay 2 → segments 19–28', async (t) => {
  const out = trimLiveWindow(plain(30), { windowSegments: 10, delaySegments: 2 });
  t.same(
    uris(out),
    Array.from({ length: 10 }, (_, i) => `seg${19 + i}.ts`),
  );
  const parsed = reparse(joinLines(out));
  t.equal(parsed.mediaSequence, 118, 'media sequence advanced by the 18 dropped');
  t.equal(parsed.segments.length, 10);
});

t.test('WindowsSegs 0: only the last LiveEdgeDelaySegments are removed', async (t) => {
  const src = plain(30);
  const out = trimLiveWindow(src, { windowSegments: 0, delaySegments: 3 });
  t.same(
    uris(out),
    Array.from({ length: 27 }, (_, i) => `seg${1 + i}.ts`),
  );
  t.equal(reparse(joinLines(out)).mediaSequence, 100, 'head untouched');
  t.same(out, src.slice(0, src.length - 6), 'pure string trimming of the tail');
  t.same(trimLiveWindow(src, { windowSegments: 0, delaySegments: 0 }), src, 'no-op');
});

t.test('never below three target durations of content', async (t) => {
  t.same(uris(trimLiveWindow(plain(30), { windowSegments: 1, delaySegments: 0 })), [
    'seg28.ts',
    'seg29.ts',
    'seg30.ts',
  ]);
  t.same(uris(trimLiveWindow(plain(4), { windowSegments: 0, delaySegments: 3 })), ['seg1.ts', 'seg2.ts', 'seg3.ts']);
});

t.test('EXT-X-ENDLIST and EVENT playlists keep their head', async (t) => {
  const vod = [...plain(30), '#EXT-X-ENDLIST'];
  t.same(trimLiveWindow(vod, { windowSegments: 5, delaySegments: 2 }), vod);
  const event = plain(30, () => [], ['#EXT-X-PLAYLIST-TYPE:EVENT']);
  t.equal(uris(trimLiveWindow(event, { windowSegments: 5, delaySegments: 2 })).length, 28);
});

t.test('discontinuities, map, key and program date-time are carried to the new head', async (t) => {
  const src = plain(20, (i) => {
    const extra: string[] = [];
    if (i === 1)
      extra.push(
        '#EXT-X-MAP:URI="init1.mp4"',
        '#EXT-X-KEY:METHOD=AES-128,URI="k1"',
        '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z',
      );
    if (i === 3 || i === 6) extra.push('#EXT-X-DISCONTINUITY');
    if (i === 6) extra.push('#EXT-X-MAP:URI="init2.mp4"');
    if (i === 12) extra.push('#EXT-X-DISCONTINUITY');
    return extra;
  });
  const out = trimLiveWindow(src, { windowSegments: 10, delaySegments: 0 });
  const text = joinLines(out);
  t.match(text, /#EXT-X-MEDIA-SEQUENCE:110\n#EXT-X-DISCONTINUITY-SEQUENCE:2\n/);
  const head = out.slice(out.indexOf('#EXT-X-DISCONTINUITY-SEQUENCE:2') + 1, out.indexOf('seg11.ts') + 1);
  t.same(head, [
    '#EXT-X-MAP:URI="init2.mp4"',
    '#EXT-X-KEY:METHOD=AES-128,URI="k1"',
    '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:01:00.000Z',
    '#EXTINF:6.0,',
    'seg11.ts',
  ]);
  const parsed = reparse(text);
  t.equal(parsed.discontinuitySequence, 2);
  t.equal(parsed.segments[0]!.map?.uri, 'init2.mp4');
  t.equal(parsed.segments[0]!.key?.uri, 'k1');
  t.equal(parsed.segments[1]!.discontinuity, true, 'seg12 keeps its own discontinuity');
});

t.test('a break in progress at the new head is still signalled', async (t) => {
  const src = plain(20, (i) =>
    i === 8
      ? ['#EXT-X-CUE-OUT:30']
      : i > 8 && i < 13
        ? [`#EXT-X-CUE-OUT-CONT:ElapsedTime=${(i - 8) * 6},Duration=30`]
        : i === 13
          ? ['#EXT-X-CUE-IN']
          : [],
  );
  const cut = (w: number) => trimLiveWindow(src, { windowSegments: w, delaySegments: 0 });
  // head at seg11: seg11 has its own CONT tag: nothing added
  t.equal(cut(10).filter((l) => l.startsWith('#EXT-X-CUE-OUT')).length, 2);
  const noCont = plain(20, (i) => (i === 8 ? ['#EXT-X-CUE-OUT:30'] : i === 13 ? ['#EXT-X-CUE-IN'] : []));
  const out = trimLiveWindow(noCont, { windowSegments: 10, delaySegments: 0 });
  t.equal(out[out.indexOf('#EXT-X-MEDIA-SEQUENCE:110') + 1], '#EXT-X-CUE-OUT-CONT:ElapsedTime=18,Duration=30');
  const after = trimLiveWindow(noCont, { windowSegments: 5, delaySegments: 0 });
  t.notOk(
    after.some((l) => l.startsWith('#EXT-X-CUE')),
    'break over before the head: nothing added',
  );
});

t.test('live DAI-shaped playlists stay valid for every window and delay', async (t) => {
  const shape: LiveShape = { ...defaultShape, windowSegments: 60 };
  for (let step = 0; step < 40; step++) {
    const now = shape.epochMs + (1000 + step * 7) * 6000 + 1234;
    const src = lines(livePlaylist('s', now, shape));
    const full = reparse(joinLines(src));
    for (const [w, d] of [
      [10, 2],
      [5, 0],
      [0, 3],
      [30, 4],
      [59, 1],
    ] as const) {
      const out = reparse(joinLines(trimLiveWindow(src, { windowSegments: w, delaySegments: d })));
      const remaining = full.segments.length - d;
      const kept = w > 0 && w < remaining ? w : remaining;
      if (out.segments.length !== kept) t.fail(`w=${w} d=${d}: ${out.segments.length} segments, wanted ${kept}`);
      const dropped = remaining - kept;
      if (out.mediaSequence !== full.mediaSequence! + dropped) t.fail(`media sequence ${out.mediaSequence}`);
      // the discontinuity sequence + discontinuities before segment k must be the same in both
      const discBefore = (segs: typeof full.segments, k: number) =>
        segs.slice(0, k + 1).filter((s) => s.discontinuity).length;
      const firstUri = out.segments[0]!.uri;
      const k = full.segments.findIndex((s) => s.uri === firstUri);
      if (
        (out.discontinuitySequence ?? 0) + discBefore(out.segments, 0) !==
        (full.discontinuitySequence ?? 0) + discBefore(full.segments, k)
      )
        t.fail(`w=${w} d=${d} step=${step}: discontinuity numbering changed`);
      if (out.segments[0]!.dateTimeString !== full.segments[k]!.dateTimeString) t.fail('program date-time of the head');
    }
  }
  t.pass('checked');
});

t.test('every HLS media fixture trims to a playlist the independent parser accepts', async (t) => {
  const rules = {
    daiHost: 'https://dai.example.com',
    proxyBase: 'https://edge/dai/manifest',
    contentOrigin: 'https://origin',
    playlistUrl: 'https://dai.example.com/a/b.m3u8',
  };
  let trimmed = 0;
  const files = fixtureFiles('hls', ['.m3u8']);
  t.equal(files.length, 254, 'HLS fixtures read');
  for (const f of files) {
    const { kind, text } = rewritePlaylist(fixture(f), rules);
    const ls = splitLines(text);
    if (kind !== 'media') continue;
    const before = reparse(joinLines(ls));
    const out = trimLiveWindow(ls, { windowSegments: 3, delaySegments: 1 });
    const after = reparse(joinLines(out));
    if (before.endList || /PLAYLIST-TYPE:VOD/.test(ls.join('\n'))) {
      if (out !== ls) t.fail(`${f}: ENDLIST playlist changed`);
      continue;
    }
    trimmed++;
    if (after.segments.length > before.segments.length) t.fail(`${f}: grew`);
    if (new Set(before.segments.map((s) => s.uri)).size !== before.segments.length) continue; // byte-range playlists: covered below
    const firstIndex = before.segments.findIndex((s) => s.uri === after.segments[0]?.uri);
    if (after.segments.length && (after.mediaSequence ?? 0) !== (before.mediaSequence ?? 0) + firstIndex)
      t.fail(`${f}: media sequence ${after.mediaSequence} vs ${(before.mediaSequence ?? 0) + firstIndex}`);
  }
  t.ok(trimmed > 5, `${trimmed} live fixtures trimmed`);
});

t.test('a byte range that continued a dropped segment is made explicit', async (t) => {
  const src = ['#EXTM3U', '#EXT-X-TARGETDURATION:4', '#EXT-X-VERSION:4'];
  for (let i = 0; i < 10; i++)
    src.push('#EXTINF:4,', i === 0 ? '#EXT-X-BYTERANGE:100@0' : '#EXT-X-BYTERANGE:100', 'all.ts');
  const out = trimLiveWindow(src, { windowSegments: 4, delaySegments: 0 });
  t.equal(out.filter((l) => l === 'all.ts').length, 4);
  t.equal(
    out.find((l) => l.startsWith('#EXT-X-BYTERANGE')),
    '#EXT-X-BYTERANGE:100@600',
  );
});
