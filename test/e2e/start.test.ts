/**
 * The service as a user runs it: `node dist/bin/server.js` with no database configured (embedded
 * PostgreSQL under DATA_DIR), killed -9 and restarted, stopped with SIGTERM.
 */
import t from 'tap';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { call } from '../helpers/http.js';
import { tempDir } from '../helpers/services.js';
import { projectRoot } from '../../lib/paths.js';
import { isProcessAlive } from '../../lib/store/process-alive.js';

const serverJs = path.join(projectRoot, 'dist', 'bin', 'server.js');
const tokenJs = path.join(projectRoot, 'dist', 'bin', 'token.js');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'pg', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [serverJs], {
    env: { PATH: process.env['PATH'] ?? '', ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${env['PORT']}/healthz`;
  while (Date.now() - started < 15_000) {
    const ok = await call(url, 'GET', '').then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, ms: Date.now() - started };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('the service did not answer /healthz within 15 s');
}

t.test('npm start on embedded defaults: restart after kill -9, SIGTERM stops everything', async (t) => {
  execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'ensure-build.js')], { stdio: 'inherit' });
  const dataDir = tempDir(t);
  const port = String(await freePort());
  const env = { DATA_DIR: dataDir, PORT: port };
  const base = `http://127.0.0.1:${port}`;

  const first = await startServer(env);
  t.ok(first.ms < 15_000, `healthy after ${first.ms} ms (first start, initdb included)`);
  t.teardown(() => void first.child.kill('SIGKILL'));
  const tok = execFileSync(process.execPath, [tokenJs], { env: { PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir } })
    .toString()
    .trim();
  t.match(tok, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'the CLI mints a token from the generated secret');
  const created = await call(base, 'POST', '/api/v1/brand-recognition', {
    token: tok,
    json: { brand_name: 'survivor', match_type: 'hostname', match_value: '*.survivor.tv' },
  });
  t.equal(created.status, 201);

  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  const orphan = postmasterPid(dataDir);
  t.ok(orphan && isProcessAlive(orphan), 'the embedded server outlived the kill -9');

  const second = await startServer(env);
  t.teardown(() => void second.child.kill('SIGKILL'));
  t.ok(!isProcessAlive(orphan!), 'the orphaned server was stopped on restart');
  const list = await call(base, 'GET', '/api/v1/brand-recognition', { token: tok });
  t.same(list.body, [created.body], 'the rule survived kill -9');
  const resolved = await call(base, 'POST', '/api/v1/brand-recognition/resolve', {
    token: tok,
    json: { headers: { 'X-Forwarded-Host': 'live.survivor.tv' } },
  });
  t.equal(resolved.body?.brand_name, 'survivor');

  const pgPid = postmasterPid(dataDir)!;
  const stopStarted = Date.now();
  // The exit event (not a poll of exitCode) tells the exit status: the process can be gone before it is delivered.
  const exited = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
  second.child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
  while (isProcessAlive(pgPid) && Date.now() - stopStarted < 10_000) await new Promise((r) => setTimeout(r, 50));
  const took = Date.now() - stopStarted;
  t.equal(code, 0, 'clean exit');
  t.notOk(isProcessAlive(pgPid), 'embedded PostgreSQL stopped too');
  t.ok(took < 10_000, `stopped in ${took} ms`);
});

t.test('a bad configuration value stops start-up with a message naming it', async (t) => {
  execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'ensure-build.js')], { stdio: 'inherit' });
  const res = spawn(process.execPath, [serverJs], {
    env: { PATH: process.env['PATH'] ?? '', PORT: 'eighty', DATA_DIR: tempDir(t) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  res.stderr!.on('data', (d) => (err += d));
  const code = await new Promise((r) => res.once('exit', r));
  t.equal(code, 2);
  t.match(err, /PORT/);
});
