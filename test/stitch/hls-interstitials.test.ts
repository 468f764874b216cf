import t from 'tap';
import type { Test } from 'tap';
import { interstitialHls, type InterstitialHls } from '../../lib/stitch/hls/interstitials.js';
import { StitchError } from '../../lib/stitch/errors.js';
import type { HlsPodInput, HlsSource } from '../../lib/stitch/hls/stitch.js';
import { checkInterstitials, dateRangeAttrs, folder, media, vod } from '../helpers/stitch-checks.js';

const EPOCH = Date.parse('2026-11-25T07:00:00.000Z');
const CACHE = 'https://svc.example/stitch/cache/abcdefghijklmnop';

function run(content: HlsSource, pods: HlsPodInput[]): InterstitialHls {
  return interstitialHls(content, pods, {
    epochMs: EPOCH,
    assetListUrl: (n) => `${CACHE}/assets/${n}.json`,
    assetListFile: (n) => `assets/${n}.json`,
  });
}

/** The check's inputs from a result: asset lists by URL, pods by content offset. */
function check(t: Test, content: HlsSource, result: InterstitialHls): void {
  checkInterstitials(t, {
    content,
    master: result.master,
    playlists: result.playlists,
    assetLists: new Map([...result.assetLists].map(([file, json]) => [`${CACHE}/${file}`, json])),
    pods: result.pods,
  });
}

const dateRanges = (text: string) => text.split('\n').filter((l) => l.startsWith('#EXT-X-DATERANGE:'));

