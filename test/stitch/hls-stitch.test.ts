import t from 'tap';
import { fixtureFiles, fixture } from '../helpers/fixtures.js';
import { stitchHls, type HlsSource } from '../../lib/stitch/hls/stitch.js';
import { StitchError } from '../../lib/stitch/errors.js';
import { parseMedia } from '../../lib/hls/media.js';
import { playlistLines } from '../../lib/stitch/hls/master.js';
import { checkStitched, folder, media, vod } from '../helpers/stitch-checks.js';

const FILLER = 'https://svc.example/stitch/filler.vtt';

const tsAd = (id: string, durations = [5, 5, 5]) =>
  media(`https://ads.example/${id}/index.m3u8`, vod(`https://cdn.ads.example/${id}/seg`, durations));

const count = (text: string, line: string) =>
  text.split('\n').filter((l) => l === line || l.startsWith(line + ':')).length;

t.test('eyevinn hls-splice muxed TS: pre, mid and post roll in both variants', async (t) => {
  const content = folder('hls/eyevinn-hls-splice/hls1', 'https://origin.example/vod/hls1/');
  const ad = folder('hls/eyevinn-hls-splice/ad1', 'https://ads.example/ad1/');
  const result = stitchHls(
    content,
    [
      { id: 'pre', offsetSec: 0, ads: [{ id: 'a', source: ad }] },
      {
        id: 'mid',
        offsetSec: 20,
        ads: [
          { id: 'a', source: ad },
          { id: 'b', source: ad },
        ],
      },
      { id: 'post', offsetSec: 1e9, ads: [{ id: 'a', source: ad }] },
    ],
    { fillerUri: FILLER },
  );
  t.same(result.skipped, []);
  t.equal(result.pods.length, 3);
  const total = parseMedia(
    playlistLines(content.playlists.get('https://origin.example/vod/hls1/index_0_av.m3u8')!),
  ).segments.reduce((a, s) => a + s.duration, 0);
  t.equal(result.contentDuration, total);
  t.same(
    result.pods.map((p) => [p.ids, p.contentOffset]),
    [
      [['pre'], 0],
      [['mid'], 27],
      [['post'], total],
    ],
    'the mid-roll waits for the segment boundary at 27 s (cue point 20 s, 9 s segments)',
  );
  const adSec = result.pods[0]!.duration;
  t.ok(adSec > 0);
  t.equal(result.pods[1]!.start, 27 + adSec, 'stitched start = content offset + earlier pods');
  t.equal(result.pods[2]!.start, total + 3 * adSec);
  checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result });
  const v0 = result.playlists.get('v0.m3u8')!;
  t.equal(
    count(v0, '#EXT-X-DISCONTINUITY'),
    4 + 2,
    'one before each of 4 ads, one before each of 2 content resumptions',
  );
  t.equal(count(v0, '#EXT-X-CUE-IN'), 2, 'no CUE-IN after the post-roll: nothing follows');
  t.match(result.master, /BANDWIDTH=4545000|BANDWIDTH=4497000/);
});

t.test('eyevinn demuxed CMAF: audio rendition matched, MAP written again after each ad', async (t) => {
  // The fixture's first variant names an audio group "mono" that does not exist (strict parsers refuse it).
  const content = folder('hls/eyevinn-hls-splice/demux_n_cmaf/hls1', 'https://origin.example/vod/cmaf/', (s) =>
    s.replace('AUDIO="mono"', 'AUDIO="stereo"'),
  );
  // The fixture's ad master names index_N_av.m3u8; its files are index_N_v.m3u8.
  const ad = folder('hls/eyevinn-hls-splice/demux_n_cmaf/ad1', 'https://ads.example/cmaf/', (s) =>
    s.replace(/_av\.m3u8/g, '_v.m3u8'),
  );
  const result = stitchHls(content, [{ id: 'mid', offsetSec: 10, ads: [{ id: 'a', source: ad }] }], {
    fillerUri: FILLER,
  });
  t.same(result.skipped, []);
  checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result });
  const v0 = playlistLines(result.playlists.get('v0.m3u8')!);
  const adFirst = v0.findIndex((l) => !l.startsWith('#') && l.includes('mock-ad-video'));
  const lastMap = v0
    .slice(0, adFirst)
    .filter((l) => l.startsWith('#EXT-X-MAP'))
    .pop();
  t.match(
    lastMap,
    /^#EXT-X-MAP:URI="https:\/\/ads\.example\/cmaf\/mock-ad-video=\d+\.m4s"$/,
    "the ad's MAP before its first segment",
  );
  const resume = v0.findIndex((l, i) => i > adFirst && l.startsWith('https://origin.example/'));
  t.ok(
    v0.slice(adFirst, resume).includes('#EXT-X-MAP:URI="https://origin.example/vod/cmaf/test-video=2500000.m4s"'),
    "the content's MAP again before the content resumes",
  );
  const a0 = result.playlists.get('a0.m3u8')!;
  t.match(a0, /mock-ad-audio=256000-1\.m4s/, 'the ad audio plays in the audio playlist');
});

