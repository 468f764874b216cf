/** Scheduled pulls against the feed simulator and real Postgres: next-link and offset paging, backfill and real-time, on-demand pulls, private addresses refused. */
import t from 'tap';
import http from 'node:http';
import { FeedHostSim } from '../../lib/sim/feed-host.js';
import { fixture } from '../helpers/fixtures.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';

async function until(check: () => Promise<boolean>, ms = 8000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

t.test('feed pulls', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new FeedHostSim(30).start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), allowPrivateOutbound: true });
  const jwt = await token(service);
  const api = (method: string, path: string, json?: unknown) =>
    call(service.url, method, `/api/v1/${path}`, { token: jwt, json });
  const count = async (brand: string) =>
    (await api('GET', `catalog?brand_name=${brand}&page_size=1`)).body.total_results as number;
  const idle = async (name: string) => {
    const st = (await api('GET', `global-config/${name}`)).body.status; // one read: two could straddle a run's start
    return st?.state === 'idle' && st.last_run_at !== null;
  };

  t.test('next links, 3 pages, backfill', async (t) => {
    const r = await api('POST', 'global-config', {
      brand_name: 'nl',
      feed_name: 'nl-feed',
      feed_uri: `${sim.url}/next.rss?page=0`,
      pagination_supported: true,
      pagination_params: { stop_when_caughtup: false },
    });
    t.equal(r.status, 201);
    t.ok(await until(() => idle('nl-feed')), 'the pull ran on creation');
    t.equal(await count('nl'), 30, 'every item once');
    const st = (await api('GET', 'global-config/nl-feed')).body.status;
    t.match(st, { state: 'idle', pages: 3, inserted: 30, mode: 'backfill', last_error: null });
    t.equal(sim.requests.filter((u) => u.startsWith('/next.rss')).length, 3, 'each page fetched once');
    t.equal(
      (await api('GET', 'global-config/nl-feed')).body.pagination_params.next_from_feed,
      `${sim.url}/next.rss?page=0`,
      'a completed run sets next_from_feed back to feed_uri',
    );
  });

  t.test(
    'next_from_feed follows the next links page by page; a failed run leaves it where the next backfill starts',
    async (t) => {
      const feedUri = `${sim.url}/next.rss?page=0`;
      const page = (i: number) => `${sim.url}/next.rss?page=${i}`;
      const last = Math.ceil(sim.items.length / sim.pageSize) - 1;
      const nextFromFeed = async () =>
        (await api('GET', 'global-config/nf')).body.pagination_params.next_from_feed as string;
      sim.requests.length = 0;
      sim.delayMs = 1500; // pages after the first are held: the run is caught mid-way
      sim.failing.add(`/next.rss?page=${last}`);
      t.teardown(() => {
        sim.delayMs = 0;
        sim.failing.clear();
      });
      await api('POST', 'global-config', {
        brand_name: 'nf',
        feed_name: 'nf',
        feed_uri: feedUri,
        pagination_supported: true,
        pull_frequency_sec: 3600,
        pagination_params: {},
      });
      t.ok(
        await until(async () => (await nextFromFeed()) === page(1)),
        'after the first page: its next link, while the run goes on',
      );
      t.equal((await api('GET', 'global-config/nf')).body.status.state, 'running');
      sim.delayMs = 0;
      t.ok(await until(() => idle('nf')));
      t.match((await api('GET', 'global-config/nf')).body.status.last_error, /503/);
      t.equal(await nextFromFeed(), page(last), 'the failed run left it at the page that failed');
      // The next backfill starts there, and completing resets it to feed_uri.
      sim.failing.clear();
      sim.requests.length = 0;
      await service.stores.sql`update feed_run set next_due_at = now() where feed_name = 'nf'`;
      // One read of the status: a run that just started has cleared last_error but is not idle.
      const doneClean = async () => {
        const st = (await api('GET', 'global-config/nf')).body.status;
        return st?.state === 'idle' && st.last_run_at !== null && st.last_error === null;
      };
      t.ok(await until(doneClean));
      t.same(sim.requests, [`/next.rss?page=${last}`], 'resumed at next_from_feed');
      t.equal(await nextFromFeed(), feedUri, 'back to feed_uri once the run completed');
      t.equal(await count('nf'), sim.items.length, 'every item');
    },
  );

  t.test('offset/limit, 3 pages; an on-demand pull in real-time mode stops when caught up', async (t) => {
    sim.requests.length = 0;
    await api('POST', 'global-config', {
      brand_name: 'off',
      feed_name: 'off-feed',
      feed_uri: `${sim.url}/offset.rss`,
      pagination_supported: true,
      pagination_params: {
        limit: 12,
        limit_param: 'limit',
        offset_param: 'offset',
        offset_base: 0,
        offset_multiplier: 12,
        stop_when_caughtup: true,
      },
    });
    t.ok(await until(() => idle('off-feed')));
    t.equal(await count('off'), 30);
    t.same(
      sim.requests.filter((u) => u.startsWith('/offset.rss')),
      ['/offset.rss?offset=0&limit=12', '/offset.rss?offset=12&limit=12', '/offset.rss?offset=24&limit=12'],
    );
    sim.add(3);
    sim.requests.length = 0;
    const pull = await api('POST', 'global-config/off-feed/pull');
    t.equal(pull.status, 202);
    t.ok(await until(async () => (await count('off')) === 33 && (await idle('off-feed'))));
    t.ok(
      sim.requests.length <= 2,
      `real-time run stopped at the first page with nothing new (${sim.requests.length} pages)`,
    );
    sim.requests.length = 0;
    const before = (await api('GET', 'global-config/off-feed')).body.status.last_run_at;
    t.equal((await api('POST', 'global-config/off-feed/pull')).status, 202);
    t.ok(
      await until(
        async () =>
          (await api('GET', 'global-config/off-feed')).body.status.last_run_at !== before && (await idle('off-feed')),
      ),
    );
    t.equal(sim.requests.length, 1, 'unchanged feed: one conditional request answered 304');
    t.equal(await count('off'), 33);
    t.equal((await api('POST', 'global-config/nope/pull')).status, 404);
  });

  t.test('the other two combinations: next links in real-time mode, offset/limit in backfill', async (t) => {
    await api('POST', 'global-config', {
      brand_name: 'nlrt',
      feed_name: 'nlrt',
      feed_uri: `${sim.url}/next.rss?page=0`,
      pagination_supported: true,
      pagination_params: { stop_when_caughtup: true },
    });
    await api('POST', 'global-config', {
      brand_name: 'offbf',
      feed_name: 'offbf',
      feed_uri: `${sim.url}/offset.rss`,
      pagination_supported: true,
      pagination_params: {
        limit: 12,
        limit_param: 'limit',
        offset_param: 'offset',
        offset_multiplier: 12,
        stop_when_caughtup: false,
        update_offset_base: true,
      },
    });
    t.ok(await until(async () => (await idle('nlrt')) && (await idle('offbf'))));
    t.equal(await count('nlrt'), sim.items.length);
    t.equal(await count('offbf'), sim.items.length);
    t.match((await api('GET', 'global-config/nlrt')).body.status, { mode: 'realtime' });
    const offbf = (await api('GET', 'global-config/offbf')).body;
    t.match(offbf.status, { mode: 'backfill', pages: 3 });
    t.equal(
      offbf.pagination_params.offset_base,
      sim.items.length,
      'update_offset_base stored the offset after the last item consumed (not a whole page past it)',
    );
  });

  t.test('a run whose instance died resumes from its cursor: nothing lost, nothing twice', async (t) => {
    // The state a kill -9 after page 1 leaves behind: page 1 committed, lease held by a dead owner.
    await api('POST', 'global-config', {
      brand_name: 'rs',
      feed_name: 'rs-feed',
      feed_uri: `${sim.url}/next.rss?page=0`,
      pagination_supported: true,
      pull_frequency_sec: 3600,
      pagination_params: {},
    });
    t.ok(await until(() => idle('rs-feed')));
    const sql = service.stores.sql;
    const n = sim.items.length;
    const pages = Math.ceil(n / sim.pageSize);
    const firstPage = sim.items.slice(0, sim.pageSize).map((i) => i.guid);
    await sql`delete from catalog_item where brand_name = 'rs' and guid not in ${sql(firstPage)}`;
    await sql`update feed_run set state = 'running', lease_owner = 'dead-instance', lease_until = now() - interval '1 second', page_index = 1, next_url = ${`${sim.url}/next.rss?page=1`}, pages = 1, inserted = 10 where feed_name = 'rs-feed'`;
    sim.requests.length = 0;
    t.ok(await until(() => idle('rs-feed')), 'taken over once the lease lapsed');
    t.same(
      sim.requests,
      Array.from({ length: pages - 1 }, (_, i) => `/next.rss?page=${i + 1}`),
      'resumed at the second page',
    );
    t.equal(await count('rs'), n);
    t.match((await api('GET', 'global-config/rs-feed')).body.status, { pages, inserted: n });
  });

  t.test('two instances pulling the same feeds fetch each page once', async (t) => {
    const databaseUrl = await freshSchemaUrl(t);
    const a = await startTestService(t, { databaseUrl, allowPrivateOutbound: true });
    const b = await startTestService(t, { databaseUrl, allowPrivateOutbound: true });
    const tok = await token(a);
    sim.requests.length = 0;
    for (const n of [1, 2, 3])
      await call(a.url, 'POST', '/api/v1/global-config', {
        token: tok,
        json: {
          brand_name: `two${n}`,
          feed_name: `two${n}`,
          feed_uri: `${sim.url}/next.rss?page=0`,
          pagination_supported: true,
          pagination_params: {},
        },
      });
    const done = async () => {
      for (const n of [1, 2, 3])
        if (
          (await call(b.url, 'GET', `/api/v1/global-config/two${n}`, { token: tok })).body.status?.last_run_at == null
        )
          return false;
      return true;
    };
    t.ok(await until(done, 15000));
    t.equal(sim.requests.length, 12, '3 feeds × 4 pages (33 items), each fetched once');
    t.ok(a.puller.pagesFetched > 0 || b.puller.pagesFetched > 0);
    t.equal(a.puller.pagesFetched + b.puller.pagesFetched, 12);
  });

  t.test('private addresses are refused unless allowed', async (t) => {
    const requestsBefore = sim.requests.filter((u) => u.startsWith('/next.rss')).length;
    const strict = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), allowPrivateOutbound: false });
    const tok = await token(strict);
    await call(strict.url, 'POST', '/api/v1/global-config', {
      token: tok,
      json: { brand_name: 'p', feed_name: 'p-feed', feed_uri: `${sim.url}/next.rss`, pagination_params: {} },
    });
    let st: { last_error?: string } | undefined;
    t.ok(
      await until(
        async () => (
          (st = (await call(strict.url, 'GET', '/api/v1/global-config/p-feed', { token: tok })).body.status),
          !!st?.last_error
        ),
      ),
    );
    t.match(st?.last_error, /refused: 127.0.0.1 is a loopback address/);
    t.equal(
      sim.requests.filter((u) => u.startsWith('/next.rss')).length,
      requestsBefore,
      'nothing reached the feed host',
    );
  });
});

