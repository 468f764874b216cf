import t from 'tap';
import {
  masterVariants,
  mediaSegments,
  readSource,
  segmentPath,
  type FetchText,
} from '../../../lib/squeeze/breaks/source.js';
import { defaultShape, livePlaylist, masterPlaylist, type LiveShape } from '../../../lib/sim/live-playlist.js';
import { fixture } from '../../helpers/fixtures.js';

t.test('segmentPath: absolute or root-relative URIs, without query or fragment', async (t) => {
  t.equal(segmentPath('https://origin.example.org/content/ev/seg_990.ts'), '/content/ev/seg_990.ts');
  t.equal(
    segmentPath('https://dai.example.com/content/ev/seg_990.ts?token=abc&x=1#frag'),
    '/content/ev/seg_990.ts',
    'query and fragment dropped',
  );
  t.equal(segmentPath('http://h:8080/content/seg.ts#t=1'), '/content/seg.ts', 'port, fragment');
  t.equal(segmentPath('HTTPS://H.EXAMPLE/Content/Seg.ts'), '/Content/Seg.ts', 'path case kept');
  t.equal(segmentPath('https://user@h.example/a/b.ts'), '/a/b.ts', 'userinfo');
  t.equal(segmentPath('/content/ev/seg_990.ts'), '/content/ev/seg_990.ts', 'root-relative');
  t.equal(
    segmentPath('/content/ev/seg_990.ts?x=https://other/y.ts'),
    '/content/ev/seg_990.ts',
    'a URL in the query does not count',
  );
  t.equal(segmentPath('https://h.example/a.ts?next=https://x/b.ts'), '/a.ts');
  t.equal(segmentPath('https://h.example/a%20b.ts'), '/a%20b.ts', 'percent-encoding kept as is');
  t.equal(segmentPath('https://h.example'), '/', 'no path');
  t.equal(segmentPath('https://h.example/'), '/');
  t.equal(segmentPath('https://h.example?x=1'), '/', 'no path, a query');
  t.equal(
    segmentPath('https://h.example?next=/a/b.ts'),
    '/',
    'a slash inside the query of a path-less URI is not the path',
  );
  // Two hosts serving the same path map to the same key: the point of keying by path.
  t.equal(
    segmentPath('https://dai.example.com/content/ev/seg_5.ts'),
    segmentPath('https://origin.example.org/content/ev/seg_5.ts'),
  );
  t.equal(
    segmentPath('https://origin.example.org/content/ev/seg_5.ts'),
    segmentPath('/content/ev/seg_5.ts'),
    'absolute and root-relative agree',
  );
});

t.test('masterVariants: stream and rendition URIs, resolved', async (t) => {
  const base = 'https://cdn.example.com/live/ev/master.m3u8?token=abc';
  const text = [
    '#EXTM3U',
    '#EXT-X-INDEPENDENT-SEGMENTS',
    '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,URI="audio/en.m3u8"',
    '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch",URI="https://audio.example.net/de.m3u8"',
    '#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"',
    '#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,AUDIO="aac"',
    'v/720p.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="aac"',
    '/root/360p.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=400000',
    '# a comment between the tag and its URI',
    '',
    '../up/240p.m3u8?x=1',
    '#EXT-X-STREAM-INF:BANDWIDTH=9000000',
    'https://other.example.org/abs/1080p.m3u8',
    '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=200000,URI="iframe/720p.m3u8"',
    '#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,AUDIO="aac"',
    'v/720p.m3u8',
    'not-a-variant.m3u8',
    '',
  ].join('\n');
  t.same(
    masterVariants(text, base),
    [
      'https://cdn.example.com/live/ev/audio/en.m3u8',
      'https://audio.example.net/de.m3u8',
      'https://cdn.example.com/live/ev/v/720p.m3u8',
      'https://cdn.example.com/root/360p.m3u8',
      'https://cdn.example.com/live/up/240p.m3u8?x=1',
      'https://other.example.org/abs/1080p.m3u8',
    ],
    'in order, deduplicated; no I-frame stream, no URI-less rendition, no stray line',
  );
  t.same(masterVariants(text.replace(/\n/g, '\r\n'), base), masterVariants(text, base), 'CRLF master');
});

