/**
 * `npm run bench -- --scale` (issue 29 item 2): three service instances (`dist/bin/server.js`, one
 * Postgres schema, one Redis prefix) behind Debian's nginx as the load balancer, viewers refreshing
 * DAI variants through it, a break running, and then:
 *   (a) every instance restarted in turn with SIGTERM (the drain: /readyz 503, still serving for
 *       SHUTDOWN_DRAIN_MS, then the listener closes and in-flight requests finish);
 *   (b) `kill -9` of the instance holding the break's lease, then started again.
 * Counted: viewer requests and failures per phase, the management API's answers, how long the
 * break's lease took to move, breaks and transcoder jobs per output (none twice).
 * nginx is open source: it has no active health checks, so it never reads /readyz; it retries a
 * GET on the next server on `error timeout http_502 http_503` and marks a server failed for
 * `fail_timeout` after one failure (passive checks). Bounded: tens of seconds, loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { DaiHostSim } from '../lib/sim/dai-host.js';
import { TranscoderSim } from '../lib/sim/transcoder.js';
import { mintToken } from '../lib/http/auth.js';
import { loadConfig } from '../lib/config/index.js';
import { startNginx } from './nginx.js';
import { freePort, root, waitForPort } from './procs.js';

const INSTANCES = 3;
const VIEWERS = 40;
const REFRESH_MS = 500;
const SEG_SEC = 2;
/** `--drain-ms N` overrides it (0: the listener closes at SIGTERM, as before issue 29). */
const DRAIN_MS = process.argv.includes('--drain-ms')
  ? Number(process.argv[process.argv.indexOf('--drain-ms') + 1])
  : 1500;
const LEASE_MS = 4000;

interface Instance {
  port: number;
  child: ChildProcess;
}

interface Sample {
  at: number;
  status: number;
  ms: number;
}

export interface ScaleResult {
  phases: Array<{
    phase: string;
    viewerRequests: number;
    viewerFailures: number;
    failedStatuses: Record<string, number>;
    apiRequests: number;
    apiNon200: number;
    seconds: number;
    note: string;
  }>;
  leaseMovedMs: number | undefined;
  breaks: number;
  maxJobsPerOutput: number;
  jobs: number;
}

async function timed(url: string, headers: Record<string, string> = {}): Promise<Sample> {
  const at = Date.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return { at, status: res.status, ms: Date.now() - at };
  } catch {
    return { at, status: 0, ms: Date.now() - at };
  }
}

