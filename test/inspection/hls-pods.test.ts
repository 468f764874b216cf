import t from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { findHlsPods, isMasterPlaylist, masterRenditions } from '../../lib/inspection/hls-pods.js';
import { livePlaylist, defaultShape } from '../../lib/sim/live-playlist.js';

const root = new URL('../fixtures/hls/', import.meta.url).pathname;
const fixture = (p: string) => readFileSync(path.join(root, p), 'utf8');
const uris = (pods: ReturnType<typeof findHlsPods>) => pods.map((p) => p.segments.map((s) => s.uri));

t.test('cue-out/cont/in with OATCLS: the two segments between cue-out and cue-in', async (t) => {
  const pods = findHlsPods(fixture('grafov-m3u8/media-playlist-with-oatcls-scte35.m3u8'));
  t.same(uris(pods), [['media0.ts', 'media1.ts']]);
  t.equal(pods[0]!.startSec, 0, 'no PDT: offset on the playlist');
  t.same(
    pods[0]!.segments.map((s) => s.sequence),
    [0, 1],
  );
});

t.test('MediaTailor: a 20.020 s cue-out ends at its cue-in, not at the rounded duration', async (t) => {
  const pods = findHlsPods(fixture('aws-mediatailor-docs/origin-media-cue-out-oatcls.m3u8'));
  t.equal(pods.length, 1);
  t.same(
    pods[0]!.segments.map((s) => s.sequence),
    [8779960, 8779961, 8779962, 8779963, 8779964],
  );
  t.equal(pods[0]!.startSec, 6.006 + 6.006 + 5.372);
});

t.test(
  'DATERANGE SCTE35-OUT/IN: the ad segments; the start in the presentation, and the PDT (epoch seconds) beside it',
  async (t) => {
    const pods = findHlsPods(fixture('kuu-hls-parser/8.10-EXT-X-DATERANGE-carrying-SCTE-35-tags.m3u8'));
    t.same(uris(pods), [['http://ads.example.com/ad-01.ts', 'http://ads.example.com/ad-02.ts']]);
    // Issue 25: start_time_sec meant epoch seconds in HLS and seconds into the presentation in DASH.
    t.equal(pods[0]!.startSec, 60, 'two 30 s segments before it');
    t.equal(pods[0]!.startEpochSec, Date.parse('2014-03-05T11:15:00.000Z') / 1000);
  },
);

t.test('a cue-out without cue-in: the pod runs to its announced duration, or the end', async (t) => {
  t.same(uris(findHlsPods(fixture('kuu-hls-parser/8.11-EXT-X-CUE-OUT-Media-Playlist.m3u8'))), [
    ['http://media.example.com/second.ts', 'http://media.example.com/third.ts'],
  ]);
  const text = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:6',
    '#EXTINF:6,',
    'c0.ts',
    '#EXT-X-CUE-OUT:12',
    '#EXTINF:6,',
    'a0.ts',
    '#EXTINF:6,',
    'a1.ts',
    '#EXTINF:6,',
    'c1.ts',
    '',
  ].join('\n');
  t.same(uris(findHlsPods(text)), [['a0.ts', 'a1.ts']], 'ends at 12 s');
  const cont = [
    '#EXTM3U',
    '#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=12',
    '#EXTINF:6,',
    'a1.ts',
    '#EXT-X-CUE-IN',
    '#EXTINF:6,',
    'c1.ts',
    '',
  ].join('\n');
  t.same(uris(findHlsPods(cont)), [['a1.ts']], 'a window that starts inside a break opens the pod at its CONT');
});

