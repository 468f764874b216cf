/** The content's ladder profile (lib/stitch/profile.ts) and the slate cut (lib/stitch/slate.ts), pure. */
import t from 'tap';
import { dashProfile, hlsProfile, profileKey } from '../../lib/stitch/profile.js';
import { slateHls, slateMpd, sourceSeconds } from '../../lib/stitch/slate.js';
import { vod } from '../helpers/stitch-checks.js';

const BASE = 'https://origin.example.com/vod/';

function source(master: string, playlists: Record<string, string>) {
  return {
    url: `${BASE}master.m3u8`,
    master,
    playlists: new Map(Object.entries(playlists).map(([k, v]) => [BASE + k, v])),
  };
}

t.test('HLS: muxed TS ladder', async (t) => {
  const master = `#EXTM3U
#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",FRAME-RATE=29.970
v0.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=3000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",FRAME-RATE=29.970
v1.m3u8
`;
  const p = hlsProfile(
    source(master, {
      'v0.m3u8': vod('a', [6.006, 6.006, 4], { target: 6 }),
      'v1.m3u8': vod('b', [6.006, 6.006, 4], { target: 6 }),
    }),
  )!;
  t.match(p, {
    protocol: 'hls',
    container: 'ts',
    video: 'avc',
    fps: 29.97,
    rungs: [
      { width: 640, height: 360, bandwidth: 800000, codecs: 'avc1.4d401e,mp4a.40.2' },
      { width: 1280, height: 720, bandwidth: 3000000 },
    ],
    audio: { codecs: 'mp4a.40.2', channels: 2, sampleRate: 48000, demuxed: false },
  });
  t.equal(p.segmentSec, 6, 'the segment length never exceeds the target duration (6.006 → 6)');
  t.equal(profileKey(p), profileKey(structuredClone(p)), 'the key depends on the profile only');
  t.not(profileKey(p), profileKey({ ...p, segmentSec: 4 }));
});

t.test('HLS: fMP4 with demuxed audio; codecs we cannot encode', async (t) => {
  const master = `#EXTM3U
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",CHANNELS="6",URI="a.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1920x1080,CODECS="hvc1.1.6.L120.90,ec-3",AUDIO="aud"
v.m3u8
`;
  const fmp4 = vod('s', [4, 4], { head: ['#EXT-X-MAP:URI="init.mp4"'] });
  const p = hlsProfile(source(master, { 'v.m3u8': fmp4, 'a.m3u8': fmp4 }))!;
  t.match(p, {
    container: 'fmp4',
    video: 'hevc',
    segmentSec: 4,
    audio: { codecs: 'ec-3', channels: 6, demuxed: true, language: 'en' },
  });
  const av1 = master.replace('hvc1.1.6.L120.90', 'av01.0.08M.08');
  t.equal(hlsProfile(source(av1, { 'v.m3u8': fmp4 })), undefined, 'AV1 content: nothing to condition to');
});

t.test('DASH: video rungs, audio attributes, segment length', async (t) => {
  const mpd = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT30S"><Period>
<AdaptationSet mimeType="video/mp4" frameRate="25"><SegmentTemplate timescale="90000" duration="180000" media="$Number$.m4s"/>
<Representation id="1" width="960" height="540" bandwidth="1500000" codecs="avc1.64001f"/></AdaptationSet>
<AdaptationSet mimeType="audio/mp4" lang="fr"><Representation id="2" bandwidth="96000" codecs="mp4a.40.2" audioSamplingRate="44100">
<AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="1"/></Representation></AdaptationSet>
</Period></MPD>`;
  t.match(dashProfile(mpd), {
    protocol: 'dash',
    container: 'fmp4',
    video: 'avc',
    fps: 25,
    segmentSec: 2,
    rungs: [{ width: 960, height: 540, bandwidth: 1500000 }],
    audio: { sampleRate: 44100, channels: 1, language: 'fr', demuxed: true },
  });
  t.equal(dashProfile('<MPD xmlns="urn:mpeg:dash:schema:mpd:2011"><Period/></MPD>'), undefined, 'no video: no profile');
});

t.test('slate cut to the gap', async (t) => {
  const master =
    '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=2x2\nr0.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2,RESOLUTION=4x4\nr1.m3u8\n';
  const slate = source(master, {
    'r0.m3u8': vod('x', [2, 2, 2, 2], { target: 2 }),
    'r1.m3u8': vod('y', [2, 2, 2, 2], { target: 2 }),
  });
  t.equal(sourceSeconds(slate), 8);
  const cut = slateHls(slate, 3.2);
  t.equal(cut.seconds, 4, 'whole segments nearest the gap');
  for (const text of cut.source.playlists.values()) {
    t.equal([...text.matchAll(/^#EXTINF/gm)].length, 2);
    t.match(text, /#EXT-X-ENDLIST\n$/);
  }
  t.equal(slateHls(slate, 0.6).seconds, 2, 'at least one segment');
  t.equal(slateHls(slate, 30).seconds, 8, 'a slate shorter than the gap plays once');
  const mpd = '<MPD mediaPresentationDuration="PT8S"><Period id="0" start="PT0.0S"></Period></MPD>';
  const m = slateMpd(mpd, 5, 2);
  t.equal(m.seconds, 6);
  t.equal(m.mpd, '<MPD mediaPresentationDuration="PT6S"><Period id="0" start="PT0.0S" duration="PT6S"></Period></MPD>');
  t.equal(sourceSeconds(m.mpd), 6);
});
