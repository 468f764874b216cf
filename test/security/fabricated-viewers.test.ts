/**
 * Fabricated DAI viewers (issue 24 item 1): during an event-wide break on a DAI event, 300 invented
 * stream ids asking for their manifests make the service fire no beacon at the (simulated) ad
 * server, while two real viewers, registered through the preroll ad tag in either order, fire
 * their full set exactly once each. A stream id the DAI host answers 404 for leaves no stream.
 * One service on real Postgres and Redis; DAI host, ad server and transcoder are real HTTP servers.
 */
import t from 'tap';
import { request } from 'undici';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../lib/sim/transcoder.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../helpers/services.js';

const SEG = 2;
const FAKES = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function text(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

/** The value of one counter line of /metrics (0 when absent). */
function metric(body: string, name: string, labels: string): number {
  const line = body
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && labels.split(',').every((kv) => l.includes(kv)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

t.test('fabricated stream ids fire no beacons; real viewers fire theirs once', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const ads = await new AdServerSim({
    ads: [
      { id: 'ad-1', durationSec: 4 },
      { id: 'ad-2', durationSec: 4 },
    ],
  }).start();
  const transcoder = await new TranscoderSim().start();
  t.teardown(async () => {
    sim.stop();
    await ads.stop();
    await transcoder.stop();
  });
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    contentOrigin: sim.url,
    adServerUrl: `${ads.url}/ad`,
    transcoderUrl: transcoder.url,
    beaconSecret: 'beacon-secret-for-tests-0123456789',
    allowPrivateOutbound: true,
    breakLeaseMs: 1500,
    breakTickMs: 200,
    breakRetentionSec: 120,
  });
  const tok = await token(service);
  const api = (method: string, path: string, json?: unknown) =>
    call(service.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  t.equal((await api('PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  const ev = await api('PUT', 'squeeze-event-config', {
    asset_id: 'EVF',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
    // The transcoder's time: a segment listed as content stays content (docs/decisions.md).
    live_edge_delay_segments: 2,
  });
  t.equal(ev.status, 200);
  const eventId = ev.body.id as number;
  const variant = (stream: string) =>
    `${service.url}/dai/manifest/linear/hls/event/EVF/stream/${stream}/variant/720p.m3u8`;

  // Real viewers, one per order of registration: REAL-A's ad tag first, REAL-B's manifest first.
  t.equal((await text(`${service.url}/dai/adproxy?stream_id=REAL-A:LOC&asset_key=EVF`)).status, 200);
  t.equal((await text(variant('REAL-A:LOC'))).status, 200);
  t.equal((await text(variant('REAL-B:LOC'))).status, 200);
  t.equal((await text(`${service.url}/dai/adproxy?stream_id=REAL-B:LOC&asset_key=EVF`)).status, 200);

  // An event-wide break (POST): one default assignment that applies to any stream id of the event.
  const started = await api('POST', 'squeeze-ad-break', { event_id: eventId, break_duration: 4 * SEG });
  t.equal(started.status, 200, JSON.stringify(started.body));
  t.match(started.body, { decision: { source: 'vmap' } });
  const breakId = started.body.break_id as string;

  // The players poll their variants through the whole break, as players do.
  let polling = true;
  const seen = new Set<string>();
  const poller = (async () => {
    while (polling) {
      for (const s of ['REAL-A:LOC', 'REAL-B:LOC']) {
        const m = await text(variant(s));
        for (const line of m.body.split('\n')) if (line.startsWith(transcoder.url)) seen.add(`${s}|${line}`);
      }
      await sleep(300);
    }
  })();
  t.teardown(() => {
    polling = false;
  });

  const outputs = () => new Set(transcoder.jobs.map((j) => transcoder.outputUri(j.output_key)));
  await until('the real viewers’ manifests carry squeezed segments', async () =>
    [...seen].some((s) => s.startsWith('REAL-B:LOC|')),
  );

  // 300 invented ids, two manifest requests each, while the break's squeezed segments are in the window.
  let carried = 0;
  let next = 0;
  const statuses = new Map<number, number>();
  const fake = async () => {
    while (next < FAKES) {
      const id = `FAKE-${next++}`;
      for (let k = 0; k < 2; k++) {
        const m = await text(variant(id));
        statuses.set(m.status, (statuses.get(m.status) ?? 0) + 1);
        if ([...outputs()].some((o) => m.body.includes(o))) carried++;
      }
    }
  };
  await Promise.all(Array.from({ length: 10 }, fake));
  t.same([...statuses], [[200, 2 * FAKES]], 'every fabricated id still gets its manifest (the upstream served it)');
  t.ok(carried > 0, `the fabricated ids' manifests carried squeezed segments (${carried} of ${2 * FAKES})`);

  await until(
    'the break completes',
    async () => (await api('GET', `squeeze-ad-break/${breakId}`)).body.status === 'completed',
    120_000,
  );
  // Players keep polling a little past the break (the last squeezed segments stay in the window).
  await sleep(2 * SEG * 1000);
  polling = false;
  await poller;
  await until('the forwarder is idle', async () => {
    const n = ads.hits.length;
    await sleep(1500);
    return ads.hits.length === n;
  });

  const perUrl = new Map<string, number>();
  for (const h of ads.hits) perUrl.set(h.query.toString(), (perUrl.get(h.query.toString()) ?? 0) + 1);
  const expected = ['ad-1', 'ad-2'].flatMap((ad) =>
    ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'].map((ev) => `${ad}|${ev}`),
  );
  t.same(
    [...new Set(ads.hits.map((h) => `${h.ad}|${h.ev}`))].sort(),
    expected.sort(),
    'the full set of the break’s beacons reached the ad server',
  );
  t.same(
    [...perUrl].filter(([, n]) => n !== 2),
    [],
    'each beacon exactly twice: once per real viewer, never for the 300 fabricated ids',
  );
  t.equal(
    ads.hits.length,
    2 * expected.length,
    `${ads.hits.length} beacons for 2 real viewers and ${FAKES} fabricated ids`,
  );

  const metrics = (await text(`${service.url}/metrics`)).body;
  const fired = metric(metrics, 'dai_beacons_fired_total', `event="${eventId}"`);
  const refused = metric(metrics, 'dai_beacons_refused_total', `event="${eventId}"`);
  t.equal(fired, 2 * expected.length, `dai_beacons_fired_total{event="${eventId}"} counts the real viewers' beacons`);
  t.ok(
    refused > 0,
    `dai_beacons_refused_total{event="${eventId}"} counts the fabricated ids' refused firings (${refused})`,
  );

  await t.test('an id the DAI host answers 404 for creates no stream', async (t) => {
    const before = service.streams.size;
    sim.mode = 'notfound';
    for (let i = 0; i < 20; i++) t.equal((await text(variant(`GONE-${i}`))).status, 404);
    sim.mode = 'ok';
    t.equal(service.streams.size, before, 'no stream recorded');
    t.notOk(service.streams.isKnown('GONE-0'));
    await service.streams.flush();
    t.equal((await api('GET', 'streams/GONE-0')).status, 404, 'and none in the state store');
  });
});
