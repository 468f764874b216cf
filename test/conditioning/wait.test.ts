/**
 * Issue 26 part 2, real Postgres, Redis and ffmpeg: a brand's `stitch_wait_for_ads_ms` makes a
 * stitch POST wait for its ads' conditioning jobs up to that bound (capped by STITCH_MAX_WAIT_MS),
 * then stitch what is ready. A bound shorter than the job: the ad is left out this time, after the
 * wait, with the warning naming the job. A bound longer than the job: the first POST of a new
 * ladder already carries the ad (HLS and DASH).
 */
import t from 'tap';
import { call } from '../helpers/http.js';
import { needServices, tempDir } from '../helpers/services.js';
import { needFfmpeg } from '../helpers/ffmpeg.js';
import { DASH_RUNGS, RUNGS, makeCreative, rig } from '../helpers/conditioning.js';
import { stitchWaitMs } from '../../lib/stitch/service.js';

const AD_SEC = 2;
const SHORT_WAIT_MS = 400;
const WORK_SEC = AD_SEC * (RUNGS.length + DASH_RUNGS.length);
// The longest a POST waits: the ffmpeg work on a busy 2-core machine, within the cap below.
const LONG_WAIT_MS = 60_000 + WORK_SEC * 6_000;
t.setTimeout(90_000 + 2 * LONG_WAIT_MS);

interface Answer {
  warnings?: string[];
  breaks: Array<{ ads: Array<{ id: string }> }>;
}
const adIds = (body: Answer) => body.breaks.flatMap((b) => b.ads.map((a) => a.id));

t.test('a stitch POST waits for its ads up to the brand’s bound, then stitches what is ready', async (t) => {
  if (!needFfmpeg(t)) return;
  if (!(await needServices(t, ['postgres', 'redis']))) return;
  const creatives = new Map([['ad-1', await makeCreative(tempDir(t), 'ad-1', AD_SEC)]]);
  const r = await rig(t, {
    count: 1,
    breaks: ['start'],
    ads: [{ id: 'ad-1', durationSec: AD_SEC }],
    creatives,
    config: { stitchMaxWaitMs: LONG_WAIT_MS },
  });
  const a = r.instances[0]!;
  const brandWaits = async (ms: number) =>
    t.equal(
      (
        await call(a.url, 'PUT', '/api/v1/squeeze-brand-config', {
          token: r.jwt,
          json: { brand_id: 'acme', stitch_wait_for_ads_ms: ms },
        })
      ).status,
      200,
      `the brand waits up to ${ms} ms`,
    );
  t.equal(
    (
      await call(a.url, 'PUT', '/api/v1/squeeze-brand-config', {
        token: r.jwt,
        json: { brand_id: 'acme', stitch_wait_for_ads_ms: -1 },
      })
    ).status,
    400,
    'a negative wait is refused',
  );

  await brandWaits(SHORT_WAIT_MS);
  let began = Date.now();
  const short = await r.stitch(a.url, 'hls', 'hls-1', 'vod-hls');
  const shortMs = Date.now() - began;
  t.equal(short.status, 200);
  t.ok(shortMs >= SHORT_WAIT_MS - 20, `the POST waited its bound (${shortMs} ms)`);
  t.same(adIds(short.body), [], 'the job outlasted the bound: no ad');
  t.ok(
    (short.body as Answer).warnings?.some((w) =>
      /^ad .* left out this time: conditioning job [0-9a-f-]{36} is (queued|running)$/.test(w),
    ),
    'the warning names the job',
  );

  await brandWaits(LONG_WAIT_MS);
  const before = await r.creatives();
  t.same(
    before.map((c) => [c.protocol, c.state]),
    [['hls', 'pending']],
    'the HLS job is still pending when the next POST arrives',
  );
  began = Date.now();
  const hls = await r.stitch(a.url, 'hls', 'hls-2', 'vod-hls');
  t.equal(hls.status, 200);
  t.same(adIds(hls.body), ['ad-1'], `HLS: the POST waited for the job (${Date.now() - began} ms) and carries the ad`);
  t.notOk((hls.body as Answer).warnings, 'nothing left out');

  // DASH is another ladder profile: its job is queued by this very POST, which waits for it.
  began = Date.now();
  const dash = await r.stitch(a.url, 'dash', 'dash-1', 'vod-dash');
  t.equal(dash.status, 200);
  t.same(
    adIds(dash.body),
    ['ad-1'],
    `DASH: the first POST queued the job, waited (${Date.now() - began} ms) and carries the ad`,
  );
  t.notOk((dash.body as Answer).warnings, 'nothing left out');
  t.same(
    (await r.creatives()).map((c) => [c.state, c.attempts]),
    [
      ['ready', 1],
      ['ready', 1],
    ],
    'both jobs ready, each run once',
  );
});

t.test('the brand’s wait is capped by STITCH_MAX_WAIT_MS; unset or nonsense is no wait', async (t) => {
  t.equal(stitchWaitMs(20_000, 30_000), 20_000, 'under the cap: as asked');
  t.equal(stitchWaitMs(600_000, 30_000), 30_000, 'over the cap: the cap');
  t.equal(stitchWaitMs(20_000, 0), 0, 'a cap of 0: never waits');
  for (const v of [undefined, null, -5, '20000', Number.NaN])
    t.equal(stitchWaitMs(v, 30_000), 0, `${String(v)}: no wait`);
});
