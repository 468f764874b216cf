/**
 * `npm run bench -- --soak [--minutes N]`: the service under distinct-stream load for N minutes
 * (default 5), at half of the maximum it is first measured at (issue 18: 0 errors, RSS of the
 * second and last fifths within 5 %; issue 3 asked ±10 %). The load runs in 30 s slices,
 * each printed with its req/s, p99 and RSS; RSS is also read every 5 s. The first fifth of the
 * run is warm-up (V8 compiles, the caches and the stream registry fill); the check compares the
 * median RSS of the last fifth with that of the second. Single readings swing with the GC cycle
 * (the old generation may grow to 4× the live heap between full GCs), so the band of all readings
 * after warm-up is printed too.
 */
import { median } from './micro.js';
import { runLoad, type LoadSpec } from './load.js';
import { LOAD_CPU, node, rssMiB, SERVER_CPU, SERVICE_FLAGS } from './procs.js';

const SLICE_SEC = 30;
const SAMPLE_MS = 5000;

/** Connections for the held rate: each waits PACE_MS after an answer, so about rate × PACE_MS / 1000 are needed. */
const PACE_MS = 10;

export async function runSoak(minutes: number, prefix: string, work: string): Promise<void> {
  const totalSec = Math.max(SLICE_SEC * 5, Math.round(minutes * 60));
  const sim = node('targets/sim.js', [], LOAD_CPU);
  const service = node('targets/service.js', [`http://127.0.0.1:${await sim.port}`], SERVER_CPU, SERVICE_FLAGS);
  const samples: Array<{ sec: number; rss: number }> = [];
  const slices: Array<{ sec: number; rps: number; p99ms: number; rss: number; errors: number }> = [];
  let maxRate = 0;
  let targetRate = 0;
  try {
    const port = await service.port;
    const pid = service.child.pid!;
    // The maximum first (after a warm-up), then the soak at half of it (issue 18).
    const full: LoadSpec = { port, prefix, kind: 'variant', scenario: 'distinct', connections: 100, seconds: 10 };
    if (LOAD_CPU) full.cpu = LOAD_CPU;
    await runLoad({ ...full, seconds: 3 }, work);
    const max = await runLoad(full, work);
    maxRate = max.rps;
    const rate = (targetRate = Math.round(max.rps / 2));
    const connections = Math.max(10, Math.round((rate * (PACE_MS + 1)) / 1000));
    process.stdout.write(
      `soak: ${totalSec} s of distinct-stream load at half the measured maximum (${max.rps} req/s → ${rate} req/s, ${connections} connections), service flags ${SERVICE_FLAGS.join(' ') || 'none'}\n`,
    );
    const started = Date.now();
    const elapsed = () => (Date.now() - started) / 1000;
    const timer = setInterval(() => samples.push({ sec: elapsed(), rss: rssMiB(pid) }), SAMPLE_MS);
    try {
      while (elapsed() < totalSec - 1) {
        const spec: LoadSpec = {
          port,
          prefix,
          kind: 'variant',
          scenario: 'distinct',
          connections,
          seconds: SLICE_SEC,
          rate,
        };
        if (LOAD_CPU) spec.cpu = LOAD_CPU;
        const r = await runLoad(spec, work);
        const slice = { sec: Math.round(elapsed()), rps: r.rps, p99ms: r.p99ms, rss: rssMiB(pid), errors: r.errors };
        slices.push(slice);
        process.stdout.write(
          `  ${String(slice.sec).padStart(4)} s  ${String(slice.rps).padStart(7)} req/s  p99 ${String(slice.p99ms).padStart(6)} ms  rss ${slice.rss} MiB${slice.errors ? `  errors ${slice.errors}` : ''}\n`,
        );
      }
    } finally {
      clearInterval(timer);
    }
  } finally {
    service.child.kill('SIGTERM');
    sim.child.kill('SIGTERM');
  }
  const fifth = totalSec / 5;
  const window = (from: number, to: number) => samples.filter((s) => s.sec >= from && s.sec < to).map((s) => s.rss);
  const early = median(window(fifth, 2 * fifth));
  const late = median(window(totalSec - fifth, Infinity));
  const after = window(fifth, Infinity);
  const drift = late / early - 1;
  const rpsDrift = slices.length > 2 ? slices.at(-1)!.rps / slices[1]!.rps - 1 : NaN;
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  process.stdout.write(
    `RSS median ${early} MiB (second fifth) -> ${late} MiB (last fifth): ${pct(drift)} (target within ±5 %) ${Math.abs(drift) <= 0.05 ? 'ok' : 'BELOW'}\n`,
  );
  const errors = slices.reduce((a, x) => a + x.errors, 0);
  process.stdout.write(
    `errors ${errors} (target 0) ${errors === 0 ? 'ok' : 'BELOW'}; mean ${Math.round(slices.reduce((a, x) => a + x.rps, 0) / Math.max(1, slices.length))} req/s held\n`,
  );
  process.stdout.write(
    `RSS band after warm-up: ${Math.min(...after)}–${Math.max(...after)} MiB over ${after.length} readings; req/s second slice -> last: ${pct(rpsDrift)}\n`,
  );
  process.stdout.write(
    `${JSON.stringify({ soak: true, seconds: totalSec, maxRps: maxRate, rate: targetRate, errors, rssEarlyMiB: early, rssLateMiB: late, rssDrift: +drift.toFixed(3), rssMinMiB: Math.min(...after), rssMaxMiB: Math.max(...after), rpsDrift: +rpsDrift.toFixed(3), slices })}\n`,
  );
}
