/**
 * `npm run bench -- --rig [--runs N]`: distinct-stream manifests measured the way an outsider
 * measured them (issue 20), so the figure the project reports is the one a buyer reproduces:
 * - upstream: nginx serving one precomputed 30-segment live variant (6 s segments, root-relative
 *   URIs, a program-date-time on each) for every path, pinned to the load core with wrk;
 * - the service as `npm start` runs it (its Node flags, embedded Postgres, in-memory state, default
 *   logging and limits), the benchmark's event configured through the management API with a window
 *   of 10 segments and a live-edge delay of 2;
 * - nginx `proxy_pass` + `sub_filter`, and a typical Node proxy (node:http + undici Pool(64) +
 *   hls-parser parse → absolute URIs → window → stringify);
 * - wrk, one thread, 100 connections, 10 s, round-robin over 1,000 stream paths, every request
 *   with a unique `?n=<salt>-<counter>` (no URL repeats, across runs either), after 3 s of the same
 *   load for every target. wrk plays a CDN edge: each stream's requests name its viewer in
 *   `X-Forwarded-For` (one address per stream), and the service trusts the edge (TRUSTED_PROXIES),
 *   as a deployment behind a CDN does; without it every stream would count against one client's
 *   new-stream limit (issue 24) and all but the first few would be answered 429.
 * Any answer that is not 2xx fails the run: a fast error is not a manifest.
 * In every run each target is started fresh and warmed; then each is measured for 10 s in five
 * rounds of 2 s whose order rotates, so that a slow phase of the machine (this kind has them: tens
 * of seconds at half speed) weighs on every target alike (docs/decisions.md, "the rig interleaves").
 * Reported: req/s, p50/p99 (the median of the rounds'), and the server's CPU time per request from
 * /proc (a figure that does not move with the load generator).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { hasCommand, wrk } from './load.js';
import {
  cpuSplit,
  freePort,
  launch,
  LOAD_CPU,
  node,
  root,
  rssMiB,
  SERVER_CPU,
  SERVICE_FLAGS,
  stopTarget,
  waitForPort,
  type Target,
} from './procs.js';
import { nginxProxy, nginxStatic } from './nginx.js';

export const RIG_PATH = (i: number) =>
  `/dai/manifest/linear/hls/pa/event/BENCH/stream/s${i}:LOC/variant/720p/bandwidth/2200000.m3u8`;
const CONNECTIONS = 100;
const STREAMS = 1000;
const SEGMENTS = 30;
const SEGMENT_SEC = 6;
const CONTENT_ORIGIN = 'https://origin.example.org';

export interface RigRow {
  run: number;
  target: string;
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  cpuUsPerReq: number;
  /** Of cpuUsPerReq, the part spent in the kernel (loopback delivery, wake-ups, system calls). */
  kernelUsPerReq: number;
  cpuPct: number;
  rssMiB: number;
}

/** Rounds per run: each target's measured time is split into this many, their order rotating. */
const ROUNDS = 5;

/** One round of one target: wrk's figures and the server's CPU seconds during it. */
type RoundResult = Awaited<ReturnType<typeof wrk>> & { user: number; kernel: number };

/**
 * A target's row from its rounds: req/s over the whole measured time, CPU per request from the
 * CPU seconds summed, latency percentiles as the median of the rounds' (wrk reports no histogram
 * to merge), errors summed.
 */
function rigRow(run: number, target: string, rounds: RoundResult[], seconds: number, rss: number): RigRow {
  const each = seconds / rounds.length;
  const requests = rounds.reduce((n, r) => n + r.rps * each, 0);
  const user = rounds.reduce((n, r) => n + r.user, 0);
  const kernel = rounds.reduce((n, r) => n + r.kernel, 0);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    run,
    target,
    rps: Math.round(requests / seconds),
    p50ms: median(rounds.map((r) => r.p50ms)),
    p99ms: median(rounds.map((r) => r.p99ms)),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    cpuPct: Math.round(((user + kernel) / seconds) * 100),
    // One decimal: the service and nginx are within a microsecond of each other on some machines. The
    // /proc tick (10 ms), read around each of the five rounds, resolves ~0.1 µs over ~450,000 requests.
    cpuUsPerReq: requests ? Math.round(((user + kernel) * 1e7) / requests) / 10 : 0,
    kernelUsPerReq: requests ? Math.round((kernel * 1e7) / requests) / 10 : 0,
    rssMiB: rss,
  };
}

