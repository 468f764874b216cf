/**
 * The instance that owns a break's worker lease is killed -9 mid-break (real child processes):
 * the other instance takes the lease once it lapses and finishes the break; every planned
 * segment gets composed and its manifests carry the squeezed segments and the cue-in.
 */
import t from 'tap';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import postgres from 'postgres';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { TranscoderSim } from '../../lib/sim/transcoder.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, tempDir, JWT_SECRET, REDIS_URL } from '../helpers/services.js';
import { projectRoot } from '../../lib/paths.js';
import { mintToken } from '../../lib/http/auth.js';
import { loadConfig } from '../../lib/config/index.js';

const SEG = 2;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function until<T>(check: () => Promise<T | undefined | false>, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 150));
  }
  return undefined;
}

t.test('kill -9 the worker-owning instance mid-break: the other finishes it', async (t) => {
  if (!(await needServices(t))) return;
  execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'ensure-build.js')], { stdio: 'inherit' });
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 20, adEvery: 0, adSegments: 0 },
  }).start();
  const transcoder = await new TranscoderSim({ delayMs: 300 }).start();
  t.teardown(async () => {
    sim.stop();
    await transcoder.stop();
  });
  const databaseUrl = await freshSchemaUrl(t);
  const common = {
    PATH: process.env['PATH'] ?? '',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `e2e${randomBytes(4).toString('hex')}:`,
    JWT_SECRET,
    DAI_HOST: sim.url,
    CONTENT_ORIGIN: sim.url,
    TRANSCODER_URL: transcoder.url,
    BEACON_SECRET: 'beacon-secret-for-tests-0123456789',
    ALLOW_PRIVATE_OUTBOUND: 'true',
    BREAK_LEASE_MS: '2000',
    BREAK_TICK_MS: '200',
    LOG_LEVEL: 'warn',
  };
  // Both instances start at once: their start-ups (process, migrations, stores) overlap.
  const instances: Array<{ child: ChildProcess; base: string }> = [];
  for (let i = 0; i < 2; i++) {
    const port = String(await freePort());
    const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'bin', 'server.js')], {
      env: { ...common, PORT: port, DATA_DIR: tempDir(t) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    t.teardown(() => void child.kill('SIGKILL'));
    instances.push({ child, base: `http://127.0.0.1:${port}` });
  }
  const up = await Promise.all(
    instances.map(({ base }) => until(async () => (await call(base, 'GET', '/healthz')).status === 200, 20_000)),
  );
  up.forEach((ok, i) => t.ok(ok, `instance ${i} up`));
  const tok = await mintToken(loadConfig({}, { jwtSecret: JWT_SECRET }));
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  t.teardown(() => sql.end());
  const api = (base: string, method: string, p: string, json?: unknown) =>
    call(base, method, `/api/v1/${p}`, { token: tok, ...(json === undefined ? {} : { json }) });

  const [first] = instances;
  t.equal((await api(first!.base, 'PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  const ev = await api(first!.base, 'PUT', 'squeeze-event-config', {
    asset_id: 'KILL',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
    // The transcoder's time: a segment listed as content stays content (docs/decisions.md).
    live_edge_delay_segments: 2,
  });
  t.equal(
    (
      await api(first!.base, 'PUT', 'squeeze-configured-ad', {
        event_id: ev.body.id,
        abid: 'c',
        ad_uri: 'https://cdn.example.com/c.mp4',
        duration: 30,
        is_curated: true,
      })
    ).status,
    200,
  );
  const started = await api(first!.base, 'POST', 'squeeze-ad-break', { event_id: ev.body.id, break_duration: 5 * SEG });
  t.equal(started.status, 200);
  const id = started.body.break_id as string;

  const owner = await until(async () => {
    const [row] = await sql<{ lease_owner: string | null }[]>`select lease_owner from squeeze_break where id = ${id}`;
    const [ready] = await sql<
      { n: number }[]
    >`select count(*)::int as n from squeeze_break_segment where break_id = ${id} and status = 'ready'`;
    return row?.lease_owner && ready!.n > 0 ? row.lease_owner : undefined;
  }, 20_000);
  t.ok(owner, 'a lease owner with a first ready segment');
  if (!owner)
    t.comment(
      JSON.stringify(
        await sql`select status, lease_owner, lease_until, start_time, end_time, now() from squeeze_break`,
      ),
      JSON.stringify(await sql`select status, count(*)::int from squeeze_break_segment group by status`),
    );
  const pid = Number(owner!.split('-')[0]);
  const dying = instances.find((i) => i.child.pid === pid);
  t.ok(dying, 'the owner is one of the two instances');
  const survivor = instances.find((i) => i !== dying)!;
  const killedAt = Date.now();
  dying!.child.kill('SIGKILL');
  await new Promise((r) => dying!.child.once('exit', r));

  const done = await until(async () => {
    const g = await api(survivor.base, 'GET', `squeeze-ad-break/${id}`);
    return g.body?.status === 'completed' && g.body;
  }, 40_000);
  t.ok(done, 'the survivor completed the break');
  t.ok(
    done?.segments.every((s: { status: string }) => s.status === 'ready'),
    'every planned segment composed',
  );
  const [late] = await sql<
    { n: number }[]
  >`select count(*)::int as n from squeeze_break_segment where break_id = ${id} and status = 'ready' and updated_at > ${new Date(killedAt)}`;
  t.ok(late!.n > 0, `segments composed after the kill (${late!.n})`);
  const manifest = await call(survivor.base, 'GET', '/dai/manifest/linear/hls/event/KILL/stream/V1/variant/720p.m3u8');
  t.ok(
    manifest.text.includes(`${transcoder.url}/out/`) && manifest.text.includes('#EXT-X-CUE-IN'),
    'squeezed segments and the cue-in in the manifest',
  );
});
