/**
 * The state store on a real Redis Cluster (3 primaries + 3 replicas, test/helpers/redis-cluster.ts):
 * the whole contract, round trips whose keys live on different nodes, pub/sub between clients
 * seeded by different nodes, a primary killed under writes (its replica takes over and the store
 * answers again by itself), and the service started on the cluster. Plus REDIS_URL's forms.
 */
import t from 'tap';
import { RedisStateStore, keys } from '../../lib/store/index.js';
import { parseRedisUrl } from '../../lib/store/redis-url.js';
import { createLogger } from '../../lib/log/index.js';
import { stateStoreContract } from './state-contract.js';
import { localCluster, localSentinel } from '../helpers/redis-cluster.js';
import { replicasCaughtUp } from '../../lib/sim/redis-cluster.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';
import { call } from '../helpers/http.js';

const log = createLogger('silent');

t.test('REDIS_URL forms', async (t) => {
  t.same(parseRedisUrl('redis://127.0.0.1:6379/2'), { kind: 'single', url: 'redis://127.0.0.1:6379/2' });
  t.same(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002'), {
    kind: 'cluster',
    nodes: [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ],
    tls: false,
  });
  t.same(parseRedisUrl('rediss+cluster://app:s%40cret@h1:7000,h2'), {
    kind: 'cluster',
    nodes: [
      { host: 'h1', port: 7000 },
      { host: 'h2', port: 6379 },
    ],
    tls: true,
    username: 'app',
    password: 's@cret',
  });
  t.same(parseRedisUrl('redis+sentinel://:pw@s1:26379,s2:26379/mymaster/3'), {
    kind: 'sentinel',
    sentinels: [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26379 },
    ],
    name: 'mymaster',
    db: 3,
    tls: false,
    password: 'pw',
  });
  t.throws(() => parseRedisUrl('redis+sentinel://s1:26379'), /names the primary/);
  t.throws(() => parseRedisUrl('redis+cluster://h1:99999'), /no valid port/);
  t.throws(() => parseRedisUrl('http://h1'), /must start with/);
});

t.test('the state store on a real Redis Cluster', async (t) => {
  const cluster = await localCluster(t);
  if (!cluster) return;
  const connect = (url = cluster.url, prefix = 'tc:') => RedisStateStore.connect(url, log, 15_000, prefix);

  await t.test('the contract', async (t) => stateStoreContract(t, () => connect()));

  await t.test('round trips over keys on every node', async (t) => {
    const store = await connect();
    t.teardown(() => store.close());
    // Stream keys hash by stream id: 60 of them land on all three primaries.
    const ids = Array.from({ length: 60 }, (_, i) => `s${i}-${Date.now()}`);
    const b = store.batch();
    for (const id of ids) b.hset(keys.stream(id), { id, n: String(id.length) }).expire(keys.stream(id), 60_000);
    await b.exec();
    const hashes = await store.hgetallMany(ids.map((id) => keys.stream(id)));
    t.same(
      hashes.map((h) => h['id']),
      ids,
      'hgetallMany answers every hash in order',
    );
    const counts = await store.incrMany(ids.map((id) => ({ key: keys.streamClaim(id), by: 2, ttlMs: 60_000 })));
    t.same(
      counts,
      ids.map(() => 2),
      'incrMany on 60 slots',
    );
    const owners = new Set(await Promise.all(ids.slice(0, 20).map((id) => cluster.primaryOf(`tc:${keys.stream(id)}`))));
    t.equal(owners.size, 3, 'the keys were spread over the three primaries');
  });

  await t.test('pub/sub between clients seeded by different nodes', async (t) => {
    const a = await connect(`redis+cluster://127.0.0.1:${cluster.ports[0]}`);
    const b = await connect(`redis+cluster://127.0.0.1:${cluster.ports[4]}`);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    const got = new Promise<string>((resolve) => void b.subscribe(keys.channel('t'), resolve));
    await new Promise((r) => setTimeout(r, 200)); // the SUBSCRIBE reaches its node
    await a.publish(keys.channel('t'), 'hello');
    t.equal(await got, 'hello');
  });

  await t.test('a primary killed: its replica takes over and the store answers again by itself', async (t) => {
    const store = await connect();
    t.teardown(() => store.close());
    const key = keys.stream('failover');
    await store.set(key, 'before', 120_000);
    const primary = await cluster.primaryOf(`tc:${key}`);
    await t.resolves(replicasCaughtUp(primary), 'the replica has the write (replication is asynchronous)');
    cluster.kill(primary);
    const killedAt = Date.now();
    let failures = 0;
    let value: string | null = null;
    for (;;) {
      try {
        await store.set(keys.stream('failover-w'), String(Date.now()), 60_000);
        value = await store.get(key);
        break;
      } catch {
        failures++;
        if (Date.now() - killedAt > 30_000) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const recoveryMs = Date.now() - killedAt;
    t.equal(
      value,
      'before',
      `the replica answered the key ${recoveryMs} ms after the kill (${failures} commands failed meanwhile)`,
    );
    t.ok(recoveryMs < 30_000, 'within the deadline');
    await cluster.settled(30_000);
  });

  await t.test('the service runs on the cluster', async (t) => {
    if (!(await needServices(t, ['postgres']))) return;
    const service = await startTestService(t, {
      databaseUrl: await freshSchemaUrl(t),
      redisUrl: cluster.url,
      redisKeyPrefix: 'svc:',
    });
    t.equal(service.stores.state.kind, 'redis');
    const ready = await call(service.url, 'GET', '/readyz');
    t.equal(ready.status, 200, 'ready');
  });
});

t.test('the state store through Sentinel: a killed primary is replaced and the store answers again', async (t) => {
  const sentinel = await localSentinel(t);
  if (!sentinel) return;
  const store = await RedisStateStore.connect(sentinel.url, log, 15_000, 'ts:');
  t.teardown(() => store.close());
  await store.set(keys.stream('s'), 'before', 120_000);
  t.equal(await store.get(keys.stream('s')), 'before', 'through the primary the sentinel names');
  await t.resolves(replicasCaughtUp(sentinel.primaryPort), 'the replica has the write (replication is asynchronous)');
  sentinel.kill(sentinel.primaryPort);
  const killedAt = Date.now();
  let value: string | null = null;
  let failures = 0;
  while (Date.now() - killedAt < 30_000) {
    try {
      await store.set(keys.stream('w'), 'after', 60_000);
      value = await store.get(keys.stream('s'));
      break;
    } catch {
      failures++;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  t.equal(
    value,
    'before',
    `the promoted replica answered ${Date.now() - killedAt} ms after the kill (${failures} commands failed meanwhile)`,
  );
});