t.test('masterVariants: the simulator master and a real master with I-frame streams', async (t) => {
  const dai = 'https://dai.example.com';
  t.same(masterVariants(masterPlaylist(dai, '/linear/ev', 'sid=1'), `${dai}/linear/ev/master.m3u8`), [
    `${dai}/linear/ev/audio/en.m3u8?sid=1`,
    `${dai}/linear/ev/variant/720p.m3u8?sid=1`,
    `${dai}/linear/ev/variant/360p.m3u8?sid=1`,
  ]);
  const m = masterVariants(
    fixture('hls/kuu-hls-parser/8.5-Master-Playlist-with-I-Frames.m3u8'),
    'http://example.com/master.m3u8',
  );
  t.same(m, [
    'http://example.com/low/audio-video.m3u8',
    'http://example.com/mid/audio-video.m3u8',
    'http://example.com/hi/audio-video.m3u8',
    'http://example.com/audio-only.m3u8',
  ]);
  const bipbop = masterVariants(
    fixture('hls/kuu-hls-parser/Streaming-Examples_img_bipbop_adv_example_ts_master.m3u8'),
    'https://h/x/master.m3u8',
  );
  t.equal(
    bipbop.length,
    11,
    '8 distinct variants + 3 audio renditions; the subtitle rendition is not media to squeeze',
  );
  t.notOk(
    bipbop.some((u) => u.includes('/s1/')),
    'no subtitles',
  );
  t.notOk(
    bipbop.some((u) => u.includes('iframe')),
    'no I-frame playlists',
  );
  t.same(bipbop.slice(0, 2), ['https://h/x/a1/prog_index.m3u8', 'https://h/x/v5/prog_index.m3u8']);
  t.same(bipbop.slice(-2), ['https://h/x/a2/prog_index.m3u8', 'https://h/x/a3/prog_index.m3u8']);
});

t.test('masterVariants: at most 16', async (t) => {
  const lines = ['#EXTM3U', '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="x",URI="audio.m3u8"'];
  for (let i = 0; i < 25; i++) lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${(i + 1) * 100000}`, `v${i}.m3u8`);
  const v = masterVariants(lines.join('\n'), 'https://h/m.m3u8');
  t.equal(v.length, 16);
  t.same(
    v,
    ['https://h/audio.m3u8', ...Array.from({ length: 15 }, (_, i) => `https://h/v${i}.m3u8`)],
    'the first 16 in playlist order',
  );
  t.same(masterVariants('#EXTM3U\n', 'https://h/m.m3u8'), []);
});

t.test('mediaSegments: the live simulator playlist', async (t) => {
  const now = defaultShape.epochMs + 1000 * 6000 + 500; // live edge seq 1000, window 971..1000
  const base = 'https://dai.example.com/linear/ev/variant/720p.m3u8?sid=1';
  const p = mediaSegments(livePlaylist('ev', now), base);
  t.equal(p.uri, base);
  t.equal(p.targetSec, 6);
  t.equal(p.segments.length, 30);
  const seqs = Array.from({ length: 30 }, (_, i) => 971 + i);
  const isAd = (seq: number) => seq % 20 >= 17;
  t.same(
    p.segments,
    seqs.map((seq) => {
      const uri = isAd(seq)
        ? `https://dai.example.com/linear/pod/ad_${seq % 20}_${seq}.ts`
        : `https://dai.example.com/content/ev/seg_${seq}.ts`;
      return { uri, path: new URL(uri).pathname, seq, pdtMs: defaultShape.epochMs + seq * 6000, durationSec: 6 };
    }),
    'every segment: absolute URI, path, media sequence, PDT, duration',
  );
  t.equal(p.segments.filter((s) => s.path.startsWith('/linear/pod/')).length, 6, 'two ad pods of 3 in the window');
  t.equal(p.segments[0]!.path, '/content/ev/seg_971.ts', 'root-relative content resolved against the playlist host');
});