t.test('a 50 MB pulled feed is ingested with the heap growing by less than 150 MB', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const ITEMS = 48_000;
  const item = (i: number) =>
    `<item><guid>big-${i}</guid><title>Item ${i}</title><description>${'lorem ipsum '.repeat(80)}</description><media:content url="https://cdn.example.com/${i}.m3u8" type="application/x-mpegURL"/></item>\n`;
  let sent = 0;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/rss+xml' });
    res.write('<rss xmlns:media="http://search.yahoo.com/mrss/"><channel><title>big</title>');
    let i = 0;
    const pump = () => {
      while (i < ITEMS) {
        const chunk = item(i++);
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end('</channel></rss>');
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), allowPrivateOutbound: true });
  const jwt = await token(service);
  (global as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
  await call(service.url, 'POST', '/api/v1/global-config', {
    token: jwt,
    json: {
      brand_name: 'big',
      feed_name: 'big',
      feed_uri: `http://127.0.0.1:${(server.address() as { port: number }).port}/feed.rss`,
      pagination_params: {},
    },
  });
  const done = await until(
    async () =>
      (await call(service.url, 'GET', '/api/v1/global-config/big', { token: jwt })).body.status?.last_run_at != null,
    120_000,
  );
  clearInterval(sampler);
  t.ok(done, 'the run finished');
  t.ok(sent > 50_000_000, `${(sent / 1e6).toFixed(1)} MB served`);
  t.equal(
    (await call(service.url, 'GET', '/api/v1/catalog?brand_name=big&page_size=1', { token: jwt })).body.total_results,
    ITEMS,
  );
  const growth = (peak - base) / 1e6;
  t.ok(growth < 150, `heap grew by ${growth.toFixed(0)} MB at most`);
});

