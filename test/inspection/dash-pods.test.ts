import t from 'tap';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { findDashPods, isAdPeriod } from '../../lib/inspection/dash-pods.js';

const root = new URL('../fixtures/dash/', import.meta.url).pathname;
const fixture = (p: string) => readFileSync(path.join(root, p), 'utf8');

t.test('ad Periods: by id token or by the Google DAI EventStream', async (t) => {
  for (const id of ['dai_pod-0001065804-ad-1', 'mid-roll-1-ad-1', 'pod', 'preroll_ads_2', 'x.pods.y'])
    t.ok(isAdPeriod(id, []), id);
  for (const id of ['head', 'download', 'p0', '96d40c7b-4de1-4f93-b622-77719e867588', 'adbreak', undefined])
    t.notOk(isAdPeriod(id, []), String(id));
  t.ok(isAdPeriod('p7', ['urn:google:dai:2018']));
});

t.test(
  'Google DAI MPD (telenet fixture): two pods, each a mid-roll Period, every Representation with its timeline',
  async (t) => {
    const pods = findDashPods(fixture('dash-mpd-rs/telenet-mid-ad-rolls.mpd'), 'https://dai.google.com/x/manifest.mpd');
    t.equal(pods.length, 2);
    t.same(
      pods.map((p) => p.periods.map((q) => q.name)),
      [['mid-roll-1-ad-1'], ['mid-roll-2-ad-1']],
    );
    t.equal(pods[0]!.startSec, 14 * 60 + 14.16);
    t.equal(pods[1]!.startSec, 14 * 60 + 14.16 + 31.36 + 10 * 60 + 5.48);
    const r = pods[0]!.periods[0]!.renditions;
    t.equal(r.length, 5, 'audio and four video Representations');
    t.same(
      r.map((x) => x.segments.length),
      [4, 7, 7, 7, 7],
    );
    const first = r[1]!.segments[0]!;
    t.match(
      first.url,
      /^https:\/\/dai\.google\.com\/segments\/redirect\/c\/1\.mp4\?orig=/,
      'BaseURL of the Period, $Number$ from startNumber 1',
    );
    t.equal(r[1]!.segments[6]!.startSec, (6 * 450000) / 90000 - 0, 'timeline times in seconds');
  },
);

t.test(
  'templates: $Number%05d$, $Time$, r=-1 to the Period end, @duration; SegmentList; the segment cap',
  async (t) => {
    const mpd = (body: string) =>
      `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" mediaPresentationDuration="PT20S"><Period id="ad-1" start="PT0S" duration="PT10S">${body}</Period></MPD>`;
    const one = (body: string, limit?: number) =>
      findDashPods(mpd(body), 'http://h.example/m/x.mpd', limit ? { limit } : {})[0]!.periods[0]!.renditions[0]!
        .segments;
    t.same(
      one(
        '<AdaptationSet><SegmentTemplate timescale="10" media="s_$RepresentationID$_$Number%05d$_$Time$_$$.m4s"><SegmentTimeline><S t="5" d="40" r="-1"/></SegmentTimeline></SegmentTemplate><Representation id="a"/></AdaptationSet>',
      ).map((s) => [s.name, s.startSec]),
      [
        ['s_a_00001_5_$.m4s', 0.5],
        ['s_a_00002_45_$.m4s', 4.5],
        ['s_a_00003_85_$.m4s', 8.5],
      ],
    );
    t.same(
      one(
        '<AdaptationSet><SegmentTemplate timescale="1000" duration="4000" startNumber="7" media="$Number$.ts"/><Representation id="a"/></AdaptationSet>',
      ).map((s) => s.url),
      ['http://h.example/m/7.ts', 'http://h.example/m/8.ts', 'http://h.example/m/9.ts'],
    );
    t.same(
      one(
        '<AdaptationSet><Representation id="a"><SegmentList duration="5" timescale="1"><SegmentURL media="x1.mp4"/><SegmentURL media="/y/x2.mp4"/></SegmentList></Representation></AdaptationSet>',
      ).map((s) => [s.url, s.startSec]),
      [
        ['http://h.example/m/x1.mp4', 0],
        ['http://h.example/y/x2.mp4', 5],
      ],
    );
    t.equal(
      one(
        '<AdaptationSet><SegmentTemplate timescale="1" media="$Number$.m4s"><SegmentTimeline><S d="1" r="1000000000"/></SegmentTimeline></SegmentTemplate><Representation id="a"/></AdaptationSet>',
        50,
      ).length,
      50,
      'a huge r is capped',
    );
  },
);

t.test('every DASH fixture: no throw; content-only MPDs have no pods', async (t) => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.mpd')) files.push(p);
    }
  };
  walk(root);
  let withPods = 0;
  for (const f of files) {
    const pods = findDashPods(readFileSync(f, 'utf8'), 'https://h.example/a/b.mpd');
    if (pods.length) withPods++;
    for (const p of pods) t.ok(p.periods.length > 0);
  }
  t.equal(files.length, 83, 'DASH fixtures read');
  t.equal(withPods, 1, 'fixtures with an ad Period (the telenet Google DAI one; MediaTailor ids carry no ad token)');
  t.same(findDashPods('<html>', 'https://h.example/'), []);
  t.same(findDashPods('<!DOCTYPE x [<!ENTITY a "b">]><MPD/>', 'https://h.example/'), []);
});

t.test(
  'a live MPD: start_time_sec is the Period start in the presentation, the wall-clock start beside it (issue 25 item 10)',
  async (t) => {
    const mpd = `<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z" profiles="urn:mpeg:dash:profile:isoff-live:2011">
<Period id="content-0" start="PT0S"><AdaptationSet mimeType="video/mp4"><SegmentTemplate timescale="1" duration="4" media="c/$Number$.m4s" startNumber="1"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>
<Period id="dai_pod-0001-ad-1" start="PT120S" duration="PT8S"><AdaptationSet mimeType="video/mp4"><SegmentTemplate timescale="1" duration="4" media="ad/$Number$.m4s" startNumber="1"/><Representation id="ad" bandwidth="1"/></AdaptationSet></Period>
</MPD>`;
    const pods = findDashPods(mpd, 'https://dai.example.com/live/manifest.mpd');
    t.equal(pods.length, 1);
    t.equal(pods[0]!.startSec, 120, 'seconds into the presentation');
    t.equal(pods[0]!.startEpochSec, Date.UTC(2026, 0, 1) / 1000 + 120, 'availabilityStartTime + the Period start');
    t.equal(
      findDashPods(fixture('dash-mpd-rs/telenet-mid-ad-rolls.mpd'), 'https://dai.google.com/x/manifest.mpd')[0]!
        .startEpochSec,
      undefined,
      'a static MPD without availabilityStartTime has no wall-clock start',
    );
  },
);
