/**
 * Honest durations (issue 25 item 10): a break squeezes whole content segments, so its cue-out
 * duration, its planned segments and its transcoder jobs all say the span actually squeezed
 * (before: `CUE-OUT:30` while 8 × 4 s = 32 s were squeezed, the last planned segment 2 s while its
 * job said 4 s). Real Postgres and Redis; the DAI host and transcoder simulated.
 */
import t from 'tap';
import { request } from 'undici';
import { DaiHostSim } from '../../../lib/sim/dai-host.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import { squeezedSpanSec } from '../../../lib/squeeze/breaks/plan.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';

const SEG = 4;

t.test('squeezedSpanSec: whole segments, never less than asked', async (t) => {
  t.equal(squeezedSpanSec(30, 4), 32);
  t.equal(squeezedSpanSec(32, 4), 32);
  t.equal(squeezedSpanSec(8, 4), 8);
  t.equal(squeezedSpanSec(30, 6), 30);
  t.equal(squeezedSpanSec(20, 2.002), 20.02);
  t.equal(squeezedSpanSec(0.5, 4), 4);
  t.equal(squeezedSpanSec(30, 0), 30, 'no segment duration known: as asked');
});

t.test('a 30 s break on 4 s segments: CUE-OUT, planned segments and jobs all say 32 s', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 10, adEvery: 0, adSegments: 0 },
  }).start();
  const transcoder = await new TranscoderSim().start();
  t.teardown(async () => {
    sim.stop();
    await transcoder.stop();
  });
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    redisKeyPrefix: `t${Math.random().toString(36).slice(2, 10)}:`,
    daiHost: sim.url,
    contentOrigin: sim.url,
    transcoderUrl: transcoder.url,
    allowPrivateOutbound: true,
    breakTickMs: 200,
  });
  const tok = await token(service);
  const api = (method: string, path: string, json?: unknown) =>
    call(service.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  await api('PUT', 'squeeze-brand-config', { brand_id: 'acme' });
  const ev = await api('PUT', 'squeeze-event-config', {
    asset_id: 'EVD',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
  });
  await api('PUT', 'squeeze-configured-ad', {
    event_id: ev.body.id,
    abid: 'c1',
    ad_uri: 'https://cdn.example.com/c1.mp4',
    duration: 30,
    is_curated: true,
  });

  const started = await api('POST', 'squeeze-ad-break', { event_id: ev.body.id, break_duration: 30 });
  t.equal(started.status, 200, JSON.stringify(started.body));
  t.equal(started.body.break_duration, 32, 'the break is the 8 whole segments it squeezes');
  t.equal((Date.parse(started.body.end_time) - Date.parse(started.body.start_time)) / 1000, 32);
  t.same(
    started.body.segments.map((s: { duration: number }) => s.duration),
    Array(8).fill(SEG),
    'every planned segment 4 s (before: the last said 2 s)',
  );

  // The manifest: the cue-out advertises the squeezed span.
  const variant = `${service.url}/dai/manifest/linear/hls/event/EVD/stream/D1/variant/720p.m3u8`;
  const deadline = Date.now() + 40_000;
  let cue: string | undefined;
  while (!cue && Date.now() < deadline) {
    const body = await (await request(variant)).body.text();
    cue = /^#EXT-X-CUE-OUT:([\d.]+)$/m.exec(body)?.[1];
    if (!cue) await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(cue, '32', 'CUE-OUT:32 (before: CUE-OUT:30)');

  // The jobs: each as long as its planned segment.
  while (transcoder.jobs.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.ok(transcoder.jobs.length > 0, 'a job was submitted');
  t.ok(
    transcoder.jobs.every((j) => j.duration_sec === SEG),
    `every job is ${SEG} s, as planned`,
  );

  const extended = await api('POST', `squeeze-ad-break/${started.body.break_id}/extend`, { additional_sec: 5 });
  t.equal(extended.status, 200);
  t.equal(extended.body.break_duration, 40, 'extended by 5 s: to the next whole segment (37 → 40)');
  t.same(
    extended.body.segments.map((s: { duration: number }) => s.duration),
    Array(10).fill(SEG),
  );
  t.equal((await api('DELETE', `squeeze-ad-break/${started.body.break_id}`)).status, 200);
});