t.test('mediaSegments: a 5.005 s live shape keeps exact PDTs', async (t) => {
  const shape: LiveShape = { ...defaultShape, segmentSec: 5.005, adEvery: 0, windowSegments: 10 };
  const now = shape.epochMs + 500 * 5005 + 1;
  const p = mediaSegments(livePlaylist('ev2', now, shape), 'https://o.example.org/ev2/index.m3u8');
  t.equal(p.targetSec, 6, 'EXT-X-TARGETDURATION rounded up');
  t.equal(p.segments.length, 10);
  t.same(
    p.segments.map((s) => s.pdtMs),
    Array.from({ length: 10 }, (_, i) => shape.epochMs + (491 + i) * 5005),
  );
  t.ok(p.segments.every((s) => s.durationSec === 5.005));
  t.same(
    p.segments.map((s) => s.path),
    Array.from({ length: 10 }, (_, i) => `/content/ev2/seg_${491 + i}.ts`),
  );
});

t.test('mediaSegments: fixtures with EXT-X-PROGRAM-DATE-TIME', async (t) => {
  // PDT on every segment, with a time-zone offset.
  const dt = mediaSegments(fixture('hls/videojs-m3u8-parser/dateTime.m3u8'), 'https://h/vod/index.m3u8');
  t.equal(dt.targetSec, 10);
  t.same(dt.segments, [
    {
      uri: 'https://h/vod/hls_450k_video.ts',
      path: '/vod/hls_450k_video.ts',
      seq: 0,
      pdtMs: Date.UTC(2016, 5, 22, 13, 20, 16, 166),
      durationSec: 10,
    },
    {
      uri: 'https://h/vod/hls_450k_video.ts',
      path: '/vod/hls_450k_video.ts',
      seq: 1,
      pdtMs: Date.UTC(2016, 5, 22, 13, 20, 26, 166),
      durationSec: 10,
    },
  ]);

  // PDT from the fourth line on: the segment before it has no time; later ones carry it forward.
  const all = mediaSegments(
    fixture('hls/carlanton-m3u8-parser/media/media-playlist-with-date-range-and-cue-out-cue-in.m3u8'),
    'https://h/live/media.m3u8',
  );
  t.equal(all.targetSec, 6);
  t.same(
    all.segments[0],
    { uri: 'https://h/live/1.ts', path: '/live/1.ts', seq: 0, pdtMs: undefined, durationSec: 6 },
    'the segment before the first PDT has no time',
  );
  const cue = { segments: all.segments.filter((s) => s.pdtMs !== undefined) };
  t.same(
    cue.segments.map((s) => s.path),
    ['/live/2.ts', '/live/3.ts', '/live/4.ts', '/live/5.ts', '/live/6.ts', '/live/7.ts', '/live/8.ts'],
  );
  const t0 = Date.UTC(2020, 5, 3, 14, 56);
  t.same(
    cue.segments.map((s) => s.pdtMs),
    [0, 1, 2, 3, 4, 5, 6].map((i) => t0 + i * 6000),
  );

  // One PDT in the header area, then fractional durations carried forward.
  const gr = mediaSegments(
    fixture('hls/grafov-m3u8/media-playlist-with-program-date-time.m3u8'),
    'https://h/a/index.m3u8',
  );
  t.equal(gr.targetSec, 15);
  const real = gr.segments.filter((s) => s.path.endsWith('.ts'));
  const start = Date.UTC(2018, 11, 31, 1, 47, 22);
  t.same(
    real.map((s) => [s.path.slice(-6), s.pdtMs, s.durationSec]),
    [
      ['000.ts', start, 14.666],
      ['001.ts', start + 14666, 13.698],
      ['002.ts', start + 14666 + 13698, 14.668],
      ['003.ts', start + 14666 + 13698 + 14668, 13.2],
    ],
  );
  t.equal(gr.segments.length, 4, 'blank lines are not segments (RFC 8216 §4.1: blank lines are ignored)');
});