t.test(
  'inline pods (no cue tags): runs of ad-host segments, discontinuities inside a pod do not split it',
  async (t) => {
    const shape = { ...defaultShape, adEvery: 10, adSegments: 3, windowSegments: 30 };
    const withCues = livePlaylist('v', shape.epochMs + 100 * 6000, shape);
    const inline = withCues
      .split('\n')
      .filter((l) => !l.startsWith('#EXT-X-CUE'))
      .join('\n');
    const isAdUri = (u: string) => u.startsWith(`${shape.adHost}/`);
    const cued = findHlsPods(withCues);
    t.equal(cued.length, 3, 'three pods in the window');
    t.same(findHlsPods(inline, { isAdUri }), cued, 'the same pods, found by host');
    t.same(findHlsPods(inline), [], 'no ad-host rule: none');
    const twoAds = [
      '#EXTM3U',
      '#EXTINF:6,',
      '/c0.ts',
      '#EXT-X-DISCONTINUITY',
      '#EXTINF:6,',
      'https://dai.example.com/a/1.ts',
      '#EXT-X-DISCONTINUITY',
      '#EXTINF:6,',
      'https://dai.example.com/b/1.ts',
      '#EXT-X-DISCONTINUITY',
      '#EXTINF:6,',
      '/c1.ts',
      '',
    ].join('\n');
    t.same(uris(findHlsPods(twoAds, { isAdUri })), [
      ['https://dai.example.com/a/1.ts', 'https://dai.example.com/b/1.ts'],
    ]);
  },
);

t.test('a pod manifest: the whole playlist is one pod', async (t) => {
  const pods = findHlsPods(fixture('grafov-m3u8/media-playlist-with-oatcls-scte35.m3u8'), { wholePlaylist: true });
  t.equal(pods.length, 1);
  t.same(
    pods[0]!.segments.map((s) => s.uri),
    ['media0.ts', 'media1.ts', 'media2.ts'],
  );
});

t.test(
  'every cue fixture: pods only where a cue-out is, never empty, never holding the segment after a cue-in',
  async (t) => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = path.join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (name.endsWith('.m3u8')) files.push(p);
      }
    };
    walk(root);
    let withOut = 0;
    let podCount = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      const pods = findHlsPods(text);
      const hasOut =
        /#EXT-X-CUE-OUT[:\r\n]|SCTE35-OUT=|CUE-OUT=YES|TYPE="?SpliceOut/i.test(text) ||
        /#EXT-X-CUE-OUT-CONT/.test(text);
      if (hasOut) withOut++;
      if (!hasOut) t.same(pods, [], `${path.relative(root, f)}: no cue-out, no pod`);
      for (const p of pods) {
        podCount++;
        t.ok(p.segments.length > 0, `${path.relative(root, f)}: pod has segments`);
        const lines = text.split(/\r?\n/);
        for (const s of p.segments) {
          const at = lines.findIndex((l) => l.trim() === s.uri);
          const before = lines.slice(Math.max(0, at - 4), at).join('\n');
          if (/#EXT-X-CUE-IN/.test(before) && !/#EXT-X-CUE-OUT/.test(before))
            t.fail(`${path.relative(root, f)}: ${s.uri} follows a cue-in`);
        }
      }
    }
    t.equal(files.length, 254, 'HLS fixtures read');
    t.equal(withOut, 42, 'fixtures with a cue-out');
    t.ok(podCount >= withOut, `${podCount} pods`);
  },
);

t.test(
  'master renditions: variants, then audio and subtitles with URIs; no I-frame or caption entries; each URL once',
  async (t) => {
    const master = [
      '#EXTM3U',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="audio/en.m3u8"',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="b",NAME="en",URI="audio/en.m3u8"',
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",NAME="en",URI="https://cdn.example.com/subs.m3u8"',
      '#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"',
      '#EXT-X-STREAM-INF:BANDWIDTH=1000,AUDIO="a"',
      'v1.m3u8',
      '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100,URI="iframe.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=2000',
      '/abs/v2.m3u8',
      '',
    ].join('\n');
    t.ok(isMasterPlaylist(master));
    t.notOk(isMasterPlaylist(fixture('grafov-m3u8/media-playlist-with-oatcls-scte35.m3u8')));
    t.same(masterRenditions(master, 'https://dai.example.com/x/master.m3u8'), [
      { name: 'v1.m3u8', url: 'https://dai.example.com/x/v1.m3u8', bandwidth: 1000 },
      { name: '/abs/v2.m3u8', url: 'https://dai.example.com/abs/v2.m3u8', bandwidth: 2000 },
      { name: 'audio/en.m3u8', url: 'https://dai.example.com/x/audio/en.m3u8' },
      { name: 'https://cdn.example.com/subs.m3u8', url: 'https://cdn.example.com/subs.m3u8' },
    ]);
  },
);
