import t from 'tap';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { parseIsoDuration, stitchDash, type StitchedDash } from '../../lib/stitch/dash/stitch.js';
import { StitchError } from '../../lib/stitch/errors.js';
import { checkDash } from '../helpers/stitch-checks.js';

const content = `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT60S" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
  <BaseURL>media/</BaseURL>
  <Period id="main">
    <EventStream schemeIdUri="urn:example:chapters" timescale="1"><Event presentationTime="10" id="1">chapter</Event></EventStream>
    <AdaptationSet id="1" contentType="video" mimeType="video/mp4" segmentAlignment="true">
      <SegmentTemplate timescale="90000" media="v_$RepresentationID$_$Number$.m4s" initialization="v_$RepresentationID$_init.mp4" startNumber="1">
        <SegmentTimeline><S t="0" d="360000" r="14"/></SegmentTimeline>
      </SegmentTemplate>
      <Representation id="v720" bandwidth="3000000" width="1280" height="720" codecs="avc1.4d401f"/>
      <Representation id="v360" bandwidth="800000" width="640" height="360" codecs="avc1.4d401e"/>
    </AdaptationSet>
    <AdaptationSet id="2" contentType="audio" mimeType="audio/mp4" lang="en">
      <SegmentTemplate timescale="48000" media="a_en_$Number$.m4s" initialization="a_en_init.mp4" startNumber="1">
        <SegmentTimeline><S t="0" d="96256" r="28"/><S d="93824"/></SegmentTimeline>
      </SegmentTemplate>
      <Representation id="aen" bandwidth="128000" codecs="mp4a.40.2"/>
    </AdaptationSet>
    <AdaptationSet id="3" contentType="audio" mimeType="audio/mp4" lang="fr">
      <SegmentTemplate timescale="48000" media="a_fr_$Number$.m4s" initialization="a_fr_init.mp4" duration="96000" startNumber="1"/>
      <Representation id="afr" bandwidth="128000" codecs="mp4a.40.2"/>
    </AdaptationSet>
  </Period>
</MPD>`;

const ad = (id: string) => `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT20S" minBufferTime="PT2S">
  <Period id="p0">
    <BaseURL>https://cdn.ads.example/${id}/</BaseURL>
    <EventStream schemeIdUri="urn:google:dai:2018" timescale="1000"><Event presentationTime="0" id="1">google_${id}</Event></EventStream>
    <AdaptationSet contentType="video" mimeType="video/mp4">
      <SegmentTemplate timescale="1000" duration="5000" media="v_$Number$.m4s" initialization="v_init.mp4"/>
      <Representation id="ad720" bandwidth="2500000" width="1280" height="720" codecs="avc1.4d401f"/>
    </AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en">
      <SegmentTemplate timescale="1000" duration="5000" media="a_$Number$.m4s" initialization="a_init.mp4"/>
      <Representation id="adaudio" bandwidth="128000" codecs="mp4a.40.2"/>
    </AdaptationSet>
    <AdaptationSet contentType="text" mimeType="text/vtt" lang="en"><Representation id="adsubs" bandwidth="1000"><BaseURL>subs.vtt</BaseURL></Representation></AdaptationSet>
  </Period>
</MPD>`;

t.test(
  'a content Period split at pre, mid and post rolls: timelines cut, numbers advanced, no segment repeated or lost',
  async (t) => {
    const result = stitchDash({ url: 'https://origin.example/vod/x/manifest.mpd', mpd: content }, [
      { id: 'pre', offsetSec: 0, ads: [{ id: 'a', url: 'https://ads.example/a/manifest.mpd', mpd: ad('a') }] },
      {
        id: 'mid',
        offsetSec: 18,
        ads: [
          { id: 'a', url: 'https://ads.example/a/manifest.mpd', mpd: ad('a') },
          { id: 'b', url: 'https://ads.example/b/manifest.mpd', mpd: ad('b') },
        ],
      },
      { id: 'post', offsetSec: 60, ads: [{ id: 'a', url: 'https://ads.example/a/manifest.mpd', mpd: ad('a') }] },
    ]);
    t.same(result.skipped, []);
    t.same(
      result.pods.map((p) => [p.ids, p.contentOffset, p.start, p.duration]),
      [
        [['pre'], 0, 0, 20],
        [['mid'], 20, 40, 40],
        [['post'], 60, 120, 20],
      ],
      'the mid-roll waits for the video boundary at 20 s',
    );
    checkDash(t, content, result);
    t.match(result.mpd, /<BaseURL>https:\/\/origin\.example\/vod\/x\/media\/<\/BaseURL>/, 'content BaseURL absolute');
    t.match(result.mpd, /<BaseURL>https:\/\/cdn\.ads\.example\/b\/<\/BaseURL>/);
    t.match(result.mpd, /google_b/, "the ad's EventStream kept");
    t.match(
      result.mpd,
      /<SegmentTemplate timescale="90000" media="v_\$RepresentationID\$_\$Number\$\.m4s" initialization="v_\$RepresentationID\$_init\.mp4" startNumber="6" presentationTimeOffset="1800000">/,
      'video part 2: PTO 20 s × 90 kHz, numbers from 6',
    );
    t.match(result.mpd, /lang="fr"/);
    t.notMatch(result.mpd, /adsubs/, 'the ad text track the content lacks is removed');
    t.equal((result.mpd.match(/<Period /g) ?? []).length, 6, 'pre-roll, content, two mid-roll ads, content, post-roll');
  },
);

t.test('every static SegmentTemplate MPD fixture stitches with a mid-roll', async (t) => {
  let used = 0;
  for (const rel of fixtureFiles('dash', ['.mpd'])) {
    const text = fixture(rel);
    // Single-Period content: multi-Period sources in the fixtures are already stitched (their Periods differ).
    if (
      (text.match(/<Period[\s>]/g) ?? []).length !== 1 ||
      /type="dynamic"/.test(text) ||
      !text.includes('SegmentTemplate') ||
      text.includes('SegmentBase') ||
      text.includes('SegmentList') ||
      !text.includes('mediaPresentationDuration')
    )
      continue;
    let result: StitchedDash;
    try {
      const total = parseIsoDuration(/mediaPresentationDuration="([^"]+)"/.exec(text)![1]!)!;
      result = stitchDash({ url: `https://origin.example/${rel}`, mpd: text }, [
        { id: 'mid', offsetSec: total / 3, ads: [{ id: 'a', url: 'https://ads.example/a.mpd', mpd: ad('a') }] },
      ]);
    } catch (err) {
      t.ok(err instanceof StitchError, `${rel}: refused as a StitchError (${(err as Error).message})`);
      continue;
    }
    t.test(rel, async (t) => {
      if (result.pods.length) checkDash(t, text, result);
      else t.ok(result.skipped.length, `${rel}: ads left out with a reason`);
    });
    used++;
  }
  t.equal(used, 13, 'static SegmentTemplate fixtures stitched');
});
