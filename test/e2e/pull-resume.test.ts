/**
 * The service killed -9 in the middle of a backfill and started again: the run resumes from its
 * last committed page once the dead instance's lease lapses, and every item is stored exactly once.
 */
import t from 'tap';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import postgres from 'postgres';
import { FeedHostSim } from '../../lib/sim/feed-host.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, tempDir, JWT_SECRET } from '../helpers/services.js';
import { projectRoot } from '../../lib/paths.js';
import { mintToken } from '../../lib/http/auth.js';
import { loadConfig } from '../../lib/config/index.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

t.test('kill -9 mid-backfill, restart, resume', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'ensure-build.js')], { stdio: 'inherit' });
  const sim = await new FeedHostSim(50).start();
  t.teardown(() => sim.stop());
  sim.delayMs = 1500; // pages after the first take a while: time to kill the service mid-run
  const databaseUrl = await freshSchemaUrl(t);
  const port = String(await freePort());
  const env = {
    PATH: process.env['PATH'] ?? '',
    DATABASE_URL: databaseUrl,
    PORT: port,
    JWT_SECRET,
    ALLOW_PRIVATE_OUTBOUND: 'true',
    DATA_DIR: tempDir(t),
    // The restarted service waits out its dead predecessor's lease: 5 s, not the default 30 s.
    FEED_LEASE_MS: '5000',
    LOG_LEVEL: 'warn',
  };
  const base = `http://127.0.0.1:${port}`;
  const start = async (): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'bin', 'server.js')], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    t.teardown(() => void child.kill('SIGKILL'));
    t.ok(await until(async () => (await call(base, 'GET', '/healthz')).status === 200, 15_000), 'service up');
    return child;
  };
  const tok = await mintToken(loadConfig({}, { jwtSecret: JWT_SECRET }));
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  t.teardown(() => sql.end());

  const first = await start();
  const created = await call(base, 'POST', '/api/v1/global-config', {
    token: tok,
    json: {
      brand_name: 'kill',
      feed_name: 'kill-feed',
      feed_uri: `${sim.url}/next.rss?page=0`,
      pagination_supported: true,
      pagination_params: {},
    },
  });
  t.equal(created.status, 201);
  t.ok(
    await until(
      async () => (await sql`select pages from feed_run where feed_name = 'kill-feed'`)[0]?.['pages'] >= 2,
      20_000,
    ),
    'two pages committed',
  );
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const [mid] = await sql`select state, pages from feed_run where feed_name = 'kill-feed'`;
  t.equal(mid?.['state'], 'running', 'the run was cut off');
  sim.delayMs = 0;
  sim.requests.length = 0;
  await start();
  t.ok(
    await until(
      async () => (await sql`select state from feed_run where feed_name = 'kill-feed'`)[0]?.['state'] === 'idle',
      60_000,
    ),
    'resumed and finished after the lease lapsed',
  );
  const [{ n, distinct }] =
    (await sql`select count(*)::int as n, count(distinct guid)::int as distinct from catalog_item where brand_name = 'kill'`) as unknown as [
      { n: number; distinct: number },
    ];
  t.equal(n, 50, 'every item');
  t.equal(distinct, 50, 'exactly once');
  t.notOk(
    sim.requests.includes('/next.rss?page=0'),
    `resumed from the cursor, not the head (${sim.requests.join(', ')})`,
  );
});