/** The one live variant the upstream serves: 30 segments, root-relative URIs, PDT on each. */
export function rigVariant(now = Date.now()): string {
  const first = Math.floor(now / 1000 / SEGMENT_SEC) - SEGMENTS;
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${SEGMENT_SEC}`,
    `#EXT-X-MEDIA-SEQUENCE:${first}`,
  ];
  for (let seq = first; seq < first + SEGMENTS; seq++) {
    lines.push(
      `#EXT-X-PROGRAM-DATE-TIME:${new Date(seq * SEGMENT_SEC * 1000).toISOString()}`,
      `#EXTINF:${SEGMENT_SEC}.000,`,
      `/content/720p/seg_${seq}.ts`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** wrk's script: the paths round-robin over the streams, a query no run repeats, formatted as wrk sends them. */
function wrkScript(dir: string, salt: string): string {
  const file = path.join(dir, `rig-${salt}.lua`);
  writeFileSync(
    file,
    `local counter = 0
request = function()
  counter = counter + 1
  local s = counter % ${STREAMS}
  wrk.headers["X-Forwarded-For"] = "10.77." .. math.floor(s / 256) .. "." .. (s % 256)
  return wrk.format("GET", "/dai/manifest/linear/hls/pa/event/BENCH/stream/s" .. s .. ":LOC/variant/720p/bandwidth/2200000.m3u8?n=${salt}-" .. counter)
end
`,
  );
  return file;
}

/** One measured (or warm-up) load: a fresh salt, so no URL repeats across runs. */
function load(port: number, seconds: number, dir: string): ReturnType<typeof wrk> {
  return wrk(CONNECTIONS, seconds, wrkScript(dir, randomBytes(6).toString('hex')), port, LOAD_CPU);
}

/**
 * The service as `npm start` runs it, on its embedded defaults, with the benchmark's event
 * configured through the API. workers: `WORKERS=n` with Redis (lib/supervisor.ts), on every core.
 */
async function service(upstreamPort: number, workers?: number): Promise<Target> {
  const port = await freePort();
  const cluster = workers
    ? {
        WORKERS: String(workers),
        REDIS_URL: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
        REDIS_KEY_PREFIX: `rig${randomBytes(4).toString('hex')}:`,
      }
    : {};
  const env = {
    ...cluster,
    ...process.env,
    PORT: String(port),
    // Under /tmp itself: as root the embedded Postgres runs as another user, who cannot enter the rig's 0700 folder.
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'sqz-rig-service-')),
    DAI_HOST: `http://127.0.0.1:${upstreamPort}`,
    CONTENT_ORIGIN,
    LOG_LEVEL: 'info',
    TRUSTED_PROXIES: '127.0.0.1/32', // wrk is the CDN edge
  };
  const serverJs = path.join(root, 'dist', 'bin', 'server.js');
  const t = launch(
    process.execPath,
    // RIG_NODE_FLAGS: extra flags for the service alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--perf-basic-prof`.
    [...SERVICE_FLAGS, ...(process.env['RIG_NODE_FLAGS']?.split(' ').filter(Boolean) ?? []), serverJs],
    workers && workers > 1 ? undefined : SERVER_CPU,
    env,
    { silent: !process.env['RIG_VERBOSE'] },
  );
  t.port.catch(() => undefined); // it prints no READY line: /readyz tells
  await waitForPort(port, 60_000, '/readyz').catch((err: Error) => {
    t.child.kill('SIGKILL');
    throw new Error(`${err.message}; the service printed:\n${t.output?.().slice(-2000)}`);
  });
  try {
    const token = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [path.join(root, 'dist', 'bin', 'token.js')], { env });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error('token failed'))));
    });
    const put = async (url: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`PUT ${url}: ${res.status} ${await res.text()}`);
    };
    await put('/api/v1/squeeze-brand-config', { brand_id: 'bench' });
    await put('/api/v1/squeeze-event-config', {
      asset_id: 'BENCH',
      source_uri: 'https://origin.example.org/live/master.m3u8',
      brand_config_id: 'bench',
      windows_segs: 10,
      live_edge_delay_segments: 2,
    });
    // The event cache is filled on change (each worker's through Redis): requests prove the window applies everywhere.
    let probe = '';
    let kept = 0;
    for (let i = 0, ok = 0; ok < 4 && i < 100; i++) {
      probe = await (await fetch(`http://127.0.0.1:${port}${RIG_PATH(0)}?n=probe${i}`)).text();
      kept = probe.split('#EXTINF').length - 1;
      if (kept === 10) ok++;
      else await new Promise((r) => setTimeout(r, 100));
    }
    if (kept !== 10) throw new Error(`the service kept ${kept} segments, not the configured window of 10:\n${probe}`);
  } catch (err) {
    t.child.kill('SIGTERM'); // its embedded Postgres stops with it
    throw err;
  }
  return { child: t.child, port: Promise.resolve(port) };
}