t.test('a real feed (the Guardian fixture, 55 items) served paged both ways', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await FeedHostSim.fromFeed(fixture('mrss/rss-parser/guardian.rss')).start();
  t.teardown(() => sim.stop());
  t.equal(sim.items.length, 55);
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), allowPrivateOutbound: true });
  const jwt = await token(service);
  await call(service.url, 'POST', '/api/v1/global-config', {
    token: jwt,
    json: {
      brand_name: 'gn',
      feed_name: 'gn',
      feed_uri: `${sim.url}/next.rss?page=0`,
      pagination_supported: true,
      pagination_params: {},
    },
  });
  await call(service.url, 'POST', '/api/v1/global-config', {
    token: jwt,
    json: {
      brand_name: 'go',
      feed_name: 'go',
      feed_uri: `${sim.url}/offset.rss`,
      pagination_supported: true,
      pagination_params: { limit: 20, limit_param: 'limit', offset_param: 'offset' },
    },
  });
  const total = async (b: string) =>
    (await call(service.url, 'GET', `/api/v1/catalog?brand_name=${b}&page_size=1`, { token: jwt })).body.total_results;
  t.ok(
    await until(async () => (await total('gn')) === 55 && (await total('go')) === 55, 15_000),
    'both ways: all 55 items',
  );
});

