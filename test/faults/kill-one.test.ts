/**
 * kill -9 of one of two service processes sharing Postgres and Redis (docs/design.md §13 "Several
 * processes"): the survivor keeps serving manifests and the management API without a gap, and it
 * takes over the feed pull the dead one held once its lease lapses (the break worker's lease is
 * covered by test/e2e/break-takeover.test.ts).
 */
import t from 'tap';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import postgres from 'postgres';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { FeedHostSim } from '../../lib/sim/feed-host.js';
import { projectRoot } from '../../lib/paths.js';
import { mintToken } from '../../lib/http/auth.js';
import { loadConfig } from '../../lib/config/index.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, tempDir, JWT_SECRET, REDIS_URL } from '../helpers/services.js';
import { describe, drive, freePort, sleep, timedGet, until } from './helpers.js';

const FEED_LEASE_MS = 5000;
const MANIFEST = '/dai/manifest/linear/hls/pa/event/EVKEY/stream/kill-one:LOC/variant/720p.m3u8';

t.test('kill -9 one of two processes: the survivor serves and takes over the feed pull', async (t) => {
  if (!(await needServices(t))) return;
  execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'ensure-build.js')], { stdio: 'inherit' });
  const dai = await new DaiHostSim().start();
  const feed = await new FeedHostSim(40).start();
  t.teardown(() => (dai.stop(), feed.stop()));
  feed.delayMs = 1500; // pages after the first take a while: the kill lands mid-run
  const databaseUrl = await freshSchemaUrl(t);
  const env = {
    PATH: process.env['PATH'] ?? '',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `kill${randomBytes(4).toString('hex')}:`,
    JWT_SECRET,
    DAI_HOST: dai.url,
    CONTENT_ORIGIN: 'https://origin.example.org',
    ALLOW_PRIVATE_OUTBOUND: 'true',
    UPSTREAM_DEADLINE_MS: '1000',
    // The takeover waits out the dead owner's lease: 5 s (renewed every 1.7 s), not the default 30 s.
    FEED_LEASE_MS: String(FEED_LEASE_MS),
    LOG_LEVEL: 'warn',
  };
  const instances: Array<{ child: ChildProcess; base: string }> = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'bin', 'server.js')], {
      env: { ...env, PORT: String(port), DATA_DIR: tempDir(t) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    t.teardown(() => void child.kill('SIGKILL'));
    const base = `http://127.0.0.1:${port}`;
    t.ok(await until(async () => (await timedGet(`${base}/healthz`)).status === 200, 20_000), `instance ${i} up`);
    instances.push({ child, base });
  }
  const tok = await mintToken(loadConfig({}, { jwtSecret: JWT_SECRET }));
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  t.teardown(() => sql.end());

  const created = await call(instances[0]!.base, 'POST', '/api/v1/global-config', {
    token: tok,
    json: {
      brand_name: 'kill-one',
      feed_name: 'kill-one',
      feed_uri: `${feed.url}/next.rss?page=0`,
      pagination_supported: true,
      pagination_params: {},
    },
  });
  t.equal(created.status, 201);
  const owner = await until(async () => {
    const [run] = await sql<
      { lease_owner: string | null; pages: number }[]
    >`select lease_owner, pages from feed_run where feed_name = 'kill-one'`;
    return run?.lease_owner && run.pages >= 1 ? run.lease_owner : undefined;
  }, 20_000);
  t.ok(owner, `a pull in progress, leased by ${owner}`);
  const dying = instances.find((i) => i.child.pid === Number(owner?.split('-')[0]));
  t.ok(dying, 'the lease owner is one of the two');
  if (!dying) return;
  const survivor = instances.find((i) => i !== dying)!;

  t.equal((await timedGet(survivor.base + MANIFEST)).status, 200, 'the survivor serves the stream before the kill');
  const load = drive(() => timedGet(survivor.base + MANIFEST));
  t.teardown(() => load.stop());
  await sleep(300);
  dying.child.kill('SIGKILL');
  await new Promise((r) => dying.child.once('exit', r));
  const killedAt = Date.now();
  const [cut] = await sql<{ state: string }[]>`select state from feed_run where feed_name = 'kill-one'`;
  t.equal(cut?.state, 'running', 'the pull was cut off by the kill');
  feed.delayMs = 0;

  const api = await timedGet(`${survivor.base}/api/v1/brand-recognition`, { authorization: `Bearer ${tok}` });
  t.equal(api.status, 200, `the survivor's management API answers (${api.ms} ms)`);
  // The dead owner's lease (FEED_LEASE_MS) lapses; the survivor claims the run and finishes it.
  const done = await until(
    async () => {
      const [run] = await sql<
        { state: string; lease_owner: string | null; last_error: string | null }[]
      >`select state, lease_owner, last_error from feed_run where feed_name = 'kill-one'`;
      return run?.state === 'idle' && !run.last_error;
    },
    45_000,
    250,
  );
  t.ok(done, `the survivor finished the pull ${Math.round((Date.now() - killedAt) / 1000)} s after the kill`);
  const [{ n, distinct }] =
    (await sql`select count(*)::int as n, count(distinct guid)::int as distinct from catalog_item where brand_name = 'kill-one'`) as unknown as [
      { n: number; distinct: number },
    ];
  t.equal(n, 40, 'every item stored');
  t.equal(distinct, 40, 'exactly once');
  await load.stop();
  t.comment(`survivor manifests: ${describe(load.results)}`);
  t.ok(
    load.results.length > 20 && load.results.every((r) => r.status === 200),
    'the survivor served every manifest throughout',
  );
  t.ok(
    load.results.every((r) => r.ms < 1000),
    'none waited past the deadline',
  );
});
