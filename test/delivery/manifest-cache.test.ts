import t from 'tap';
import { ManifestCache, type CacheHit, type Rendered } from '../../lib/delivery/manifest-cache.js';

const ok = (body: string, freshMs = 1000, staleMs = 10_000): Rendered => ({
  status: 200,
  headers: {},
  body: Buffer.from(body),
  freshMs,
  staleMs,
});
const fail = (): Rendered => ({ status: 502, headers: {}, body: Buffer.from('x'), freshMs: 0, staleMs: 0 });

/** The cache's callback API driven by promise-returning loaders, for readable tests. */
function loadVia(cache: ManifestCache, key: string, loader: () => Promise<Rendered>): Promise<CacheHit> {
  return new Promise((resolve, reject) =>
    cache.load(
      key,
      (done) => loader().then((v) => done(undefined, v), done),
      (err, hit) => (hit ? resolve(hit) : reject(err)),
    ),
  );
}

t.test('a clock reading behind the one that stored: age 0, never negative', async (t) => {
  const cache = new ManifestCache();
  t.teardown(() => cache.close());
  await loadVia(cache, 'k', () => Promise.resolve(ok('v')));
  const hit = cache.fresh('k', Date.now() - 5);
  t.equal(hit?.value.body.toString(), 'v', 'still fresh');
  t.equal(hit?.ageMs, 0);
  t.equal(hit?.ageSec, 0, 'no Age of -1 on the answer');
});

t.test('collapsing, freshness, stale on failure, eviction', async (t) => {
  const cache = new ManifestCache(2, undefined, Infinity); // every rendering admitted: eviction is under test
  const load = (key: string, loader: () => Promise<Rendered>) => loadVia(cache, key, loader);
  t.teardown(() => cache.close());
  let loads = 0;
  const slow = () => new Promise<Rendered>((r) => setTimeout(() => r(ok(`v${++loads}`, 50, 10_000)), 20));
  const all = await Promise.all([load('a', slow), load('a', slow), load('a', slow)]);
  t.equal(loads, 1, 'one load for three concurrent callers');
  t.same(
    all.map((h) => h.value.body.toString()),
    ['v1', 'v1', 'v1'],
  );
  const fresh = cache.fresh('a', Date.now() + 10);
  t.equal(fresh?.value.body.toString(), 'v1');
  t.ok(
    fresh!.ageMs! >= 10 && fresh!.ageMs! < 50,
    'a fresh hit tells its age in ms (what a derived rendering has left)',
  );
  t.notOk(fresh!.stale, 'and is not stale');
  t.notOk(all[0]!.stale, 'nor is a loaded one');
  const viaGet = await new Promise<CacheHit | undefined>((resolve) =>
    cache.get(
      'a',
      () => t.fail('get() loads only what is not fresh'),
      (_err, hit) => resolve(hit),
    ),
  );
  t.equal(viaGet?.value.body.toString(), 'v1', 'get(): the fresh entry, no load');
  await new Promise((r) => setTimeout(r, 60));
  t.equal(cache.fresh('a'), undefined, 'no longer fresh');
  const stale = await load('a', async () => fail());
  t.equal(stale.value.body.toString(), 'v1', 'a 5xx serves the last good one');
  t.type(stale.ageSec, 'number');
  t.equal(stale.stale, true, 'marked stale');
  const thrown = await load('a', async () => Promise.reject(new Error('down')));
  t.equal(thrown.value.body.toString(), 'v1', 'so does a thrown load');
  await t.rejects(
    load('never', async () => Promise.reject(new Error('down'))),
    /down/,
  );
  t.equal((await load('b', async () => fail())).value.status, 502, 'no stale entry: the failure');
  await load('c', async () => ok('c'));
  await load('d', async () => ok('d'));
  t.equal(cache.size, 2, 'bounded');
  t.equal(cache.fresh('a'), undefined, 'the oldest went first');
});