for (const mode of ['backfill', 'realtime'] as const)
  t.test(
    `update_offset_base moves by what was consumed: a feed growing while pulled loses nothing (${mode}, issue 25 item 1)`,
    async (t) => {
      if (!(await needServices(t, ['postgres']))) return;
      // A feed ordered oldest first: new items are appended, so the offset after the last item
      // consumed is where the next run's new items start.
      const sim = await new FeedHostSim(7).start();
      t.teardown(() => sim.stop());
      const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), allowPrivateOutbound: true });
      const jwt = await token(service);
      const api = (method: string, path: string, json?: unknown) =>
        call(service.url, method, `/api/v1/${path}`, { token: jwt, json });
      const guids = async () =>
        (await service.stores.sql<{ guid: string }[]>`select guid from catalog_item where brand_name = 'grow'`)
          .map((r) => r.guid)
          .sort();
      const feed = async () =>
        (await api('GET', 'global-config/grow')).body as {
          pagination_params: { offset_base: number };
          status: { state: string; last_run_at: string | null; inserted: number };
        };
      const ranAfter = async (before: string | null) => {
        const st = (await feed()).status;
        return st.state === 'idle' && st.last_run_at !== null && st.last_run_at !== before;
      };
      const offsets = () => sim.requests.map((r) => Number(new URL(r, 'http://x').searchParams.get('offset')));

      // Run 1: the feed grows by one item while the run reads its second page.
      let grown = false;
      sim.beforeAnswer = (req) => {
        if (!grown && req.includes('offset=3&')) {
          grown = true;
          sim.append(1);
        }
      };
      const created = await api('POST', 'global-config', {
        brand_name: 'grow',
        feed_name: 'grow',
        feed_uri: `${sim.url}/offset.rss`,
        pagination_supported: true,
        pull_frequency_sec: 3600,
        pagination_params: {
          limit: 3,
          limit_param: 'limit',
          offset_param: 'offset',
          offset_base: 0,
          update_offset_base: true,
          stop_when_caughtup: mode === 'realtime',
        },
      });
      t.equal(created.status, 201);
      t.ok(await until(() => ranAfter(null), 15_000), 'the first run finished');
      t.same(offsets(), [0, 3, 6], 'pages 0, 3 and 6 (the last one partial: 2 of 3)');
      t.equal((await guids()).length, 8, 'the item added mid-run was pulled in the same run');
      t.equal(
        (await feed()).pagination_params.offset_base,
        8,
        'the base is after the 8 items consumed (before issue 25: 9, a whole page past the partial one)',
      );

      // Run 2: the feed grew by k = 4; exactly those are pulled, starting right after the last consumed.
      sim.beforeAnswer = undefined;
      sim.append(4);
      sim.requests.length = 0;
      let before = (await feed()).status.last_run_at;
      t.equal((await api('POST', 'global-config/grow/pull')).status, 202);
      t.ok(await until(() => ranAfter(before), 15_000));
      t.same(offsets(), [8, 11], 'from the stored base: a full page, then the partial one');
      t.equal((await feed()).status.inserted, 4, 'exactly the 4 new items were inserted');
      t.same(
        await guids(),
        sim.items.map((i) => i.guid).sort(),
        'every item of the feed, none skipped (before issue 25 the item at offset 8 was never pulled)',
      );
      t.equal((await feed()).pagination_params.offset_base, 12);

      // Run 3: nothing new. The base stays (before issue 25 it moved a page per run: 12, 15, 18, ...).
      sim.requests.length = 0;
      before = (await feed()).status.last_run_at;
      t.equal((await api('POST', 'global-config/grow/pull')).status, 202);
      t.ok(await until(() => ranAfter(before), 15_000));
      t.same(offsets(), [12], 'one empty page asked');
      t.equal((await feed()).pagination_params.offset_base, 12, 'an empty page moves the base by nothing');

      // Run 4: it grows again, by 2, while the run reads; both are pulled, the base follows.
      sim.requests.length = 0;
      sim.append(1);
      sim.beforeAnswer = (req) => {
        if (req.includes('offset=12&')) sim.append(1);
      };
      before = (await feed()).status.last_run_at;
      t.equal((await api('POST', 'global-config/grow/pull')).status, 202);
      t.ok(await until(() => ranAfter(before), 15_000));
      t.equal((await feed()).status.inserted, 2);
      t.equal((await guids()).length, 14);
      t.equal((await feed()).pagination_params.offset_base, 14);
    },
  );