t.test(
  'AES-128 content without IV: METHOD=NONE before a clear ad, the key with the original sequence number as IV after',
  async (t) => {
    const text = fixture('hls/videojs-m3u8-parser/encrypted.m3u8') + '\n#EXT-X-ENDLIST\n';
    const content = media('https://origin.example/enc/index.m3u8', text);
    const ad = tsAd('clear', [5, 5]);
    const result = stitchHls(content, [{ id: 'mid', offsetSec: 2.833, ads: [{ id: 'a', source: ad }] }], {
      fillerUri: FILLER,
    });
    checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result });
    const lines = playlistLines(result.playlists.get('v0.m3u8')!);
    const adAt = lines.findIndex((l) => l.includes('cdn.ads.example'));
    t.equal(
      lines
        .slice(0, adAt)
        .filter((l) => l.startsWith('#EXT-X-KEY'))
        .pop(),
      '#EXT-X-KEY:METHOD=NONE',
      'clear ad after METHOD=NONE',
    );
    const next = lines.findIndex((l, i) => i > adAt && l.endsWith('fileSequence52-B.ts'));
    const key = lines
      .slice(adAt, next)
      .filter((l) => l.startsWith('#EXT-X-KEY'))
      .pop();
    // fileSequence52-B is media sequence 7795 in the source: its implicit IV.
    t.equal(
      key,
      `#EXT-X-KEY:METHOD=AES-128,URI="https://priv.example.com/key.php?r=52",IV=0x${(7795).toString(16).padStart(32, '0')}`,
    );
    t.ok(
      lines.includes(
        '#EXT-X-KEY:METHOD=AES-128,URI="https://priv.example.com/key.php?r=54",IV=0x00000000000000000000014BB69D61E4',
      ),
      'an explicit IV is kept as it is',
    );
    t.equal(lines.filter((l) => l.startsWith('#EXT-X-KEY')).length > 2, true);
  },
);

t.test('byte ranges: the first content segment after an ad gets its offset', async (t) => {
  const sizes = [1000, 2000, 1500, 1200];
  const text = vod('', [4, 4, 4, 4], {
    perSegment: (i) => [i === 0 ? `#EXT-X-BYTERANGE:${sizes[0]}@0` : `#EXT-X-BYTERANGE:${sizes[i]}`],
  }).replace(/\n\d\.ts/g, '\nmovie.ts');
  const content = media('https://origin.example/br/index.m3u8', text);
  const adText = vod('', [5, 5], {
    perSegment: (i) => [i === 0 ? '#EXT-X-BYTERANGE:700@100' : '#EXT-X-BYTERANGE:800'],
  }).replace(/\n\d\.ts/g, '\nhttps://cdn.ads.example/br/ad.ts');
  const ad = media('https://ads.example/br/index.m3u8', adText);
  const result = stitchHls(content, [{ id: 'mid', offsetSec: 8, ads: [{ id: 'a', source: ad }] }], {
    fillerUri: FILLER,
  });
  checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result });
  const lines = playlistLines(result.playlists.get('v0.m3u8')!);
  t.same(
    lines.filter((l) => l.startsWith('#EXT-X-BYTERANGE')),
    [
      '#EXT-X-BYTERANGE:1000@0',
      '#EXT-X-BYTERANGE:2000',
      '#EXT-X-BYTERANGE:700@100',
      '#EXT-X-BYTERANGE:800',
      '#EXT-X-BYTERANGE:1500@3000',
      '#EXT-X-BYTERANGE:1200',
    ],
    'after the ad: 1000 + 2000 = 3000',
  );
  // The fixture's third range has no offset after another resource (invalid on its own): the offset continues the source's previous range.
  const fx = media('https://origin.example/br/fx.m3u8', fixture('hls/videojs-m3u8-parser/byteRange.m3u8'));
  const fxResult = stitchHls(fx, [{ id: 'mid', offsetSec: 20, ads: [{ id: 'a', source: ad }] }], { fillerUri: FILLER });
  t.match(fxResult.playlists.get('v0.m3u8')!, /#EXT-X-BYTERANGE:713084@1110328\n/, '522828 + 587500 = 1110328');
});