/** Loops calling fn every everyMs until stopped; every answer kept. */
function loop(fn: () => Promise<Sample>, everyMs: number, into: Sample[]): () => Promise<void> {
  let running = true;
  const done = (async () => {
    while (running) {
      into.push(await fn());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return async () => {
    running = false;
    await done;
  };
}

export async function runScale(): Promise<ScaleResult> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'sqz-scale-'));
  const pgUrl = process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `scale_${randomBytes(5).toString('hex')}`;
  const admin = postgres(pgUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create schema ${schema}`);
  const u = new URL(pgUrl);
  u.searchParams.set('search_path', schema);
  const sql = postgres(u.toString(), { max: 1, onnotice: () => undefined });
  const dai = await new DaiHostSim({
    shape: { segmentSec: SEG_SEC, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const transcoder = await new TranscoderSim().start();
  const jwtSecret = randomBytes(24).toString('hex');
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOST: '127.0.0.1',
    DATABASE_URL: u.toString(),
    REDIS_URL: process.env['REDIS_URL'] || 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `scale${randomBytes(4).toString('hex')}:`,
    JWT_SECRET: jwtSecret,
    BEACON_SECRET: randomBytes(16).toString('hex'),
    DAI_HOST: dai.url,
    CONTENT_ORIGIN: dai.url,
    TRANSCODER_URL: transcoder.url,
    ALLOW_PRIVATE_OUTBOUND: 'true',
    LOG_LEVEL: 'warn',
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    SHUTDOWN_GRACE_MS: '5000',
    BREAK_LEASE_MS: String(LEASE_MS),
    BREAK_TICK_MS: '500',
    RATE_LIMITS: JSON.stringify(
      Object.fromEntries(
        ['api', 'auth_failure', 'beacon', 'vast', 'adproxy', 'stream', 'stitch'].map((k) => [
          k,
          { rate: 1e6, burst: 1e6 },
        ]),
      ),
    ),
  };
  const server = path.join(root, 'dist', 'bin', 'server.js');
  const launch = async (port: number): Promise<Instance> => {
    const child = spawn(process.execPath, [server], {
      env: { ...env, PORT: String(port), DATA_DIR: mkdtempSync(path.join(work, 'data-')) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const died = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`an instance exited (${code}) before it was ready`))),
    );
    await Promise.race([waitForPort(port, 60_000, '/readyz'), died]);
    died.catch(() => undefined);
    return { port, child };
  };
  const exited = (i: Instance) =>
    new Promise((r) => (i.child.exitCode !== null ? r(undefined) : i.child.once('exit', r)));
  const instances: Instance[] = [];
  let lb: ChildProcess | undefined;
  const viewers: Sample[] = [];
  const api: Sample[] = [];
  const stops: Array<() => Promise<void>> = [];
  try {
    for (let i = 0; i < INSTANCES; i++) instances.push(await launch(await freePort()));
    const ports = instances.map((i) => i.port);
    const nginx = await startNginx(
      work,
      'scale-lb',
      (port) => `  upstream service {
    ${ports.map((p) => `server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n    ')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 1s;
      proxy_read_timeout 5s;
    }
  }`,
      undefined,
    );
    lb = nginx.child;
    const base = `http://127.0.0.1:${await nginx.port}`;
    const token = await mintToken(loadConfig({}, { jwtSecret, dataDir: work }));
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async (method: string, p: string, json: unknown) => {
      const res = await fetch(`${base}/api/v1/${p}`, { method, headers: auth, body: JSON.stringify(json) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    await call('PUT', 'squeeze-brand-config', { brand_id: 'scale' });
    const ev = await call('PUT', 'squeeze-event-config', {
      asset_id: 'SCALE',
      source_uri: `${dai.url}/source/master.m3u8`,
      brand_config_id: 'scale',
    });
    const eventId = ev.body['id'] as number;
    await call('PUT', 'squeeze-configured-ad', {
      event_id: eventId,
      abid: 'c1',
      ad_uri: 'https://cdn.example.com/c1.mp4',
      duration: 30,
      is_curated: true,
    });

    for (let v = 0; v < VIEWERS; v++) {
      const url = `${base}/dai/manifest/linear/hls/event/SCALE/stream/viewer${v}:LOC/variant/720p.m3u8`;
      stops.push(loop(() => timed(url), REFRESH_MS, viewers));
    }
    stops.push(loop(() => timed(`${base}/api/v1/squeeze-ad-break?event_id=${eventId}`, auth), 500, api));
    await new Promise((r) => setTimeout(r, 3000)); // every viewer registered
    const put = await call('PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 60 });
    if (put.status !== 200) throw new Error(`the break did not start: ${put.status} ${JSON.stringify(put.body)}`);
    const breakId = String(put.body['break_id']);
    const leaseOwner = async () =>
      (await sql<{ lease_owner: string | null }[]>`select lease_owner from squeeze_break where id = ${breakId}`)[0]
        ?.lease_owner ?? null;

    const phases: ScaleResult['phases'] = [];
    const phase = async (name: string, note: string, body: () => Promise<void>) => {
      const from = Date.now();
      const v0 = viewers.length;
      const a0 = api.length;
      await body();
      const vs = viewers.slice(v0);
      const as = api.slice(a0);
      phases.push({
        phase: name,
        viewerRequests: vs.length,
        viewerFailures: vs.filter((s) => s.status !== 200).length,
        failedStatuses: vs
          .filter((s) => s.status !== 200)
          .reduce<Record<string, number>>((m, s) => ((m[s.status] = (m[s.status] ?? 0) + 1), m), {}),
        apiRequests: as.length,
        apiNon200: as.filter((s) => s.status !== 200).length,
        seconds: Math.round((Date.now() - from) / 100) / 10,
        note,
      });
      process.stdout.write(`${JSON.stringify(phases.at(-1))}\n`);
    };

    await phase('steady', 'three instances, break scheduled', () => new Promise((r) => setTimeout(r, 3000)));
    await phase(
      '(a) rolling restart, SIGTERM',
      `each instance in turn: SIGTERM, exit, started again on its port, /readyz 200`,
      async () => {
        for (let i = 0; i < instances.length; i++) {
          const old = instances[i]!;
          old.child.kill('SIGTERM');
          await exited(old);
          instances[i] = await launch(old.port);
        }
      },
    );
    let leaseMovedMs: number | undefined;
    await phase(
      '(b) kill -9 of the lease owner',
      `the break's lease owner killed -9, started again after its lease moved`,
      async () => {
        const owner = await leaseOwner();
        const victim = instances.find((i) => owner?.startsWith(`${i.child.pid}`)) ?? instances[0]!;
        victim.child.kill('SIGKILL');
        await exited(victim);
        const killedAt = Date.now();
        while (Date.now() - killedAt < LEASE_MS * 4) {
          const now = await leaseOwner();
          if (now && now !== owner) {
            leaseMovedMs = Date.now() - killedAt;
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        instances[instances.indexOf(victim)] = await launch(victim.port);
      },
    );
    await phase('after', 'all three back', () => new Promise((r) => setTimeout(r, 2000)));
    const breaks = Number(
      (await sql<{ n: string }[]>`select count(*) as n from squeeze_break where event_id = ${eventId}`)[0]!.n,
    );
    return {
      phases,
      leaseMovedMs,
      breaks,
      maxJobsPerOutput: Math.max(0, ...transcoder.jobsByKey.values()),
      jobs: transcoder.jobs.length,
    };
  } finally {
    await Promise.all(stops.map((s) => s()));
    for (const i of instances) i.child.kill('SIGKILL');
    lb?.kill('SIGTERM');
    dai.stop();
    await transcoder.stop();
    await sql.end();
    await admin.unsafe(`drop schema if exists ${schema} cascade`);
    await admin.end();
    rmSync(work, { recursive: true, force: true });
  }
}

export function printScale(r: ScaleResult): void {
  for (const p of r.phases)
    process.stdout.write(
      `${p.phase.padEnd(34)} ${p.seconds} s  viewer requests ${p.viewerRequests}, failed ${p.viewerFailures}${p.viewerFailures ? ` ${JSON.stringify(p.failedStatuses)}` : ''}; API ${p.apiRequests}, non-200 ${p.apiNon200}  (${p.note})\n`,
    );
  process.stdout.write(
    `break lease moved ${r.leaseMovedMs ?? 'never'} ms after the kill; breaks for the event: ${r.breaks}; transcoder jobs ${r.jobs}, at most ${r.maxJobsPerOutput} per output\n`,
  );
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