t.test('a loader that throws synchronously, or calls back twice, settles every waiter once', async (t) => {
  const cache = new ManifestCache();
  t.teardown(() => cache.close());
  const seen: string[] = [];
  cache.load(
    'k',
    () => {
      throw new Error('boom');
    },
    (err) => seen.push((err as Error).message),
  );
  t.same(seen, ['boom']);
  let later: ((err: unknown, v?: Rendered) => void) | undefined;
  cache.load(
    'twice',
    (done) => (later = done),
    (_e, hit) => seen.push(`first ${hit?.value.body}`),
  );
  cache.load(
    'twice',
    () => t.fail('joined, not loaded again'),
    (_e, hit) => seen.push(`second ${hit?.value.body}`),
  );
  later!(undefined, ok('x'));
  later!(undefined, ok('y'));
  t.same(seen, ['boom', 'first x', 'second x']);
});

t.test('bounded by body bytes as well as entries', async (t) => {
  // Each entry costs its body plus 2 bytes per key character: 'a' with '1234' is 6 bytes.
  const cache = new ManifestCache(100, 16, Infinity);
  t.teardown(() => cache.close());
  for (const key of ['a', 'b', 'c']) await loadVia(cache, key, async () => ok('1234'));
  t.equal(cache.size, 2, '18 bytes > 16: the oldest went');
  t.equal(cache.bytesHeld, 12);
  t.equal(cache.fresh('a'), undefined);
  t.equal(cache.fresh('c')?.value.body.toString(), '1234');
  await loadVia(cache, 'c', async () => ok('123456789'));
  t.equal(cache.size, 1, 'a replaced entry counts once: b (6) + the new c (11) > 16 drops b');
  t.equal(cache.bytesHeld, 11);
  t.equal(cache.fresh('c')?.value.body.toString(), '123456789');
  t.equal(cache.fresh('b'), undefined);
  await loadVia(cache, 'big', async () => ok('x'.repeat(50)));
  t.equal(cache.size, 1, 'one entry larger than the cap is kept alone');
  t.equal(cache.fresh('big')?.value.body.length, 50);
});

t.test('once half full, a rendering is kept only when its URL was fetched before', async (t) => {
  const cache = new ManifestCache(4);
  t.teardown(() => cache.close());
  for (const key of ['a', 'b']) await loadVia(cache, key, async () => ok(key));
  t.equal(cache.size, 2, 'below half: kept on first sight');
  await loadVia(cache, 'once', async () => ok('once'));
  t.equal(cache.fresh('once'), undefined, 'half full: a first fetch is answered but not kept');
  t.equal(cache.notAdmitted, 1);
  const again = await loadVia(cache, 'once', async () => ok('twice'));
  t.equal(again.value.body.toString(), 'twice');
  t.equal(cache.fresh('once')?.value.body.toString(), 'twice', 'the second fetch of the URL is kept');
  await loadVia(cache, 'a', async () => ok('a2', 1000));
  t.equal(cache.fresh('a')?.value.body.toString(), 'a2', 'a held entry is always refreshed');
  const stale = await loadVia(cache, 'once', async () => ({
    status: 503,
    headers: {},
    body: Buffer.from('x'),
    freshMs: 0,
    staleMs: 0,
  }));
  t.equal(stale.value.body.toString(), 'twice', 'and served stale when the upstream fails');
});

t.test('keys count against the byte budget: distinct long queries cannot grow memory past it', async (t) => {
  // The flood of issue 24: every viewer URL distinct, each with a 4 KiB query, small renderings.
  // Before keys were counted, 1,000 such entries held 8 MiB of keys under a 1 MiB budget.
  const maxBytes = 1024 * 1024;
  const cache = new ManifestCache(100_000, maxBytes, Infinity);
  t.teardown(() => cache.close());
  const query = 'q='.padEnd(4096, 'x');
  for (let i = 0; i < 1000; i++)
    await loadVia(cache, `/dai/manifest/s${i}/variant.m3u8?${query}`, async () => ok('#EXTM3U\n'));
  t.ok(cache.bytesHeld <= maxBytes, `${cache.bytesHeld} bytes held, keys included, within ${maxBytes}`);
  const perEntry = 2 * `/dai/manifest/s999/variant.m3u8?${query}`.length + 8;
  t.equal(
    cache.size,
    Math.floor(maxBytes / perEntry),
    'as many entries as fit the budget with their keys, far fewer than the count cap',
  );
  t.ok(cache.fresh(`/dai/manifest/s999/variant.m3u8?${query}`), 'the newest is held');
  t.equal(cache.fresh(`/dai/manifest/s0/variant.m3u8?${query}`), undefined, 'the oldest went');
});