t.test('mediaSegments: a source path is the key segmentPath gives the same line of a DAI manifest', async (t) => {
  // The DAI proxy turns a root-relative line into contentOrigin + line (lib/hls/uris.ts), then the
  // break board looks it up by segmentPath; the source side must produce the same key.
  const origin = 'https://origin.example.org';
  const now = defaultShape.epochMs + 1000 * 6000 + 500;
  const live = livePlaylist('ev', now);
  const src = mediaSegments(live, 'https://dai.example.com/linear/ev/variant/720p.m3u8');
  const lines = live.split('\n').filter((l) => l.startsWith('/content/'));
  t.equal(lines.length, 24);
  t.same(
    src.segments.filter((s) => s.path.startsWith('/content/')).map((s) => s.path),
    lines.map((l) => segmentPath(origin + l)),
    'ASCII paths agree',
  );
  const odd = ['/content/évé/seg 1.ts', '/content/ev/./x/../seg_2.ts'];
  const text = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:6',
    '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00Z',
    ...odd.flatMap((l) => ['#EXTINF:6,', l]),
    '',
  ].join('\n');
  const paths = mediaSegments(text, 'https://dai.example.com/v.m3u8').segments.map((s) => s.path);
  t.same(
    paths,
    odd.map((l) => segmentPath(origin + l)),
    'non-ASCII, space and dot-segment paths agree',
  );
});

t.test('mediaSegments: segments without a PDT carry no time', async (t) => {
  const text = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:4',
    '#EXTINF:4,',
    'a.ts',
    '#EXTINF:4,',
    'b.ts',
    '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:08.000Z',
    '#EXTINF:4,',
    'c.ts',
    '#EXTINF:3.5,',
    'd.ts',
    '#EXT-X-DISCONTINUITY',
    '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T01:00:00Z',
    '#EXTINF:4,',
    'e.ts',
    '',
  ].join('\n');
  const p = mediaSegments(text, 'https://h/p/i.m3u8');
  t.equal(p.targetSec, 4);
  t.same(
    p.segments.filter((s) => s.pdtMs !== undefined).map((s) => [s.path, s.pdtMs, s.durationSec]),
    [
      ['/p/c.ts', Date.UTC(2026, 0, 1, 0, 0, 8), 4],
      ['/p/d.ts', Date.UTC(2026, 0, 1, 0, 0, 12), 3.5],
      ['/p/e.ts', Date.UTC(2026, 0, 1, 1), 4],
    ],
    'a new PDT after a discontinuity wins over the carried time',
  );
  t.same(
    p.segments.slice(0, 2).map((s) => [s.path, s.seq, s.pdtMs]),
    [
      ['/p/a.ts', 0, undefined],
      ['/p/b.ts', 1, undefined],
    ],
    'segments before the first PDT are kept, untimed',
  );
  t.same(
    mediaSegments(['#EXTM3U', '#EXTINF:6,', 'a.ts', '#EXTINF:6,', 'b.ts'].join('\n'), 'https://h/x.m3u8').segments.map(
      (s) => s.pdtMs,
    ),
    [undefined, undefined],
    'no PDT at all: no times',
  );
  t.same(
    mediaSegments(
      ['#EXTM3U', '#EXT-X-PROGRAM-DATE-TIME:not a date', '#EXTINF:6,', 'a.ts'].join('\n'),
      'https://h/x.m3u8',
    ).segments[0]?.pdtMs,
    undefined,
    'an unparsable PDT is no PDT',
  );
  t.equal(mediaSegments('#EXTM3U\n', 'https://h/x.m3u8').targetSec, 6, 'target duration defaults to 6');
});

