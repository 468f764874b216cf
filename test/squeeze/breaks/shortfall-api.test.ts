/**
 * Issue 30.5 through the API, real Postgres and Redis, the DAI host / origin and the transcoder
 * simulated over HTTP: a curated ad of 4 s in a 12 s break (whole 2 s segments) is filled as the
 * brand's `squeeze_fill` says — slate after the ad (the transcoder is asked for the slate where the
 * ad ends), or content (the break ends with the ad).
 */
import t from 'tap';
import { DaiHostSim } from '../../../lib/sim/dai-host.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';

const SEG = 2;
const AD_SEC = 4;
const BREAK_SEC = 12;
const SLATE = 'https://cdn.example.com/slate.mp4';
const AD = 'https://cdn.example.com/curated.mp4';

t.test('a squeeze break shorter in ads than its duration, filled as the brand configures', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const transcoder = await new TranscoderSim().start();
  t.teardown(async () => {
    sim.stop();
    await transcoder.stop();
  });
  const a = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    contentOrigin: sim.url,
    transcoderUrl: transcoder.url,
    allowPrivateOutbound: true,
    breakLeaseMs: 1500,
    breakTickMs: 200,
  });
  const tok = await token(a);
  const api = (method: string, path: string, json?: unknown) =>
    call(a.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  const brand = (fill: unknown) => api('PUT', 'squeeze-brand-config', { brand_id: 'acme', squeeze_fill: fill });
  t.equal((await brand({ mode: 'slate', slate_uri: SLATE })).status, 200, 'the brand asks for slate');
  const ev = await api('PUT', 'squeeze-event-config', {
    asset_id: 'EV1',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
  });
  t.equal(ev.status, 200);
  const eventId = ev.body.id as number;
  t.equal(
    (
      await api('PUT', 'squeeze-configured-ad', {
        event_id: eventId,
        abid: 'cur-1',
        ad_uri: AD,
        duration: AD_SEC,
        is_curated: true,
      })
    ).status,
    200,
  );

  const slate = await api('POST', 'squeeze-ad-break', { event_id: eventId, break_duration: BREAK_SEC });
  t.equal(slate.status, 200, JSON.stringify(slate.body));
  t.equal(slate.body.break_duration, BREAK_SEC, 'the break keeps its length');
  t.same(
    slate.body.ads.map((x: { ad_id: string; duration: number; slate?: boolean }) => [
      x.ad_id,
      x.duration,
      x.slate === true,
    ]),
    [
      ['1', AD_SEC, false],
      ['slate', BREAK_SEC - AD_SEC, true],
    ],
    'the ad, then 8 s of slate',
  );
  t.match(slate.body.decision.reason, /8\.0 s of shortfall filled with the slate/);
  // The worker asks the transcoder for each segment of each variant: the ad for the first 4 s, then the slate from its start.
  const placed = () => [...new Set(transcoder.jobs.map((j) => `${j.ad_uri}@${j.ad_offset_sec ?? 0}`))].sort();
  const want = [`${AD}@0`, `${AD}@2`, `${SLATE}@0`, `${SLATE}@2`, `${SLATE}@4`, `${SLATE}@6`].sort();
  const deadline = Date.now() + 60_000;
  while (placed().length < want.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.same(placed(), want, 'segments past the ad are composed from the slate, 0–6 s into it');
  t.equal((await api('DELETE', `squeeze-ad-break/${slate.body.break_id}`)).status, 200);

  t.equal((await brand({ mode: 'content' })).status, 200, 'the brand asks for content');
  let content = await api('POST', 'squeeze-ad-break', { event_id: eventId, break_duration: BREAK_SEC });
  // The terminated break runs to its next segment boundary; a new one waits for it to end (409).
  const retry = Date.now() + 30_000;
  while (content.status === 409 && Date.now() < retry) {
    await new Promise((r) => setTimeout(r, 250));
    content = await api('POST', 'squeeze-ad-break', { event_id: eventId, break_duration: BREAK_SEC });
  }
  t.equal(content.status, 200, JSON.stringify(content.body));
  t.equal(content.body.break_duration, AD_SEC, 'the break ends with its ad');
  t.equal(content.body.segments.length, AD_SEC / SEG, 'two planned segments');
  t.same(
    content.body.ads.map((x: { ad_id: string }) => x.ad_id),
    ['1'],
    'no slate',
  );
  t.equal((await api('DELETE', `squeeze-ad-break/${content.body.break_id}`)).status, 200);
});
