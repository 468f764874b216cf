import t from 'tap';
import { ManifestCache, type Rendered } from '../../lib/dai/manifest-cache.js';

const ok = (body: string, freshMs = 1000, staleMs = 10_000): Rendered => ({ status: 200, headers: {}, body: Buffer.from(body), freshMs, staleMs });
const fail = (): Rendered => ({ status: 502, headers: {}, body: Buffer.from('x'), freshMs: 0, staleMs: 0 });

t.test('collapsing, freshness, stale on failure, eviction', async (t) => {
  const cache = new ManifestCache(2);
  t.teardown(() => cache.close());
  let loads = 0;
  const slow = () => new Promise<Rendered>((r) => setTimeout(() => r(ok(`v${++loads}`, 50, 10_000)), 20));
  const all = await Promise.all([cache.load('a', slow), cache.load('a', slow), cache.load('a', slow)]);
  t.equal(loads, 1, 'one load for three concurrent callers');
  t.same(all.map((h) => h.value.body.toString()), ['v1', 'v1', 'v1']);
  t.equal(cache.fresh('a')?.value.body.toString(), 'v1');
  await new Promise((r) => setTimeout(r, 60));
  t.equal(cache.fresh('a'), undefined, 'no longer fresh');
  const stale = await cache.load('a', async () => fail());
  t.equal(stale.value.body.toString(), 'v1', 'a 5xx serves the last good one');
  t.type(stale.ageSec, 'number');
  const thrown = await cache.load('a', async () => Promise.reject(new Error('down')));
  t.equal(thrown.value.body.toString(), 'v1', 'so does a thrown load');
  await t.rejects(cache.load('never', async () => Promise.reject(new Error('down'))), /down/);
  t.equal((await cache.load('b', async () => fail())).value.status, 502, 'no stale entry: the failure');
  await cache.load('c', async () => ok('c'));
  await cache.load('d', async () => ok('d'));
  t.equal(cache.size, 2, 'bounded');
  t.equal(cache.fresh('a'), undefined, 'the oldest went first');
});