t.test('eyevinn muxed TS: pre, mid and post roll as interstitials, the content as it is', async (t) => {
  const content = folder('hls/eyevinn-hls-splice/hls1', 'https://origin.example/vod/hls1/');
  const ad = folder('hls/eyevinn-hls-splice/ad1', 'https://ads.example/ad1/');
  const result = run(content, [
    { id: 'preroll', offsetSec: 0, ads: [{ id: 'a', source: ad }] },
    {
      id: 'midroll-1',
      offsetSec: 20,
      ads: [
        { id: 'a', source: ad },
        { id: 'b', source: ad },
      ],
    },
    { id: 'postroll', offsetSec: 1e9, ads: [{ id: 'a', source: ad }] },
  ]);
  t.same(result.skipped, []);
  const adSec = result.pods[0]!.duration;
  t.equal(adSec, 15, 'the ad lasts as its first variant (5 × 3 s)');
  t.same(
    result.pods.map((p) => [p.ids, p.contentOffset, p.start, p.duration]),
    [
      [['preroll'], 0, 0, adSec],
      [['midroll-1'], 27, 27, 2 * adSec],
      [['postroll'], result.contentDuration, result.contentDuration, adSec],
    ],
    'the mid-roll at the boundary the inline stitcher would use (27 s); times on the content timeline',
  );
  t.same(
    result.pods[1]!.ads.map((a) => [a.id, a.start]),
    [
      ['a', 27],
      ['b', 27 + adSec],
    ],
    'ads follow one another from the break',
  );
  check(t, content, result);
  const v0 = result.playlists.get('v0.m3u8')!;
  t.match(v0, /^#EXT-X-PROGRAM-DATE-TIME:2026-11-25T07:00:00\.000Z$/m, 'a PROGRAM-DATE-TIME from the epoch');
  const [pre, mid, post] = dateRanges(v0).map(dateRangeAttrs);
  t.match(pre, {
    ID: 'preroll',
    CLASS: 'com.apple.hls.interstitial',
    'START-DATE': '2026-11-25T07:00:00.000Z',
    CUE: 'PRE',
    'X-ASSET-LIST': `${CACHE}/assets/1.json`,
  });
  t.match(mid, { ID: 'midroll-1', 'START-DATE': '2026-11-25T07:00:27.000Z', 'X-ASSET-LIST': `${CACHE}/assets/2.json` });
  t.notOk(mid!['CUE'], 'no CUE on a mid-roll');
  t.match(post, { ID: 'postroll', CUE: 'POST' });
  t.same(JSON.parse(result.assetLists.get('assets/2.json')!), {
    ASSETS: [
      { URI: 'https://ads.example/ad1/master.m3u8', DURATION: adSec },
      { URI: 'https://ads.example/ad1/master.m3u8', DURATION: adSec },
    ],
  });
  t.notMatch(v0, /DISCONTINUITY|CUE-OUT/, 'nothing spliced');
  const lines = v0.split('\n');
  t.ok(
    lines.indexOf(dateRanges(v0)[1]!) === lines.indexOf('https://origin.example/vod/hls1/segment4_0_av.ts') - 2,
    'the mid-roll DATERANGE stands before the segment at 27 s',
  );
});

t.test('demuxed CMAF: the same DATERANGEs in the video and audio playlists, MAP URIs absolute', async (t) => {
  const content = folder('hls/eyevinn-hls-splice/demux_n_cmaf/hls1', 'https://origin.example/vod/cmaf/', (s) =>
    s.replace('AUDIO="mono"', 'AUDIO="stereo"'),
  );
  const ad = folder('hls/eyevinn-hls-splice/demux_n_cmaf/ad1', 'https://ads.example/cmaf/', (s) =>
    s.replace(/_av\.m3u8/g, '_v.m3u8'),
  );
  const result = run(content, [{ id: 'mid', offsetSec: 10, ads: [{ id: 'a', source: ad }] }]);
  t.same(result.skipped, []);
  check(t, content, result);
  t.match(result.playlists.get('a0.m3u8')!, /#EXT-X-MAP:URI="https:\/\/origin\.example\/vod\/cmaf\/[^"]+"/);
  t.match(result.master, /URI="a0\.m3u8"/, 'the master names the served playlists');
});

t.test('content with PROGRAM-DATE-TIME: its dates, no epoch', async (t) => {
  const start = Date.parse('2025-01-01T10:00:00.000Z');
  const url = 'https://origin.example/pdt/index.m3u8';
  const content = media(
    url,
    vod('seg', Array(10).fill(6), {
      perSegment: (i) => (i === 0 ? [`#EXT-X-PROGRAM-DATE-TIME:${new Date(start).toISOString()}`] : []),
    }),
  );
  const result = run(content, [
    {
      id: 'mid',
      offsetSec: 13,
      ads: [{ id: 'a', source: media('https://ads.example/a.m3u8', vod('https://cdn.ads.example/a', [5, 5])) }],
    },
  ]);
  check(t, content, result);
  const text = result.playlists.get('v0.m3u8')!;
  t.equal(
    text.split('\n').filter((l) => l.startsWith('#EXT-X-PROGRAM-DATE-TIME')).length,
    1,
    'no second PROGRAM-DATE-TIME',
  );
  t.equal(
    dateRangeAttrs(dateRanges(text)[0]!)['START-DATE'],
    '2025-01-01T10:00:18.000Z',
    'cue 13 s → the boundary at 18 s, dated by the content',
  );
});

t.test('ads that cannot play are left out; pods on one boundary merge; plain ids only', async (t) => {
  const url = 'https://origin.example/x/index.m3u8';
  const content = media(url, vod('seg', Array(5).fill(4)));
  const good = media('https://ads.example/good.m3u8', vod('https://cdn.ads.example/g', [6, 4]));
  const live = media('https://ads.example/live.m3u8', '#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n');
  const result = run(content, [
    { id: 'a b"c', offsetSec: 5, ads: [{ id: 'g', source: good }] },
    { id: 'second', offsetSec: 7, ads: [{ id: 'g2', source: good }] },
    { id: 'dead', offsetSec: 15, ads: [{ id: 'l', source: live }] },
  ]);
  t.same(
    result.skipped.map((s) => [s.podId, s.adId]),
    [['dead', 'l']],
    'a live ad playlist is left out',
  );
  t.same(
    result.pods.map((p) => [p.ids, p.contentOffset, p.duration]),
    [[['a b"c', 'second'], 8, 20]],
    'two cue points before one boundary: one pod',
  );
  const line = dateRanges(result.playlists.get('v0.m3u8')!)[0]!;
  t.equal(dateRangeAttrs(line)['ID'], 'break-1', 'an id unfit for a quoted string is replaced by the break number');
  check(t, content, result);
  t.same(
    run(content, [])
      .playlists.get('v0.m3u8')!
      .match(/DATERANGE/g),
    null,
    'no pods: no DATERANGE',
  );
});

t.test('a post-roll and a mid-roll at the last segment: each DATERANGE on its own segment', async (t) => {
  const content = media('https://origin.example/y/index.m3u8', vod('seg', [4, 4, 4]));
  const ad = media('https://ads.example/a.m3u8', vod('https://cdn.ads.example/a', [5]));
  const result = run(content, [
    { id: 'mid', offsetSec: 8, ads: [{ id: 'a', source: ad }] },
    { id: 'post', offsetSec: 12, ads: [{ id: 'a', source: ad }] },
  ]);
  check(t, content, result);
});

t.test('unusable content is refused', async (t) => {
  t.throws(() => run(media('https://origin.example/z.m3u8', '<html/>'), []), StitchError);
  t.throws(
    () => run(media('https://origin.example/z.m3u8', '#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n'), []),
    StitchError,
    'not VOD',
  );
});
