/**
 * The rolling-restart drain order (docs/design.md §17, issue 29): once shutdown starts, /readyz
 * answers 503 at once while manifests are still answered 200 for SHUTDOWN_DRAIN_MS (a load
 * balancer's check interval); only then does the listener close.
 */
import t from 'tap';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { freshSchemaUrl, needServices, startTestService, REDIS_URL } from '../helpers/services.js';
import { timedGet, until } from '../faults/helpers.js';

const DRAIN_MS = 1500;
const MANIFEST = '/dai/manifest/linear/hls/pa/event/EVKEY/stream/drain:LOC/variant/720p.m3u8';

t.test('SIGTERM order: /readyz 503 first, manifests still served, then the listener closes', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    contentOrigin: 'https://origin.example.org',
    shutdownDrainMs: DRAIN_MS,
  });
  t.equal((await timedGet(`${service.url}/readyz`)).status, 200, 'ready before shutdown');
  t.equal((await timedGet(service.url + MANIFEST)).status, 200, 'a manifest before shutdown');

  const startedAt = Date.now();
  const closed = service.close().then(() => Date.now());
  const ready = await timedGet(`${service.url}/readyz`);
  t.equal(ready.status, 503, '/readyz answers 503 as soon as shutdown starts');
  t.equal(JSON.parse(ready.body).shutting_down, true, '/readyz says it is shutting down');
  // Manifests keep answering for the whole drain interval: every one sent in it is a 200.
  const during: number[] = [];
  while (Date.now() - startedAt < DRAIN_MS * 0.7) during.push((await timedGet(service.url + MANIFEST)).status);
  t.ok(during.length >= 3, `manifests requested during the drain (${during.length})`);
  t.same([...new Set(during)], [200], 'every manifest during the drain is 200');
  t.equal((await timedGet(`${service.url}/healthz`)).status, 200, '/healthz (liveness) still 200 while draining');

  const end = await closed;
  t.ok(
    end - startedAt >= DRAIN_MS,
    `the listener closed only after the drain interval (${end - startedAt} ms ≥ ${DRAIN_MS})`,
  );
  const refused = await until(async () => (await timedGet(service.url + MANIFEST, {}, 1000)).status === 0, 2000);
  t.ok(refused, 'after the drain new connections are refused (a balancer retries them elsewhere)');
});