t.test(
  'fMP4 with a byte-range MAP: the content MAP returns after an fMP4 ad; a TS ad is refused for fMP4 content',
  async (t) => {
    const content = media('https://origin.example/fmp4/index.m3u8', fixture('hls/videojs-m3u8-parser/fmp4.m3u8'));
    const adText = vod('https://cdn.ads.example/f/seg', [4, 4], {
      head: ['#EXT-X-MAP:URI="https://cdn.ads.example/f/init.mp4"'],
    }).replace(/\.ts/g, '.m4s');
    const ad = media('https://ads.example/f/index.m3u8', adText);
    const first = parseMedia(playlistLines(content.master)).segments[0]!.duration;
    const result = stitchHls(
      content,
      [
        { id: 'mid', offsetSec: first, ads: [{ id: 'fmp4', source: ad }] },
        { id: 'mid2', offsetSec: first, ads: [{ id: 'ts', source: tsAd('ts') }] },
      ],
      { fillerUri: FILLER },
    );
    t.same(
      result.skipped.map((s) => [s.adId, s.reason]),
      [['ts', "the ad's container (TS) differs from the content's"]],
    );
    checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result });
    const lines = playlistLines(result.playlists.get('v0.m3u8')!);
    t.same(
      lines.filter((l) => l.startsWith('#EXT-X-MAP')),
      [
        '#EXT-X-MAP:URI="https://origin.example/fmp4/main.mp4",BYTERANGE="720@0"',
        '#EXT-X-MAP:URI="https://cdn.ads.example/f/init.mp4"',
        '#EXT-X-MAP:URI="https://origin.example/fmp4/main.mp4",BYTERANGE="720@0"',
      ],
    );
    t.ok(lines.includes('#EXT-X-BYTERANGE:5861577@5667230'));
  },
);

t.test(
  'audio and subtitles: every rendition stitched, subtitles filled, an ad longer than the content target duration',
  async (t) => {
    const base = 'https://origin.example/multi/';
    const master = [
      '#EXTM3U',
      '#EXT-X-VERSION:6',
      '#EXT-X-INDEPENDENT-SEGMENTS',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,URI="audio_en.m3u8"',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="fr",NAME="Français",URI="audio_fr.m3u8"',
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English",URI="subs_en.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"',
      'v360.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=3000000,RESOLUTION=1280x720,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"',
      'v720.m3u8',
      '',
    ].join('\n');
    const video = Array(15).fill(4);
    const content: HlsSource = {
      url: base + 'master.m3u8',
      master,
      playlists: new Map([
        [base + 'v360.m3u8', vod('v360_', video)],
        [base + 'v720.m3u8', vod('v720_', video)],
        [base + 'audio_en.m3u8', vod('en_', Array(30).fill(2))],
        [base + 'audio_fr.m3u8', vod('fr_', Array(30).fill(2))],
        [base + 'subs_en.m3u8', vod('sub_', Array(10).fill(6)).replace(/\.ts/g, '.vtt')],
      ]),
    };
    const adBase = 'https://ads.example/long/';
    const ad: HlsSource = {
      url: adBase + 'master.m3u8',
      master: [
        '#EXTM3U',
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="en",NAME="en",URI="https://cdn.ads.example/long/audio.m3u8"',
        '#EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="a"',
        'https://cdn.ads.example/long/v360.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=3500000,RESOLUTION=1280x720,CODECS="avc1.4d401f,mp4a.40.2",AUDIO="a"',
        'https://cdn.ads.example/long/v720.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=9000000,RESOLUTION=1280x720,CODECS="hvc1.1.6.L93.90,mp4a.40.2",AUDIO="a"',
        'https://cdn.ads.example/long/hevc.m3u8',
        '',
      ].join('\n'),
      playlists: new Map([
        ['https://cdn.ads.example/long/v360.m3u8', vod('https://cdn.ads.example/long/360_', [10, 10, 10])],
        ['https://cdn.ads.example/long/v720.m3u8', vod('https://cdn.ads.example/long/720_', [10, 10, 10])],
        ['https://cdn.ads.example/long/hevc.m3u8', vod('https://cdn.ads.example/long/hevc_', [10, 10, 10])],
        ['https://cdn.ads.example/long/audio.m3u8', vod('https://cdn.ads.example/long/aud_', [10, 10, 10])],
      ]),
    };
    const result = stitchHls(
      content,
      [
        { id: 'pre', offsetSec: 0, ads: [{ id: 'long', source: ad }] },
        { id: 'mid', offsetSec: 30, ads: [{ id: 'long', source: ad }] },
      ],
      { fillerUri: FILLER },
    );
    t.same(result.skipped, []);
    checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result });
    t.equal(result.playlists.size, 5, '2 variants, 2 audio, 1 subtitles');
    for (const [name, text] of result.playlists)
      t.match(text, /#EXT-X-TARGETDURATION:10\n/, `${name}: target duration of the 10 s ad segments`);
    t.match(
      result.playlists.get('v1.m3u8')!,
      /720_0\.ts/,
      'the 720p avc variant gets the 720p avc ad, not the HEVC one',
    );
    t.notMatch(result.playlists.get('v1.m3u8')!, /hevc_/);
    t.match(result.playlists.get('a1.m3u8')!, /aud_0\.ts/, 'the French audio falls back to the ad audio');
    const subs = result.playlists.get('s0.m3u8')!;
    t.equal(subs.split('\n').filter((l) => l === FILLER).length, 6, '30 s of filler per ad in ≤ 10 s pieces, two ads');
    t.match(result.master, /BANDWIDTH=3500000,RESOLUTION=1280x720/, 'BANDWIDTH covers the ad variant');
    t.match(result.master, /URI="a0\.m3u8"/);
    t.match(result.master, /URI="s0\.m3u8"/);
    t.same(
      result.pods.map((p) => [p.contentOffset, p.start, p.duration]),
      [
        [0, 0, 30],
        [32, 62, 30],
      ],
    );
  },
);

