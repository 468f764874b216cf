/**
 * Issue 26 end to end, real Postgres, Redis and ffmpeg: a VMAP whose VASTs carry only MP4
 * creatives (H.264/AAC at 426x240, 30 fps, 44.1 kHz — not the content's ladder) stitched into an
 * HLS TS VOD with a 3-rung ladder (25 fps) and a DASH VOD. The first POSTs answer without those
 * ads, with warnings naming the jobs; two instances sharing the database and the object store
 * condition each (creative, profile) once; once the jobs are ready the next POST for another
 * stream includes the ads, and every ad segment decodes with ffprobe at its rung's resolution and
 * codec. A creative that is not media fails and is not retried within its back-off.
 */
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { call } from '../helpers/http.js';
import { needServices, tempDir } from '../helpers/services.js';
import { ffprobe, needFfmpeg } from '../helpers/ffmpeg.js';
import { segmentsOf } from '../helpers/stitch-checks.js';
import { DASH_RUNGS, RUNGS, makeCreative, rig, type CreativeView as View } from '../helpers/conditioning.js';
import { parseMaster } from '../../lib/stitch/hls/master.js';

const AD_SEC = [3, 2];
/** Rung-seconds ffmpeg encodes for the good creatives (HLS: one run per rung; DASH: one run for all). */
const WORK_SEC = AD_SEC.reduce((s, x) => s + x, 0) * (RUNGS.length + DASH_RUNGS.length);
// The file's budget follows that work on a busy 2-core machine (tap's 120 s default is too tight).
t.setTimeout(90_000 + WORK_SEC * 8_000);

