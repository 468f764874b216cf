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
  /** `variant` (6 KB live window), `dvr` (1,200 segments), or `adproxy` (the preroll ad tag, 10,000 streams). */
  kind: 'variant' | 'dvr' | 'adproxy';
  /** distinct: 1,000 streams round-robin, every request a unique query; hot: one URL. */
  scenario: 'distinct' | 'hot';
  connections: number;
  seconds: number;
  cpu?: string;
  /** Requests per second to hold (wrk: each connection waits between requests); unset = as fast as the server answers. */
  rate?: number;
  /** Distinct requests round-robin over these paths (a unique query each) instead of the DAI streams (bench/squeezeback.ts). */
  paths?: string[];
}

export function hasCommand(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const ADPROXY_STREAMS = 10_000;

/**
 * Distinct queries are unique across the whole bench, not only within one load run: a warm-up and
 * the measurement after it must not send the same URLs (the second would be a repeat visit).
 */
let runs = 0;
function runTag(): string {
  return `${process.pid.toString(36)}${(++runs).toString(36)}`;
}

/**
 * Distinct requests prepared for a run: enough for 40k req/s (twice the rate the service reaches
 * here), so no URL repeats within a run; building them is wrk's start-up work, so no more.
 */
function distinctRequests(seconds: number): number {
  return Math.max(20_000, Math.ceil(seconds * 40_000));
}

function pathFor(spec: LoadSpec, n: number, tag: string): string {
  if (spec.kind === 'adproxy') return `/dai/adproxy?stream_id=b${n % ADPROXY_STREAMS}:LOC&asset_key=ADS&ge=m&gr=2&imafw_csid=bench`;
  if (spec.scenario === 'hot') return `${spec.prefix}/stream/hot:LOC/${spec.kind}/720p.m3u8`;
  if (spec.paths?.length) return `${spec.paths[n % spec.paths.length]}?n=${tag}-${n}`;
  return `${spec.prefix}/stream/s${n % 1000}:LOC/${spec.kind}/720p.m3u8?u=${tag}-${n}`;
}

/** The path expression for request i in Lua (mirrors pathFor). */
function luaPath(spec: LoadSpec, tag: string): string {
  if (spec.kind === 'adproxy') return `"/dai/adproxy?stream_id=b" .. (i % ${ADPROXY_STREAMS}) .. ":LOC&asset_key=ADS&ge=m&gr=2&imafw_csid=bench"`;
  if (spec.paths?.length) return `paths[(i % ${spec.paths.length}) + 1] .. "?n=${tag}-" .. i`;
  return `"${spec.prefix}/stream/s" .. (i % 1000) .. ":LOC/${spec.kind}/720p.m3u8?u=${tag}-" .. i`;
}

function toMs(v: string, unit: string): number {
  const n = parseFloat(v);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60_000 : n;
}

async function runWrk(spec: LoadSpec, workDir: string): Promise<LoadResult> {
  const tag = runTag();
  const script = path.join(workDir, `load-${spec.scenario}-${spec.kind}-${tag}.lua`);
  // Requests are formatted once, when the script loads: building one per request in Lua would make
  // wrk itself the bottleneck (≈ 50k req/s on one core).
  const lua =
    spec.scenario === 'hot' && spec.kind !== 'adproxy'
      ? `request = function() return wrk.format("GET", "${pathFor(spec, 0, tag)}") end\n`
      : `local reqs = {}\nlocal count = ${spec.kind === 'adproxy' ? ADPROXY_STREAMS : distinctRequests(spec.seconds)}\nlocal n = 0\ninit = function(args)\n  for i = 1, count do\n    reqs[i] = wrk.format("GET", ${luaPath(spec, tag)})\n  end\nend\nrequest = function()\n  n = n % count + 1\n  return reqs[n]\nend\n`;
  const pathTable = spec.paths?.length ? `local paths = {${spec.paths.map((p) => JSON.stringify(p)).join(',')}}\n` : '';
  // A held rate: each connection waits a whole number of milliseconds after every answer (wrk's delay()).
  const paced = spec.rate ? `delay = function() return ${Math.max(1, Math.round((spec.connections * 1000) / spec.rate))} end\n` : '';
  writeFileSync(script, pathTable + lua + paced);
  return { ...(await wrk(spec.connections, spec.seconds, script, spec.port, spec.cpu)), tool: 'wrk' };
}

/** Runs wrk (one thread, pinned to cpu when given) with a Lua script and reads its summary. */
export async function wrk(connections: number, seconds: number, script: string, port: number, cpu?: string): Promise<Omit<LoadResult, 'tool'>> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${port}`];
  const out = await new Promise<string>((resolve, reject) => {
    const p = cpu ? spawn('taskset', ['-c', cpu, 'wrk', ...args]) : spawn('wrk', args);
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
  return { rps: Math.round(rps), p50ms: +lat('50').toFixed(2), p99ms: +lat('99').toFixed(2), errors };
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  let n = 0;
  const tag = runTag();
  const result = await autocannon({
    url: `http://127.0.0.1:${spec.port}`,
    connections: spec.connections,
    duration: spec.seconds,
    requests: [{ setupRequest: (req) => ({ ...req, path: pathFor(spec, ++n, tag) }) }],
  });
  return { rps: Math.round(result.requests.average), p50ms: result.latency.p50, p99ms: result.latency.p99, errors: result.non2xx + result.errors + result.timeouts, tool: 'autocannon' };
}

export function runLoad(spec: LoadSpec, workDir: string): Promise<LoadResult> {
  return hasCommand('wrk') ? runWrk(spec, workDir) : runAutocannon(spec);
}