t.test('content that cannot be stitched is refused, never half-stitched', async (t) => {
  const bad =
    (master: string, playlists: Array<[string, string]> = []) =>
    () =>
      stitchHls({ url: 'https://o.example/m.m3u8', master, playlists: new Map(playlists) }, [], { fillerUri: FILLER });
  t.throws(bad('<html>'), StitchError);
  t.throws(
    bad('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n'),
    { code: 'unparseable' },
    'a missing media playlist',
  );
  t.throws(bad('#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n'), { code: 'not-vod' }, 'a live playlist');
  t.throws(bad('#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:abc,\na.ts\n#EXT-X-ENDLIST\n'), { code: 'unparseable' });
  t.throws(
    () =>
      stitchHls(media('https://o.example/m.m3u8', vod('s', Array(20).fill(4))), [], {
        fillerUri: FILLER,
        maxSegments: 10,
      }),
    { code: 'too-large' },
  );
  const ok = stitchHls(
    media('https://o.example/m.m3u8', vod('s', [4, 4])),
    [
      {
        id: 'p',
        offsetSec: 0,
        ads: [
          {
            id: 'live',
            source: media('https://a.example/l.m3u8', '#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n'),
          },
        ],
      },
    ],
    { fillerUri: FILLER },
  );
  t.same(ok.pods, [], 'a live ad playlist is left out');
  t.match(ok.skipped, [{ adId: 'live', reason: /not a VOD playlist/ }]);
});

t.test('every VOD media playlist fixture stitches with a mid-roll and a post-roll', async (t) => {
  const files = fixtureFiles('hls', ['.m3u8']);
  let used = 0;
  for (const rel of files) {
    const text = fixture(rel);
    if (!text.includes('#EXT-X-ENDLIST') || text.includes('#EXT-X-STREAM-INF') || text.includes('#EXT-X-I-FRAMES-ONLY'))
      continue;
    const lines = playlistLines(text);
    if (lines[0] !== '#EXTM3U') continue;
    const p = parseMedia(lines);
    if (
      p.segments.length < 2 ||
      p.skip ||
      p.segments.some((s) => !(s.duration > 0)) ||
      (p.playlistType && p.playlistType !== 'VOD')
    )
      continue;
    const fmp4 = p.segments.some((s) => s.map);
    const adText = fmp4
      ? vod('https://cdn.ads.example/x/seg', [6, 6], { head: ['#EXT-X-MAP:URI="https://cdn.ads.example/x/init.mp4"'] })
      : vod('https://cdn.ads.example/x/seg', [6, 6]);
    const ad = media('https://ads.example/x/index.m3u8', adText);
    const content = media(`https://origin.example/${rel}`, text);
    const mid = p.segments[0]!.duration;
    const result = stitchHls(
      content,
      [
        { id: 'mid', offsetSec: mid, ads: [{ id: 'x', source: ad }] },
        { id: 'post', offsetSec: 1e9, ads: [{ id: 'x', source: ad }] },
      ],
      { fillerUri: FILLER },
    );
    t.test(rel, async (t) => checkStitched(t, { content, ads: [ad], fillerUri: FILLER, result }));
    used++;
  }
  t.equal(used, 94, 'VOD media playlist fixtures read');
});
