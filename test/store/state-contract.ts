/** The contract every StateStore implementation must keep; run against memory and Redis. */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { keys, type StateStore } from '../../lib/store/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function stateStoreContract(t: Test, make: () => Promise<StateStore>): void {
  let store: StateStore;
  const ns = randomBytes(4).toString('hex');
  const k = (name: string) => keys.event(`c${ns}`, name);

  t.before(async () => {
    store = await make();
  });
  t.teardown(() => store.close());

  t.test('values, TTL and SET NX', async (t) => {
    t.equal(await store.get(k('missing')), null);
    await store.set(k('a'), 'one');
    t.equal(await store.get(k('a')), 'one');
    t.equal(await store.ttl(k('a')), -1);
    t.equal(await store.ttl(k('nope')), -2);
    await store.set(k('short'), 'x', 80);
    const ttl = await store.ttl(k('short'));
    t.ok(ttl > 0 && ttl <= 80, `ttl ${ttl} within (0, 80]`);
    await sleep(150);
    t.equal(await store.get(k('short')), null, 'expired');
    t.equal(await store.setIfAbsent(k('lease'), 'owner-1', 5000), true);
    t.equal(await store.setIfAbsent(k('lease'), 'owner-2', 5000), false);
    t.equal(await store.get(k('lease')), 'owner-1');
    t.equal(await store.expire(k('lease'), 60), true);
    t.equal(await store.expire(k('nope'), 60), false);
    await sleep(120);
    t.equal(await store.get(k('lease')), null);
    t.equal(await store.del(k('a')), true);
    t.equal(await store.del(k('a')), false);
  });

  t.test('counters: incrMany adds, answers the totals, and expires a new counter', async (t) => {
    t.same(await store.incrMany([]), []);
    t.same(
      await store.incrMany([
        { key: k('c1'), by: 2, ttlMs: 100 },
        { key: k('c2'), by: 5, ttlMs: 5000 },
      ]),
      [2, 5],
    );
    t.same(await store.incrMany([{ key: k('c1'), by: 3, ttlMs: 5000 }]), [5], 'adds to the existing value');
    const ttl = await store.ttl(k('c1'));
    t.ok(ttl > 0 && ttl <= 100, `the first expiry is kept (${ttl})`);
    await sleep(150);
    t.same(await store.incrMany([{ key: k('c1'), by: 1, ttlMs: 5000 }]), [1], 'starts again after expiring');
  });

  t.test('hashes', async (t) => {
    await store.hset(k('h'), { a: '1', b: '2' });
    await store.hset(k('h'), { b: '3' });
    t.same(await store.hgetall(k('h')), { a: '1', b: '3' });
    t.equal(await store.hget(k('h'), 'a'), '1');
    t.equal(await store.hget(k('h'), 'zz'), null);
    t.equal(await store.hdel(k('h'), 'a'), true);
    t.equal(await store.hdel(k('h'), 'a'), false);
    t.same(await store.hgetall(k('none')), {});
    await store.hdel(k('h'), 'b');
    t.equal(await store.ttl(k('h')), -2, 'an emptied hash is gone');
  });

  t.test('sets', async (t) => {
    t.equal(await store.sadd(k('s'), 'x', 'y', 'x'), 2);
    t.equal(await store.sadd(k('s'), 'y'), 0);
    t.same((await store.smembers(k('s'))).sort(), ['x', 'y']);
    t.equal(await store.srem(k('s'), 'x', 'nope'), 1);
    t.same(await store.smembers(k('s')), ['y']);
    t.same(await store.smembers(k('none')), []);
  });

  t.test('sorted sets and multi-hash reads', async (t) => {
    await store.batch().zadd(k('z'), 30, 'c').zadd(k('z'), 10, 'a').zadd(k('z'), 20, 'b').zadd(k('z'), 25, 'b').exec();
    t.same(await store.zrangeByScore(k('z'), -Infinity, Infinity), ['a', 'b', 'c']);
    t.same(await store.zrangeByScore(k('z'), 21, 30), ['b', 'c'], 'score updated by a second zadd');
    t.equal(await store.zcard(k('z')), 3);
    await store.batch().zremRangeByScore(k('z'), -Infinity, 24).exec();
    t.same(await store.zrangeByScore(k('z'), -Infinity, Infinity), ['b', 'c']);
    t.same(await store.zrangeByScore(k('none'), 0, Infinity), []);
    await store.hset(k('m1'), { a: '1' });
    await store.hset(k('m2'), { b: '2' });
    t.same(await store.hgetallMany([k('m1'), k('missing'), k('m2')]), [{ a: '1' }, {}, { b: '2' }]);
    t.same(await store.hgetallMany([]), []);
    // More keys than one read pipeline holds (Redis reads them in chunks): every hash, in order, none lost at a chunk's edge.
    const many = Array.from({ length: 2501 }, (_, i) => k(`many${i}`));
    const b = store.batch();
    many.forEach((key, i) => (i % 7 === 3 ? undefined : b.hset(key, { i: String(i) })));
    await b.exec();
    const read = await store.hgetallMany(many);
    t.equal(read.length, many.length, 'one answer per key across chunks');
    t.ok(
      read.every((h, i) => (i % 7 === 3 ? Object.keys(h).length === 0 : h['i'] === String(i))),
      'each in its key’s place, missing ones empty',
    );
  });

  t.test('capped sorted-set admission', async (t) => {
    const opts = { minScore: 100, cap: 2, ttlMs: 60_000 };
    await store.batch().zadd(k('cap'), 50, 'old').exec();
    t.equal(await store.zaddCapped(k('cap'), 200, 'a', opts), true, 'below the cap');
    t.equal(await store.zaddCapped(k('cap'), 201, 'b', opts), true, 'the stale member does not count');
    t.equal(await store.zaddCapped(k('cap'), 202, 'c', opts), false, 'at the cap');
    t.equal(await store.zaddCapped(k('cap'), 203, 'a', opts), true, 'a member already in is re-admitted');
    t.same(await store.zrangeByScore(k('cap'), -Infinity, Infinity), ['b', 'a']);
    t.ok((await store.ttl(k('cap'))) > 0, 'TTL set');
    t.equal(await store.zaddCapped(k('cap'), 300, 'd', { ...opts, cap: 0 }), true, 'cap 0: no cap');
  });

  t.test('wrong type is an error, not a silent overwrite', async (t) => {
    await store.set(k('str'), 'v');
    await t.rejects(store.hset(k('str'), { a: '1' }));
    await t.rejects(store.sadd(k('str'), 'a'));
  });

  t.test('pipelined batch', async (t) => {
    await store
      .batch()
      .set(k('b1'), 'v1')
      .set(k('b2'), 'v2', 5000)
      .hset(k('bh'), { f: 'v' })
      .sadd(k('bs'), 'm1')
      .sadd(k('bs'), 'm2')
      .srem(k('bs'), 'm1')
      .expire(k('b1'), 5000)
      .del(k('b2'))
      .hdel(k('bh'), 'nothing')
      .hsetnx(k('bh'), 'f', 'ignored')
      .hsetnx(k('bh'), 'g', 'set')
      .exec();
    t.equal(await store.get(k('b1')), 'v1');
    t.ok((await store.ttl(k('b1'))) > 0);
    t.equal(await store.get(k('b2')), null);
    t.same(await store.hgetall(k('bh')), { f: 'v', g: 'set' });
    t.same(await store.smembers(k('bs')), ['m2']);
  });

  t.test('pub/sub delivers to every subscriber until unsubscribed', async (t) => {
    const channel = keys.channel(`test-${ns}`);
    const a: string[] = [];
    const b: string[] = [];
    const offA = await store.subscribe(channel, (m) => a.push(m));
    const offB = await store.subscribe(channel, (m) => b.push(m));
    await store.publish(channel, 'one');
    for (let i = 0; i < 50 && (a.length < 1 || b.length < 1); i++) await sleep(10);
    await offA();
    await store.publish(channel, 'two');
    for (let i = 0; i < 50 && b.length < 2; i++) await sleep(10);
    t.same(a, ['one']);
    t.same(b, ['one', 'two']);
    await offB();
  });
}