t.test('mediaSegments: CRLF line endings', async (t) => {
  const text = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:6',
    '#EXT-X-PROGRAM-DATE-TIME:2020-06-03T14:56:00Z',
    '#EXTINF:6.000,',
    'seg1.ts',
    '#EXTINF:6.000,',
    'seg2.ts',
    '',
  ].join('\r\n');
  const p = mediaSegments(text, 'https://h/a/b.m3u8');
  t.equal(p.targetSec, 6);
  t.same(
    p.segments.map((s) => [s.uri, s.pdtMs]),
    [
      ['https://h/a/seg1.ts', Date.UTC(2020, 5, 3, 14, 56)],
      ['https://h/a/seg2.ts', Date.UTC(2020, 5, 3, 14, 56, 6)],
    ],
    'CRLF playlists are valid HLS (RFC 8216 §4.1)',
  );
});

/** A fake network of playlists: text by URL, or an Error to throw; records what was asked. */
function fakeFetch(pages: Record<string, string | Error>, delayMs = 0) {
  const calls: string[] = [];
  const signals: AbortSignal[] = [];
  let open = 0;
  let maxOpen = 0;
  const fetchText: FetchText = async (url, signal) => {
    calls.push(url);
    signals.push(signal);
    open++;
    maxOpen = Math.max(maxOpen, open);
    try {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const page = pages[url];
      if (page === undefined) throw new Error(`404 ${url}`);
      if (page instanceof Error) throw page;
      return page;
    } finally {
      open--;
    }
  };
  return { fetchText, calls, signals, maxOpen: () => maxOpen };
}

t.test('readSource: master → every variant', async (t) => {
  const dai = 'https://dai.example.com';
  const now = defaultShape.epochMs + 1000 * 6000 + 500;
  const master = `${dai}/linear/ev/master.m3u8`;
  const net = fakeFetch(
    {
      [master]: masterPlaylist(dai, '/linear/ev'),
      [`${dai}/linear/ev/audio/en.m3u8`]: livePlaylist('ev-audio', now),
      [`${dai}/linear/ev/variant/720p.m3u8`]: livePlaylist('ev-720', now),
      [`${dai}/linear/ev/variant/360p.m3u8`]: livePlaylist('ev-360', now),
    },
    5,
  );
  const signal = new AbortController().signal;
  const out = await readSource(master, net.fetchText, signal);
  t.same(
    out.map((p) => p.uri),
    [`${dai}/linear/ev/audio/en.m3u8`, `${dai}/linear/ev/variant/720p.m3u8`, `${dai}/linear/ev/variant/360p.m3u8`],
    'one media playlist per variant, in master order',
  );
  t.same(
    out.map((p) => p.segments.length),
    [30, 30, 30],
  );
  t.equal(out[1]!.segments[0]!.path, '/content/ev-720/seg_971.ts');
  t.equal(net.calls.length, 4, 'master + 3 variants, no I-frame playlist');
  t.equal(net.calls[0], master);
  t.ok(
    net.signals.every((s) => s === signal),
    'the caller’s signal goes to every fetch',
  );
  t.equal(net.maxOpen(), 3, 'variants fetched together');
});

t.test('readSource: a media playlist source is read once', async (t) => {
  const now = defaultShape.epochMs + 1000 * 6000 + 500;
  const net = fakeFetch({ 'https://o.example.org/ev/index.m3u8': livePlaylist('ev', now) });
  const out = await readSource('https://o.example.org/ev/index.m3u8', net.fetchText, AbortSignal.timeout(5000));
  t.equal(out.length, 1);
  t.equal(out[0]!.uri, 'https://o.example.org/ev/index.m3u8');
  t.equal(out[0]!.segments.length, 30);
  t.same(net.calls, ['https://o.example.org/ev/index.m3u8']);
  const ws = await readSource(
    'https://h/x.m3u8',
    fakeFetch({
      'https://h/x.m3u8': '  \n#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00Z\n#EXTINF:6,\nhttps://h/a.ts\n',
    }).fetchText,
    AbortSignal.timeout(5000),
  );
  t.equal(ws[0]!.segments.length, 1, 'leading whitespace before #EXTM3U tolerated');
});