t.test('MP4-only creatives conditioned to the content ladder, then stitched (HLS TS 3 rungs, DASH)', async (t) => {
  if (!needFfmpeg(t)) return;
  if (!(await needServices(t, ['postgres', 'redis']))) return;
  const work = tempDir(t);
  const creatives = new Map<string, Buffer>();
  for (const [i, sec] of AD_SEC.entries())
    creatives.set(`ad-${i + 1}`, await makeCreative(work, `ad-${i + 1}`, sec, 440 * (i + 1)));
  // ad-bad's media file is the simulator's stub (an ftyp box): not playable, so its job fails.
  const ads = [
    { id: 'ad-1', durationSec: AD_SEC[0]! },
    { id: 'ad-2', durationSec: AD_SEC[1]! },
    { id: 'ad-bad', durationSec: 2 },
  ];
  const r0 = await rig(t, { count: 2, breaks: ['start', '00:00:06.000'], ads, creatives });
  const [a, b] = r0.instances as [(typeof r0.instances)[0], (typeof r0.instances)[0]];
  const { jwt, stitch } = r0;
  const creativesNow = r0.creatives;

  // First requests, on both instances at once: no ads yet, warnings naming the jobs.
  const [h1, h2, d1] = await Promise.all([
    stitch(a.url, 'hls', 'hls-1', 'vod-hls'),
    stitch(b.url, 'hls', 'hls-2', 'vod-hls'),
    stitch(b.url, 'dash', 'dash-1', 'vod-dash'),
  ]);
  for (const r of [h1, h2, d1]) {
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.same(
      r.body.breaks.flatMap((x: { ads: unknown[] }) => x.ads),
      [],
      'no conditioned ad is ready on the first request',
    );
  }
  const queued = await creativesNow();
  t.equal(
    queued.length,
    6,
    'one job per creative and profile: 3 creatives × (the HLS ladder, the DASH ladder), though two instances asked at once',
  );
  const jobsOf = (body: { warnings?: string[] }) =>
    new Set(
      (body.warnings ?? []).flatMap((w) => [...w.matchAll(/conditioning job ([0-9a-f-]{36})/g)].map((m) => m[1])),
    );
  const hlsJobs = new Set(queued.filter((c) => c.protocol === 'hls').map((c) => c.job_id));
  const dashJobs = new Set(queued.filter((c) => c.protocol === 'dash').map((c) => c.job_id));
  t.same(jobsOf(h1.body), hlsJobs, 'the first HLS answer names the HLS jobs');
  t.same(jobsOf(h2.body), hlsJobs, 'the other instance names the same jobs');
  t.same(jobsOf(d1.body), dashJobs, 'the DASH answer names the DASH jobs');
  t.ok(
    (h1.body.warnings as string[]).some((w) =>
      /^ad ad-1\/cr-ad-1 of break preroll left out this time: conditioning job [0-9a-f-]{36} is (queued|running)$/.test(
        w,
      ),
    ),
    'the warning says the ad is left out this time and names its job',
  );

  // Wait on the job state. The budget follows the work: ffmpeg encodes every rung of every ready
  // creative (HLS: one run per rung; DASH: one run), a few seconds per rung-second on a busy 2-core machine.
  const started = Date.now();
  const views = await r0.settle(30_000 + WORK_SEC * 4_000);
  t.comment(`conditioning of 2 creatives × 2 profiles took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const good = views.filter((c) => !c.media_url.includes('ad-bad'));
  const bad = views.filter((c) => c.media_url.includes('ad-bad'));
  t.same(
    good.map((c) => c.state),
    ['ready', 'ready', 'ready', 'ready'],
    'the MP4 creatives are ready',
  );
  t.same(
    bad.map((c) => c.state),
    ['failed', 'failed'],
    'the stub creative failed',
  );
  t.match(bad[0]!.error, /not readable media/);
  t.ok(
    views.every((c) => c.attempts === 1),
    'each job was claimed once',
  );
  t.equal(a.conditioning.ran + b.conditioning.ran, 6, 'the two instances ran six jobs between them: none twice');
  for (const c of good)
    t.ok(c.renditions!.seconds_to_ready > 0, `time to ready recorded (${c.renditions!.seconds_to_ready} s)`);

  t.test('HLS: the next POST for another stream includes the ads; every ad segment decodes at its rung', async (t) => {
    const r = await stitch(a.url, 'hls', 'hls-3', 'vod-hls');
    t.equal(r.status, 200);
    const ads = r.body.breaks.map((x: { ads: Array<{ id: string; duration: number }> }) => x.ads.map((ad) => ad.id));
    t.same(ads, [
      ['ad-1', 'ad-2'],
      ['ad-1', 'ad-2'],
    ]);
    t.ok(
      (r.body.warnings as string[]).every((w) => w.includes('ad-bad')),
      'only the failed creative is warned about',
    );
    t.match(r.body.warnings, [/ad-bad.*failed \(the creative is not readable media.*not retried before/]);
    const masterUrl: string = r.body.cache_url;
    const master = parseMaster(masterUrl, (await call(a.url, 'GET', new URL(masterUrl).pathname)).text);
    t.equal(master.variants.length, 3);
    // The other instance renders the session from its plan: the conditioned renditions read by key.
    for (const u of [masterUrl, ...master.variants.map((v) => v.uri)]) {
      const p = new URL(u).pathname;
      t.equal(
        (await call(b.url, 'GET', p)).text,
        (await call(a.url, 'GET', p)).text,
        `${path.basename(p)}: the same text from the other instance`,
      );
    }
    for (const v of master.variants) {
      const text = (await call(a.url, 'GET', new URL(v.uri).pathname)).text;
      const target = Number(/#EXT-X-TARGETDURATION:(\d+)/.exec(text)![1]);
      const segs = segmentsOf(text, v.uri);
      t.ok(
        segs.every((s) => Math.round(s.duration) <= target),
        `${v.width}x${v.height}: every EXTINF ≤ the target duration ${target}`,
      );
      const adSegs = segs.filter((s) => s.uri.includes('/stitch/creatives/'));
      t.ok(adSegs.length >= 4, `${v.width}x${v.height}: ${adSegs.length} ad segments`);
      for (const s of adSegs) {
        const file = path.join(work, `seg-${v.height}-${path.basename(new URL(s.uri).pathname)}`);
        const body = await fetch(s.uri);
        t.equal(body.status, 200);
        await writeFile(file, Buffer.from(await body.arrayBuffer()));
        const p = await ffprobe(file);
        const video = p.streams.find((x) => x.codec_type === 'video');
        const audio = p.streams.find((x) => x.codec_type === 'audio');
        t.match(
          { codec: video?.codec_name, w: video?.width, h: video?.height, audio: audio?.codec_name },
          { codec: 'h264', w: v.width, h: v.height, audio: 'aac' },
          `${path.basename(s.uri)} decodes at ${v.width}x${v.height}`,
        );
      }
    }
  });

  t.test('DASH: the next POST includes the ads; every ad segment decodes at its Representation', async (t) => {
    const r = await stitch(a.url, 'dash', 'dash-2', 'vod-dash');
    t.equal(r.status, 200);
    t.same(
      r.body.breaks.map((x: { ads: Array<{ id: string }> }) => x.ads.map((ad) => ad.id)),
      [
        ['ad-1', 'ad-2'],
        ['ad-1', 'ad-2'],
      ],
    );
    const mpdText = (await call(a.url, 'GET', new URL(r.body.cache_url).pathname)).text;
    t.equal(
      (await call(b.url, 'GET', new URL(r.body.cache_url).pathname)).text,
      mpdText,
      'the same MPD rendered by the other instance from the plan',
    );
    const doc = new DOMParser().parseFromString(mpdText, 'application/xml');
    const periods = Array.from(doc.getElementsByTagName('Period')).filter((p) =>
      (p.getElementsByTagName('BaseURL')[0]?.textContent ?? '').includes('/stitch/creatives/'),
    );
    t.equal(periods.length, 4, 'four ad Periods (two ads in each of two breaks)');
    for (const period of periods) {
      const base = period.getElementsByTagName('BaseURL')[0]!.textContent!;
      for (const set of Array.from(period.getElementsByTagName('AdaptationSet'))) {
        const tpl = set.getElementsByTagName('SegmentTemplate')[0]!;
        for (const rep of Array.from(set.getElementsByTagName('Representation'))) {
          const id = rep.getAttribute('id')!;
          const sub = (s: string) =>
            s
              .replace('$RepresentationID$', id)
              .replace(/\$Number%05d\$/, String(Number(tpl.getAttribute('startNumber') ?? 1)).padStart(5, '0'));
          const init = Buffer.from(
            await (await fetch(new URL(sub(tpl.getAttribute('initialization')!), base))).arrayBuffer(),
          );
          const first = Buffer.from(await (await fetch(new URL(sub(tpl.getAttribute('media')!), base))).arrayBuffer());
          const file = path.join(work, `dash-${id}-${Math.random().toString(36).slice(2)}.mp4`);
          await writeFile(file, Buffer.concat([init, first]));
          const p = await ffprobe(file);
          const s = p.streams[0]!;
          if (s.codec_type === 'video') {
            t.match(
              { codec: s.codec_name, w: s.width, h: s.height },
              { codec: 'h264', w: Number(rep.getAttribute('width')), h: Number(rep.getAttribute('height')) },
              `video ${id} decodes at its size`,
            );
            t.ok(
              DASH_RUNGS.some((x) => x.w === s.width && x.h === s.height),
              `${s.width}x${s.height} is a content rung`,
            );
          } else t.equal(s.codec_name, 'aac', `audio ${id} is AAC`);
        }
      }
    }
  });

  t.test('operator view: filters, OpenAPI, metrics', async (t) => {
    const failed = await call(a.url, 'GET', '/api/v1/ad-creatives?state=failed&page_size=10', { token: jwt });
    t.equal(failed.status, 200);
    t.same(
      failed.body.results.map((c: View) => c.state),
      ['failed', 'failed'],
    );
    t.equal(failed.body.total_results, 2, 'the one list envelope (issue 25 item 7)');
    t.ok(
      failed.body.results.every((c: View) => c.id === c.key),
      'each answers its key as id',
    );
    // A page of one, by the envelope's page/page_size and by the old `limit`; the second page is the other.
    const one = await call(a.url, 'GET', '/api/v1/ad-creatives?state=failed&page_size=1', { token: jwt });
    const other = await call(a.url, 'GET', '/api/v1/ad-creatives?state=failed&page_size=1&page=1', { token: jwt });
    const legacy = await call(a.url, 'GET', '/api/v1/ad-creatives?state=failed&limit=1', { token: jwt });
    t.same([one.body.results.length, other.body.results.length, legacy.body.results.length], [1, 1, 1]);
    t.same(one.body.total_results, 2, 'the total counts every match, not the page');
    t.not(one.body.results[0].key, other.body.results[0].key, 'page 1 is the other creative');
    const badQuery = await call(a.url, 'GET', '/api/v1/ad-creatives?state=lost&page_size=0', { token: jwt });
    t.equal(badQuery.status, 400);
    t.match(badQuery.headers['content-type'], /application\/problem\+json/);
    t.equal(badQuery.body.errors.length, 2, 'both bad parameters named');
    t.equal((await call(a.url, 'GET', '/api/v1/ad-creatives')).status, 401, 'operators only');
    const doc = (await call(a.url, 'GET', '/api/v1/openapi.json')).body;
    t.ok(doc.paths['/api/v1/ad-creatives']?.get, 'listed in OpenAPI');
    const metrics = (await call(a.url, 'GET', '/metrics')).text + (await call(b.url, 'GET', '/metrics')).text;
    const sum = (name: string) =>
      [...metrics.matchAll(new RegExp(`^${name} (\\d+)`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0);
    t.equal(sum('ad_conditioning_jobs_queued_total'), 6, 'six jobs queued between the instances');
    t.equal(sum('ad_conditioning_jobs_total\\{result="ready"\\}'), 4);
    t.equal(sum('ad_conditioning_jobs_total\\{result="failed"\\}'), 2);
    t.equal(sum('ad_conditioning_seconds_to_ready_count'), 4, 'time to ready observed for every ready job');
  });

  t.test('a failed creative is not retried within its back-off', async (t) => {
    const after = await creativesNow();
    for (const c of after.filter((x) => x.media_url.includes('ad-bad'))) {
      const before = bad.find((x) => x.key === c.key)!;
      t.match(
        { state: c.state, job: c.job_id, attempts: c.attempts, failures: c.failures },
        { state: 'failed', job: before.job_id, attempts: 1, failures: 1 },
        `${c.protocol}: still the one failed attempt after later stitches`,
      );
    }
    t.equal(a.conditioning.ran + b.conditioning.ran, 6, 'no job ran again');
  });
});
