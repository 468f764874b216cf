/** Per-client token buckets: the bucket arithmetic, counting across instances, and every limited surface over HTTP. */
import t, { type Test } from 'tap';
import { RateLimiter } from '../../lib/http/rate-limit.js';
import { MemoryStateStore, RedisStateStore } from '../../lib/store/index.js';
import { createLogger } from '../../lib/log/index.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, REDIS_URL, startTestService, token, UNLIMITED } from '../helpers/services.js';
import { DaiHostSim } from '../../lib/sim/dai-host.js';

t.test('a bucket: burst at once, then the rate; a rule that is not configured never limits', async (t) => {
  let now = 1_000_000;
  const rl = new RateLimiter({ rules: { api: { rate: 2, burst: 3 } }, now: () => now });
  t.same(
    [1, 2, 3].map(() => rl.take('api', 'a').ok),
    [true, true, true],
    'the burst',
  );
  const refused = rl.take('api', 'a');
  t.same(refused, { ok: false, retryAfterSec: 1 });
  t.ok(rl.take('api', 'b').ok, 'another client has its own bucket');
  now += 500; // +1 token, but the refused knock cost one
  t.notOk(rl.take('api', 'a').ok);
  now += 1500;
  t.ok(rl.take('api', 'a').ok, 'refilled at the rate');
  t.ok(rl.take('other', 'a').ok && rl.take('api', 'a', 0).ok);
  const costly = new RateLimiter({ rules: { api: { rate: 1, burst: 10 } }, now: () => now });
  t.ok(costly.take('api', 'x', 10).ok);
  const r = costly.take('api', 'x', 10);
  t.notOk(r.ok, 'a cost of 10 empties a bucket of 10');
  t.ok(!r.ok && r.retryAfterSec >= 10, 'and says how long to wait');
  const off = new RateLimiter({ rules: { api: { rate: 0, burst: 1 } } });
  t.ok(
    [1, 2, 3, 4].every(() => off.take('api', 'z').ok),
    'rate 0 = no limit',
  );
});

t.test('instances count together through the shared counters', async (t) => {
  const check = async (t: Test, store: MemoryStateStore | RedisStateStore) => {
    const shared = (inc: Array<{ key: string; by: number; ttlMs: number }>) => store.incrMany(inc);
    const prefix = `t${Math.random().toString(36).slice(2)}:`;
    const a = new RateLimiter({ rules: { api: { rate: 5, burst: 5 } }, shared, keyPrefix: prefix, flushMs: 10_000 });
    const b = new RateLimiter({ rules: { api: { rate: 5, burst: 5 } }, shared, keyPrefix: prefix, flushMs: 10_000 });
    t.teardown(() => (a.close(), b.close()));
    // Each instance alone would allow 5 at once; together 10 pass before the shared count is known.
    for (let i = 0; i < 5; i++) t.ok(a.take('api', 'ip1').ok && b.take('api', 'ip1').ok);
    await a.flush();
    await b.flush();
    // The sum (10) is over rate + burst (10)? Not yet: equal is allowed. One more each, then flushed.
    const secondBefore = Math.floor(Date.now() / 1000);
    a.take('api', 'ip1');
    await a.flush();
    if (Math.floor(Date.now() / 1000) !== secondBefore) return t.pass('the second turned over mid-test; the window restarted');
    t.notOk(b.take('api', 'ip1').ok, 'b refuses once the shared count passed rate + burst, though its own bucket refilled nothing yet');
    t.notOk(a.take('api', 'ip1').ok);
    t.ok(a.take('api', 'ip2').ok, 'other clients are not affected');
  };
  t.test('memory', async (t) => check(t, new MemoryStateStore()));
  t.test('redis', async (t) => {
    if (!(await needServices(t, ['redis']))) return;
    const store = await RedisStateStore.connect(REDIS_URL, createLogger('silent'));
    t.teardown(() => store.close());
    await check(t, store);
  });
});

t.test('over HTTP: 429 problem with Retry-After on /api/v1, /beacon, /vast, /dai/adproxy; manifests never limited', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const rateLimits = { ...UNLIMITED, api: { rate: 1, burst: 20 }, beacon: { rate: 1, burst: 3 }, vast: { rate: 1, burst: 3 }, adproxy: { rate: 1, burst: 3 } };
  // The test client plays the ad manager's server (trusted: its X-Device-Ip names the viewer).
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), daiHost: sim.url, rateLimits, trustedProxies: '127.0.0.1' });
  const jwt = await token(service);

  const api = [];
  for (let i = 0; i < 21; i++) api.push(await call(service.url, 'GET', '/api/v1/brand-recognition', { token: jwt }));
  t.same(
    api.slice(0, 20).map((r) => r.status),
    Array(20).fill(200),
    'the burst passes',
  );
  t.equal(api[20]!.status, 429);
  t.equal(api[20]!.headers['content-type'], 'application/problem+json');
  t.match(api[20]!.body, { type: 'urn:squeezeback:problem:rate-limited', status: 429 });
  t.ok(Number(api[20]!.headers['retry-after']) >= 1, 'Retry-After in seconds');

  for (const [path, label] of [
    ['/beacon?u=x', 'beacon'],
    ['/vast?stream_id=s1', 'vast'],
    ['/dai/adproxy?stream_id=s1&asset_key=K', 'adproxy'],
  ] as const) {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(service.url, 'GET', path)).status);
    t.equal(statuses[3], 429, `${label}: the fourth within the second is refused`);
    t.notOk(statuses.slice(0, 3).includes(429), `${label}: the burst of 3 passes`);
  }
  const viewer = await call(service.url, 'GET', '/dai/adproxy?stream_id=s2&asset_key=K', { headers: { 'X-Device-Ip': '203.0.113.9' } });
  t.equal(viewer.status, 200, 'the ad proxy counts per viewer (X-Device-Ip of the trusted ad manager), not per DAI server');

  const manifests = await Promise.all(Array.from({ length: 60 }, (_, i) => call(service.url, 'GET', `/dai/manifest/linear/hls/pa/event/E/stream/m${i}:LOC/variant/720p.m3u8`)));
  t.ok(
    manifests.every((r) => r.status === 200),
    'the manifest hot path is never limited',
  );
});

t.test('a failed authentication costs ten requests', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), rateLimits: { ...UNLIMITED, api: { rate: 0.01, burst: 30 } } });
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await call(service.url, 'GET', '/api/v1/brand-recognition', { token: 'not-a-token' })).status);
  t.same(statuses, [401, 401, 401, 429], 'three bad tokens spend a bucket of 30');
});
