/**
 * `npm run bench -- --cdn [--quick] [--seconds N]` (issue 27): the compressed and conditional cases, every side
 * configured alike, server and load pinned as in the main run. Printed, not recorded (the lead
 * records a quiet machine's run in bench/RESULTS.md).
 *   hot + gzip: the service's micro-cached variant with `Accept-Encoding: gzip` against raw uWS
 *     serving the same precompressed bytes (target ≥ 0.9×)
 *   distinct + gzip: 1,000 streams, every request upstream, against nginx proxy_pass + sub_filter
 *     with `gzip on` (target ≥ 1.0×)
 *   DVR bytes on the wire per pull (1,200 segments), identity, gzip and `gzip, deflate, br` (br: the
 *     smaller form), from wrk's transfer rate
 *   304 share under a CDN-like revalidation mix: 90 % of requests revalidate one hot URL with the
 *     last ETag seen, 10 % come without
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';
import { LOAD_CPU, node, SERVER_CPU, SERVICE_FLAGS, cpuSeconds, stopTarget, type Target } from './procs.js';
import { nginxProxy } from './nginx.js';

const PREFIX = '/dai/manifest/linear/hls/pa/event/BENCH';
const GZIP = { 'Accept-Encoding': 'gzip' };
/** What a CDN with brotli enabled forwards: the service answers the smaller of br and gzip (a shared body). */
const BR = { 'Accept-Encoding': 'gzip, deflate, br' };
/** The target's event without a live window (bench/targets/service.ts): the whole 1,200-segment DVR playlist goes out. */
const UNTRIMMED = '/dai/manifest/linear/hls/pa/event/ADS';

interface Case {
  label: string;
  spec: Omit<LoadSpec, 'port' | 'prefix' | 'connections' | 'seconds'> & { prefix?: string };
}

async function measure(
  work: string,
  name: string,
  start: () => Promise<Target | undefined>,
  cases: Case[],
  seconds: number,
): Promise<Array<LoadResult & { label: string; cpuUsPerReq: number }>> {
  const t = await start();
  if (!t) {
    process.stdout.write(`${name}: skipped (not installed)\n`);
    return [];
  }
  const rows: Array<LoadResult & { label: string; cpuUsPerReq: number }> = [];
  try {
    const port = await t.port;
    for (const c of cases) {
      const spec: LoadSpec = { port, prefix: PREFIX, connections: 100, seconds, ...c.spec };
      if (LOAD_CPU) spec.cpu = LOAD_CPU;
      await runLoad({ ...spec, seconds: Math.min(1, seconds) }, work); // warm-up
      const before = cpuSeconds(t.child.pid!);
      const r = await runLoad(spec, work);
      const cpu = cpuSeconds(t.child.pid!) - before;
      const row = {
        ...r,
        label: `${name} ${c.label}`,
        cpuUsPerReq: r.rps > 0 ? Math.round((cpu * 1e6) / (r.rps * seconds)) : 0,
      };
      rows.push(row);
      process.stdout.write(
        `${row.label.padEnd(44)} ${String(r.rps).padStart(8)} req/s  p50 ${r.p50ms} ms  p99 ${r.p99ms} ms  ${row.cpuUsPerReq} µs/req  ${r.bytesPerReq ?? 0} B/answer` +
          `${r.notModifiedShare !== undefined ? `  304 share ${(r.notModifiedShare * 100).toFixed(1)} %` : ''}${r.errors ? `  errors ${r.errors}` : ''}\n`,
      );
    }
  } finally {
    await stopTarget(t);
  }
  return rows;
}

export async function runCdn(quick: boolean): Promise<void> {
  const at = process.argv.indexOf('--seconds');
  // `--seconds 1`: a smoke run that only proves the cases work.
  const seconds = at !== -1 ? Number(process.argv[at + 1]) || 1 : quick ? 3 : 10;
  const work = mkdtempSync(path.join(os.tmpdir(), 'sqz-cdn-'));
  const sim = node('targets/sim.js', [], LOAD_CPU);
  const simPort = await sim.port;
  const simUrl = `http://127.0.0.1:${simPort}`;
  try {
    process.stdout.write(`bench --cdn: ${seconds} s per measurement, 100 connections\n`);
    const ceiling = await measure(
      work,
      '(a) raw uWS, precompressed',
      async () => node('targets/ceiling.js', [simUrl, '--gzip'], SERVER_CPU),
      [{ label: 'variant/hot gzip', spec: { kind: 'variant', scenario: 'hot', headers: GZIP } }],
      seconds,
    );
    const service = await measure(
      work,
      '(b) service',
      async () => node('targets/service.js', [simUrl], SERVER_CPU, SERVICE_FLAGS),
      [
        { label: 'variant/hot gzip', spec: { kind: 'variant', scenario: 'hot', headers: GZIP } },
        { label: 'variant/distinct gzip', spec: { kind: 'variant', scenario: 'distinct', headers: GZIP } },
        { label: 'variant/distinct identity', spec: { kind: 'variant', scenario: 'distinct' } },
        { label: 'dvr/hot identity', spec: { kind: 'dvr', scenario: 'hot', prefix: UNTRIMMED } },
        { label: 'dvr/hot gzip', spec: { kind: 'dvr', scenario: 'hot', headers: GZIP, prefix: UNTRIMMED } },
        { label: 'dvr/hot br', spec: { kind: 'dvr', scenario: 'hot', headers: BR, prefix: UNTRIMMED } },
        {
          label: 'variant/hot revalidating 90 %',
          spec: { kind: 'variant', scenario: 'hot', headers: GZIP, revalidate: 0.9 },
        },
      ],
      seconds,
    );
    const nginx = await measure(
      work,
      '(d) nginx + sub_filter, gzip on',
      () => nginxProxy(work, simPort, SERVER_CPU, { gzip: true }),
      [{ label: 'variant/distinct gzip', spec: { kind: 'variant', scenario: 'distinct', headers: GZIP } }],
      seconds,
    );
    const find = (rows: typeof service, label: string) => rows.find((r) => r.label.endsWith(label));
    const ratio = (a?: number, b?: number) => (a && b ? (a / b).toFixed(2) : 'n/a');
    process.stdout.write(
      `hot gzip: service / precompressed uWS = ${ratio(find(service, 'variant/hot gzip')?.rps, find(ceiling, 'variant/hot gzip')?.rps)} (target ≥ 0.9)\n`,
    );
    process.stdout.write(
      `distinct gzip: service / nginx gzip on = ${ratio(find(service, 'variant/distinct gzip')?.rps, find(nginx, 'variant/distinct gzip')?.rps)} (target ≥ 1.0)\n`,
    );
    process.stdout.write(
      `DVR bytes per pull: identity ${find(service, 'dvr/hot identity')?.bytesPerReq ?? 'n/a'} B, gzip ${find(service, 'dvr/hot gzip')?.bytesPerReq ?? 'n/a'} B, br ${find(service, 'dvr/hot br')?.bytesPerReq ?? 'n/a'} B\n`,
    );
  } finally {
    sim.child.kill('SIGKILL');
  }
}
