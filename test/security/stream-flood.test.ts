/**
 * Unbounded per-stream state (issue 24 item 4): fabricated stream ids on `/dai/manifest` from one
 * client. With the default limits, 40,000 of them leave RSS within +50 MiB and the stream count
 * far under its cap (new ids beyond the client's `stream` rate are answered 429 and recorded
 * nowhere). With no rate limit and a small MAX_STREAMS, the count stays at the cap: the oldest
 * idle streams are evicted, counted in `streams_evicted_total`, and their records deleted.
 * One service on real Postgres with the in-process state store (so every record is in this RSS).
 */
import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Pool } from 'undici';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';
import type { Service } from '../../lib/app.js';

const MiB = 1024 * 1024;

/** `count` manifest requests for new stream ids from one client, `concurrency` at a time; statuses counted. */
async function flood(
  service: Service,
  prefix: string,
  count: number,
  concurrency = 32,
  query = `?pad=${'q'.repeat(4000)}`,
): Promise<Map<number, number>> {
  const pool = new Pool(service.url, { connections: 8 });
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      // A long query by default: the record must not keep it.
      const res = await pool.request({
        method: 'GET',
        path: `/dai/manifest/linear/hls/event/EVX/stream/${prefix}-${i}:LOC/master.m3u8${query}`,
      });
      await res.body.dump();
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  return statuses;
}

// A full collection before each reading, so RSS shows what is kept, not garbage not yet collected
// (the test's own client makes as much as the service; both share this process).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function settle(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage.rss();
}

t.test('40,000 fabricated stream ids from one client, default limits', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  // Default rate limits (the test helper's are unlimited): `stream` 10 a second per client.
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: '',
    daiHost: sim.url,
    rateLimits: { stream: { rate: 10, burst: 20 } },
  });
  await flood(service, 'WARM', 200, 8); // warm the paths the flood takes (JIT, pools, caches)
  const before = await settle();
  const started = Date.now();
  const statuses = await flood(service, 'FAKE', 40_000);
  const sec = (Date.now() - started) / 1000;
  await service.streams.flush();
  const after = await settle();
  const created = statuses.get(200) ?? 0;
  t.equal(
    (statuses.get(200) ?? 0) + (statuses.get(429) ?? 0),
    40_000,
    `every request answered 200 or 429 (${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}) in ${sec.toFixed(1)} s`,
  );
  t.ok(
    created <= 20 + Math.ceil(sec * 10) + 10,
    `new streams held to the client's rate: ${created} in ${sec.toFixed(1)} s`,
  );
  t.ok(service.streams.size <= created + 220, `streams kept: ${service.streams.size}`);
  t.ok(
    after - before < 50 * MiB,
    `RSS ${Math.round(before / MiB)} → ${Math.round(after / MiB)} MiB (+${((after - before) / MiB).toFixed(1)} MiB)`,
  );
});

t.test('no rate limit, MAX_STREAMS 1,000: the count stays at the cap, oldest idle evicted', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: '',
    daiHost: sim.url,
    maxStreams: 1000,
  });
  await flood(service, 'WARM', 1000, 8, ''); // the cap reached once, so the flood measures steady state
  const before = await settle();
  // Without the long query here: each distinct 4 KiB URL would also fill the manifest micro-cache
  // (bounded by itself: 5,000 renderings, 64 MiB), which is not stream state.
  const statuses = await flood(service, 'CAP', 5000, 32, '');
  const after = await settle();
  t.ok(
    after - before < 50 * MiB,
    `RSS ${Math.round(before / MiB)} → ${Math.round(after / MiB)} MiB (+${((after - before) / MiB).toFixed(1)} MiB)`,
  );
  t.same([...statuses], [[200, 5000]], 'every fabricated id gets its manifest');
  t.equal(service.streams.size, 1000, 'the stream count is at its cap');
  await service.streams.flush();
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  t.match(metrics, /\nstreams_evicted_total 5000\n/, 'each eviction counted');
  t.match(metrics, /\nstreams_known 1000\n/, 'the gauge shows the count');
  t.equal(await service.streams.get('CAP-0:LOC'), undefined, 'an evicted stream’s record is deleted');
  t.ok(await service.streams.get('CAP-4999:LOC'), 'the newest stream is kept');
  t.same([...(await flood(service, 'PAD', 1, 1))], [[200, 1]]);
  await service.streams.flush();
  const last = await service.streams.get('PAD-0:LOC');
  t.ok(
    last!.master_path!.length <= 1024 && !last!.master_path!.includes('pad='),
    `its 4 KiB query is not stored (master_path ${last!.master_path})`,
  );
});

t.test('refreshes of known streams are never limited; new ids are, per client', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: '',
    daiHost: sim.url,
    // One new id, then one per 100 s: the refusal below holds however long the 50 refreshes take
    // (at 1 a second, a busy half-speed machine refilled the bucket before the next id came).
    rateLimits: { stream: { rate: 0.01, burst: 1 } },
  });
  const get = async (stream: string, deviceIp?: string) => {
    const res = await fetch(
      `${service.url}/dai/manifest/linear/hls/event/EVR/stream/${stream}/variant/720p.m3u8`,
      deviceIp ? { headers: { 'x-device-ip': deviceIp } } : {},
    );
    await res.text();
    return res.status;
  };
  t.equal(await get('KNOWN:LOC'), 200, 'a new stream within the client’s budget');
  const refreshes = await Promise.all(Array.from({ length: 50 }, () => get('KNOWN:LOC')));
  t.same(
    refreshes.filter((s) => s !== 200),
    [],
    '50 refreshes of the known stream at once: all answered',
  );
  const next = await fetch(`${service.url}/dai/manifest/linear/hls/event/EVR/stream/NEW-1:LOC/variant/720p.m3u8`);
  await next.text();
  t.equal(next.status, 429, 'a second new id right after is refused');
  t.ok(Number(next.headers.get('retry-after')) >= 1, 'with Retry-After');
  t.match(next.headers.get('content-type'), /problem\+json/);
  t.notOk(service.streams.isKnown('NEW-1:LOC'), 'and recorded nowhere');
});