export interface RigOptions {
  /** Measured seconds per target and run, taken in `rounds` rounds. */
  seconds?: number;
  rounds?: number;
  warmupSec?: number;
  /** Instead of the three targets: the service with WORKERS=1 (pinned) and WORKERS=n (every core), both on Redis (issue 18). */
  workers?: number;
}

export async function runRig(runs: number, opts: RigOptions = {}): Promise<RigRow[]> {
  if (!hasCommand('wrk') || !hasCommand('nginx'))
    throw new Error('the rig needs wrk and nginx (Debian packages wrk, nginx-light)');
  const seconds = opts.seconds ?? 10;
  const warmupSec = opts.warmupSec ?? 3;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-rig-'));
  chmodSync(dir, 0o755); // nginx's worker reads the variant as its own user
  const variant = path.join(dir, 'variant.m3u8');
  writeFileSync(variant, rigVariant());
  const upstream = await nginxStatic(dir, variant, LOAD_CPU);
  const upstreamPort = await upstream.port;
  process.stdout.write(`rig: machine ${machine()}\n`);
  process.stdout.write(
    `rig: upstream nginx on :${upstreamPort} (30-segment variant, ${Buffer.byteLength(rigVariant())} bytes), ${runs} run(s), ${warmupSec} s warm-up + ${seconds} s each\n`,
  );
  const targets: Array<[string, () => Promise<Target>]> = opts.workers
    ? [
        ['service WORKERS=1 (Redis, one core)', () => service(upstreamPort, 1)],
        [`service WORKERS=${opts.workers} (Redis, every core)`, () => service(upstreamPort, opts.workers)],
      ]
    : [
        ['service (npm start)', () => service(upstreamPort)],
        ['nginx proxy_pass + sub_filter', async () => (await nginxProxy(dir, upstreamPort, SERVER_CPU))!],
        [
          'typical Node (undici Pool + hls-parser)',
          async () => node('targets/node-typical.js', [`http://127.0.0.1:${upstreamPort}`], SERVER_CPU),
        ],
      ];
  const rows: RigRow[] = [];
  const failures: string[] = [];
  const rounds = opts.rounds ?? ROUNDS;
  try {
    for (let run = 1; run <= runs; run++) {
      // Every target of the run is up (started fresh) and warmed before any is measured; the
      // measured time is then taken in rounds that rotate the order, so a slow phase of the machine
      // (seen here: tens of seconds at half speed) falls on every target alike, not on whichever
      // happened to run during it.
      const started: Array<{ name: string; t: Target; port: number; rounds: RoundResult[] }> = [];
      try {
        for (const [name, start] of targets) {
          const t = await start();
          started.push({ name, t, port: await t.port, rounds: [] });
        }
        for (const s of started) await load(s.port, warmupSec, dir);
        for (let round = 0; round < rounds; round++)
          for (let i = 0; i < started.length; i++) {
            const s = started[(round + i) % started.length]!;
            const pid = s.t.child.pid!;
            const before = cpuSplit(pid);
            const r = await load(s.port, seconds / rounds, dir);
            const after = cpuSplit(pid);
            s.rounds.push({ ...r, user: after.user - before.user, kernel: after.kernel - before.kernel });
          }
        for (const s of started) {
          const row = rigRow(run, s.name, s.rounds, seconds, rssMiB(s.t.child.pid!));
          rows.push(row);
          if (row.errors) failures.push(`run ${run} ${s.name}: ${row.errors} answers were errors or not 2xx`);
          process.stdout.write(
            `  run ${run}  ${s.name.padEnd(40)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50ms} ms  p99 ${row.p99ms} ms  cpu ${row.cpuPct}% ${row.cpuUsPerReq} µs/req (kernel ${row.kernelUsPerReq})  rss ${row.rssMiB} MiB${row.errors ? `  errors ${row.errors}` : ''}\n`,
          );
        }
      } finally {
        for (const s of started) await stopTarget(s.t);
      }
      const of = (prefix: string) => rows.find((r) => r.run === run && r.target.startsWith(prefix))!;
      if (opts.workers) {
        const [one, many] = rows.filter((r) => r.run === run);
        process.stdout.write(
          `  run ${run}: WORKERS=${opts.workers} / WORKERS=1 ${(many!.rps / one!.rps).toFixed(2)} req/s, CPU µs/req ${one!.cpuUsPerReq} / ${many!.cpuUsPerReq}\n`,
        );
        continue;
      }
      const s = of('service');
      const n = of('nginx');
      const ty = of('typical');
      process.stdout.write(
        `  run ${run}: service / typical Node ${(s.rps / ty.rps).toFixed(2)} (≥ 3), service / nginx ${(s.rps / n.rps).toFixed(2)} (≥ 0.9), p99 ${s.p99ms} vs nginx ${n.p99ms} ms (≤), CPU µs/req ${s.cpuUsPerReq} / ${n.cpuUsPerReq} / ${ty.cpuUsPerReq}\n`,
      );
    }
  } finally {
    await stopTarget(upstream);
  }
  if (failures.length) throw new Error(`the rig's load was not served:\n${failures.join('\n')}`);
  return rows;
}