t.test('readSource: a failing variant is skipped', async (t) => {
  const now = defaultShape.epochMs + 1000 * 6000 + 500;
  const master = [
    '#EXTM3U',
    '#EXT-X-STREAM-INF:BANDWIDTH=1',
    'a.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=2',
    'b.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=3',
    'c.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=4',
    'd.m3u8',
  ].join('\n');
  const net = fakeFetch({
    'https://h/m.m3u8': master,
    'https://h/a.m3u8': new Error('connection reset'),
    'https://h/b.m3u8': livePlaylist('b', now),
    'https://h/d.m3u8': livePlaylist('d', now),
  });
  const out = await readSource('https://h/m.m3u8', net.fetchText, AbortSignal.timeout(5000));
  t.same(
    out.map((p) => p.uri),
    ['https://h/b.m3u8', 'https://h/d.m3u8'],
    'a throwing and a missing variant skipped',
  );
  t.equal(net.calls.length, 5, 'every variant was tried');
  const none = fakeFetch({ 'https://h/m.m3u8': master });
  t.same(
    await readSource('https://h/m.m3u8', none.fetchText, AbortSignal.timeout(5000)),
    [],
    'all variants failing: empty, not a rejection',
  );
});

t.test('readSource: a non-playlist source is rejected', async (t) => {
  for (const body of [
    '<!doctype html><html>Service Unavailable</html>',
    '',
    '{"error":"nope"}',
    'EXTM3U\n',
    '#EXT-X-VERSION:3\n#EXTM3U\n',
  ]) {
    const net = fakeFetch({ 'https://h/m.m3u8': body });
    await t.rejects(
      readSource('https://h/m.m3u8', net.fetchText, AbortSignal.timeout(5000)),
      /not an HLS playlist/,
      JSON.stringify(body.slice(0, 20)),
    );
    t.equal(net.calls.length, 1, 'nothing else fetched');
  }
  const failing = fakeFetch({ 'https://h/m.m3u8': new Error('upstream 503') });
  await t.rejects(
    readSource('https://h/m.m3u8', failing.fetchText, AbortSignal.timeout(5000)),
    /upstream 503/,
    'a failing source fetch rejects',
  );
});

t.test(
  'mediaSegments: a break anchor places segments without PDT by media sequence (the hot path’s rule)',
  async (t) => {
    const shape: LiveShape = { ...defaultShape, segmentSec: 6, adEvery: 0, windowSegments: 10, pdt: false };
    const now = shape.epochMs + 100 * 6000 + 1; // live edge 100, window 91..100
    const text = livePlaylist('np', now, shape);
    t.same(
      mediaSegments(text, 'https://o.example.org/np/index.m3u8').segments.map((s) => s.pdtMs),
      Array(10).fill(undefined),
      'no anchor: no times',
    );
    const startMs = Date.UTC(2030, 0, 1);
    const p = mediaSegments(text, 'https://o.example.org/np/index.m3u8', { startSeq: 95, startMs });
    t.same(
      p.segments.map((s) => [s.seq, s.pdtMs]),
      Array.from({ length: 10 }, (_, i) => [91 + i, 91 + i < 95 ? undefined : startMs + (91 + i - 95) * 6000]),
      'from the anchor on: its time plus the accumulated EXTINF durations',
    );
    const slid = mediaSegments(text, 'https://o.example.org/np/index.m3u8', { startSeq: 80, startMs });
    t.equal(
      slid.segments[0]!.pdtMs,
      startMs + 11 * 6000,
      'an anchor before the window: the missing segments at the mean EXTINF',
    );
  },
);
