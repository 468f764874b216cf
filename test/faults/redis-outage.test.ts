/**
 * Redis killed (SIGKILL) and restarted under load (docs/design.md §7 "Redis", §13): manifests of known
 * streams keep coming from in-process state; what needs Redis (the stream registry API) answers a
 * 503 problem within 1 s; /readyz says state_store down; after the restart everything recovers by
 * itself within 5 s, and no request waited past its deadline.
 */
import t from 'tap';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';
import { describe, drive, privateRedis, sleep, timedGet, until } from './helpers.js';

const DEADLINE_MS = 800;
const STREAM = 'fault-redis:LOC';
const MANIFEST = `/dai/manifest/linear/hls/pa/event/EVKEY/stream/${STREAM}/variant/720p.m3u8`;

t.test('Redis stopped and restarted under load', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const redis = await privateRedis(t);
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: redis.url,
    daiHost: sim.url,
    contentOrigin: 'https://origin.example.org',
    upstreamDeadlineMs: DEADLINE_MS,
  });
  const auth = { authorization: `Bearer ${await token(service)}` };
  const streamApi = () => timedGet(`${service.url}/api/v1/streams/${encodeURIComponent(STREAM)}`, auth);

  t.equal((await timedGet(service.url + MANIFEST)).status, 200, 'the stream is known');
  t.ok(await until(async () => (await streamApi()).status === 200, 3000), 'its registry record is in Redis');

  const load = drive(() => timedGet(service.url + MANIFEST));
  t.teardown(() => load.stop());
  await sleep(300);

  const killedAt = Date.now();
  await redis.kill();
  await sleep(200);
  const down = await streamApi();
  t.equal(down.status, 503, 'the stream registry API answers 503 with Redis down');
  t.equal(down.type, 'unavailable');
  t.ok(down.ms < 1000, `within 1 s (${down.ms} ms)`);
  const ready = await timedGet(`${service.url}/readyz`);
  t.equal(ready.status, 503, '/readyz is 503');
  t.equal(JSON.parse(ready.body).state_store, 'down', '/readyz names the state store');
  t.ok(ready.ms < 1500, `/readyz answers promptly (${ready.ms} ms)`);
  await sleep(1500);
  const duringOutage = load.results.filter((r) => r.at >= killedAt);
  t.ok(duringOutage.length > 10, `manifests requested during the outage: ${describe(duringOutage)}`);
  t.ok(
    duringOutage.every((r) => r.status === 200),
    'every manifest served (200) while Redis was down',
  );

  const restartedAt = Date.now();
  await redis.start();
  const recovered = await until(
    async () => (await timedGet(`${service.url}/readyz`)).status === 200 && Date.now(),
    5000,
  );
  t.ok(recovered, `/readyz ready again ${recovered ? recovered - restartedAt : '—'} ms after the restart`);
  // The restarted Redis is empty: the registry record comes back from the manifests still being requested.
  const api = await until(async () => (await streamApi()).status === 200 && Date.now(), 5000);
  t.ok(api, `the stream registry API answers 200 again ${api ? api - restartedAt : '—'} ms after the restart`);
  await load.stop();

  t.comment(`all manifests: ${describe(load.results)}`);
  t.ok(
    load.results.every((r) => r.status === 200),
    'no manifest failed at any point',
  );
  t.ok(
    load.results.every((r) => r.ms < DEADLINE_MS),
    `no manifest waited past the ${DEADLINE_MS} ms deadline`,
  );
});