/** What moves the ratios between machines of one kind: the CPU model, its cores, the kernel. */
export function machine(): string {
  const cpus = os.cpus();
  return `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, Linux ${os.release()}, Node ${process.version}`;
}

const RIG_HEADING = '## Distinct-stream rig (issue 20)';

/** Writes the rig's rows into bench/RESULTS.md as its own section, before the notes; the rest of the file stays. */
export function recordRig(rows: RigRow[], runs: number, quick: boolean): void {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const old = readFileSync(file, 'utf8');
  const ratio = (run: number, a: string, b: string) => {
    const x = rows.find((r) => r.run === run && r.target.startsWith(a))!;
    const y = rows.find((r) => r.run === run && r.target.startsWith(b))!;
    return +(x.rps / y.rps).toFixed(2);
  };
  const p99 = (run: number, t: string) => rows.find((r) => r.run === run && r.target.startsWith(t))!.p99ms;
  const section = [
    RIG_HEADING,
    '',
    `Latest: ${new Date().toISOString().slice(0, 16)}Z, \`npm run bench -- --rig${quick ? ' --quick' : ''} --runs ${runs} --record\` (bench/rig.ts: the outsider's rig; every target started fresh per run and warmed with 3 s of the same load, then measured ${quick ? 5 : 10} s each in ${ROUNDS} rounds of rotating order, p50/p99 the median of the rounds'; server on CPU ${SERVER_CPU ?? '-'}, wrk and the nginx upstream on CPU ${LOAD_CPU ?? '-'}). Machine: ${machine()}.`,
    '',
    '| run | target | req/s | p50 ms | p99 ms | server CPU % | CPU µs/req | of which kernel | RSS MiB | errors |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.run} | ${r.target} | ${r.rps} | ${r.p50ms} | ${r.p99ms} | ${r.cpuPct} | ${r.cpuUsPerReq} | ${r.kernelUsPerReq} | ${r.rssMiB} | ${r.errors} |`,
    ),
    '',
    '| run | service / typical Node (≥ 3) | service / nginx (≥ 0.9) | p99 service / nginx ms (≤) |',
    '| ---: | ---: | ---: | ---: |',
    ...Array.from({ length: runs }, (_, i) => i + 1).map(
      (run) =>
        `| ${run} | ${ratio(run, 'service', 'typical')} | ${ratio(run, 'service', 'nginx')} | ${p99(run, 'service')} / ${p99(run, 'nginx')} |`,
    ),
    '',
    '',
  ].join('\n');
  // Replaces its own section only, up to the next heading of its level (a later section, such as the
  // CDN cases, survives); without one, it goes before the notes.
  const start = old.indexOf(RIG_HEADING);
  const notes = old.indexOf('## Notes');
  const after = start === -1 ? -1 : old.indexOf('\n## ', start + RIG_HEADING.length);
  const next = start === -1 ? (notes === -1 ? old.length : notes) : after === -1 ? old.length : after + 1;
  const updated =
    start === -1 ? old.slice(0, next) + section + old.slice(next) : old.slice(0, start) + section + old.slice(next);
  writeFileSync(file, updated);
  process.stdout.write(`recorded in ${file}\n`);
}
