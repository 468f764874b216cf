/** Load generation for the benchmark: wrk (C, saturates a fast server from one core) or autocannon as a fallback. */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  tool: 'wrk' | 'autocannon';
}

export interface LoadSpec {
  port: number;
  /** Path prefix up to and excluding `/stream/…`. */
  prefix: string;
  /** `variant` (30-segment window) or `dvr` (1,200 segments). */
  kind: 'variant' | 'dvr';
  /** distinct: 1,000 streams round-robin, every request a unique query; hot: one URL. */
  scenario: 'distinct' | 'hot';
  connections: number;
  seconds: number;
  cpu?: string;
}

export function hasCommand(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function pathFor(spec: LoadSpec, n: number): string {
  if (spec.scenario === 'hot') return `${spec.prefix}/stream/hot:LOC/${spec.kind}/720p.m3u8`;
  return `${spec.prefix}/stream/s${n % 1000}:LOC/${spec.kind}/720p.m3u8?u=${n}`;
}

function toMs(v: string, unit: string): number {
  const n = parseFloat(v);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

async function runWrk(spec: LoadSpec, workDir: string): Promise<LoadResult> {
  const script = path.join(workDir, `load-${spec.scenario}-${spec.kind}.lua`);
  const lua =
    spec.scenario === 'hot'
      ? `request = function() return wrk.format("GET", "${pathFor(spec, 0)}") end\n`
      : `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "${spec.prefix}/stream/s" .. (n % 1000) .. ":LOC/${spec.kind}/720p.m3u8?u=" .. n)\nend\n`;
  writeFileSync(script, lua);
  const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${spec.port}`];
  const cmd = spec.cpu ? 'taskset' : 'wrk';
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn(cmd, spec.cpu ? ['-c', spec.cpu, 'wrk', ...args] : args);
    let text = '';
    p.stdout.on('data', (d) => (text += d));
    p.stderr.on('data', (d) => (text += d));
    p.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk failed: ${text}`))));
  });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const lat = (pct: string) => {
    const m = new RegExp(`\\s${pct}%\\s+([\\d.]+)(us|ms|s|m)`).exec(out);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return { rps: Math.round(rps), p50ms: +lat('50').toFixed(2), p99ms: +lat('99').toFixed(2), errors, tool: 'wrk' };
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${spec.port}`,
    connections: spec.connections,
    duration: spec.seconds,
    requests: [{ setupRequest: (req) => ({ ...req, path: pathFor(spec, ++n) }) }],
  });
  return { rps: Math.round(result.requests.average), p50ms: result.latency.p50, p99ms: result.latency.p99, errors: result.non2xx + result.errors + result.timeouts, tool: 'autocannon' };
}

export function runLoad(spec: LoadSpec, workDir: string): Promise<LoadResult> {
  return hasCommand('wrk') ? runWrk(spec, workDir) : runAutocannon(spec);
}
