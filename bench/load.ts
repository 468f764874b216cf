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
  /** Bytes on the wire per answer (headers and body), from wrk's Transfer/sec; 0 when unknown. */
  bytesPerReq?: number;
  /** Share of answers that were 304 (revalidating runs only). */
  notModifiedShare?: number;
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
  /** Request headers sent with every request (issue 27: `Accept-Encoding: gzip`); wrk only. */
  headers?: Record<string, string>;
  /**
   * Hot scenario only: a CDN's revalidation mix, wrk only. This share of requests carries
   * `If-None-Match` with the last ETag seen (an edge revalidating), the rest none (an edge that
   * lost its copy); the 304 share is reported.
   */
  revalidate?: number;
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
  if (spec.kind === 'adproxy')
    return `/dai/adproxy?stream_id=b${n % ADPROXY_STREAMS}:LOC&asset_key=ADS&ge=m&gr=2&imafw_csid=bench`;
  if (spec.scenario === 'hot') return `${spec.prefix}/stream/hot:LOC/${spec.kind}/720p.m3u8`;
  if (spec.paths?.length) return `${spec.paths[n % spec.paths.length]}?n=${tag}-${n}`;
  return `${spec.prefix}/stream/s${n % 1000}:LOC/${spec.kind}/720p.m3u8?u=${tag}-${n}`;
}

/** The path expression for request i in Lua (mirrors pathFor). */
function luaPath(spec: LoadSpec, tag: string): string {
  if (spec.kind === 'adproxy')
    return `"/dai/adproxy?stream_id=b" .. (i % ${ADPROXY_STREAMS}) .. ":LOC&asset_key=ADS&ge=m&gr=2&imafw_csid=bench"`;
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
  const headers = `{${Object.entries(spec.headers ?? {})
    .map(([k, v]) => `[${JSON.stringify(k)}]=${JSON.stringify(v)}`)
    .join(',')}}`;
  const lua =
    spec.revalidate !== undefined
      ? revalidatingLua(pathFor({ ...spec, scenario: 'hot' }, 0, tag), headers, spec.revalidate)
      : spec.scenario === 'hot' && spec.kind !== 'adproxy'
        ? `request = function() return wrk.format("GET", "${pathFor(spec, 0, tag)}", ${headers}) end\n`
        : `local reqs = {}\nlocal count = ${spec.kind === 'adproxy' ? ADPROXY_STREAMS : distinctRequests(spec.seconds)}\nlocal n = 0\ninit = function(args)\n  for i = 1, count do\n    reqs[i] = wrk.format("GET", ${luaPath(spec, tag)}, ${headers})\n  end\nend\nrequest = function()\n  n = n % count + 1\n  return reqs[n]\nend\n`;
  const pathTable = spec.paths?.length ? `local paths = {${spec.paths.map((p) => JSON.stringify(p)).join(',')}}\n` : '';
  // A held rate: each connection waits a whole number of milliseconds after every answer (wrk's delay()).
  const paced = spec.rate
    ? `delay = function() return ${Math.max(1, Math.round((spec.connections * 1000) / spec.rate))} end\n`
    : '';
  writeFileSync(script, pathTable + lua + paced);
  return { ...(await wrk(spec.connections, spec.seconds, script, spec.port, spec.cpu)), tool: 'wrk' };
}

/**
 * One URL revalidated as CDN edges do (issue 27): a share of requests send the last ETag seen;
 * every answer's status is counted and the 304 share printed by done() as `NOTMODIFIED <share>`.
 */
function revalidatingLua(path: string, headers: string, share: number): string {
  return `local threads = {}
setup = function(thread) table.insert(threads, thread) end
etag = nil
n304 = 0
total = 0
request = function()
  local h = ${headers}
  if etag and math.random() < ${share} then h["If-None-Match"] = etag end
  return wrk.format("GET", "${path}", h)
end
response = function(status, headers, body)
  total = total + 1
  if status == 304 then n304 = n304 + 1 end
  if headers["ETag"] then etag = headers["ETag"] end
end
done = function(summary, latency, requests)
  local a, b = 0, 0
  for _, t in ipairs(threads) do a = a + t:get("n304"); b = b + t:get("total") end
  io.write(string.format("NOTMODIFIED %.4f\\n", b > 0 and a / b or 0))
end
`;
}

/** Runs wrk (one thread, pinned to cpu when given) with a Lua script and reads its summary. */
export async function wrk(
  connections: number,
  seconds: number,
  script: string,
  port: number,
  cpu?: string,
): Promise<Omit<LoadResult, 'tool'>> {
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
  // A revalidating run's 304s are answers, not errors (wrk counts them as non-2xx).
  const errors =
    (/NOTMODIFIED/.test(out) ? 0 : non2xx) +
    (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  const transfer = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(out);
  const bytesPerSec = transfer
    ? Number(transfer[1]) * ({ B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 } as Record<string, number>)[transfer[2]!]!
    : 0;
  const result: Omit<LoadResult, 'tool'> = {
    rps: Math.round(rps),
    p50ms: +lat('50').toFixed(2),
    p99ms: +lat('99').toFixed(2),
    errors,
    bytesPerReq: rps > 0 ? Math.round(bytesPerSec / rps) : 0,
  };
  const nm = /NOTMODIFIED ([\d.]+)/.exec(out);
  if (nm) result.notModifiedShare = Number(nm[1]);
  return result;
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
  return {
    rps: Math.round(result.requests.average),
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    tool: 'autocannon',
  };
}

export function runLoad(spec: LoadSpec, workDir: string): Promise<LoadResult> {
  return hasCommand('wrk') ? runWrk(spec, workDir) : runAutocannon(spec);
}
