import t from 'tap';
import { readFileSync } from 'node:fs';
import { inspect, DEFAULT_LIMITS, type InspectDeps } from '../../lib/inspection/inspect.js';
import type { HlsAdPod } from '../../lib/id3/index.js';

const ts = readFileSync(new URL('../fixtures/media/shaka-player/id3-metadata.ts', import.meta.url));
const BASE = 'https://dai.example.com/pod/';

function pod(n: number): string {
  const out = ['#EXTM3U', '#EXT-X-TARGETDURATION:2'];
  for (let i = 0; i < n; i++) out.push('#EXTINF:2,', `s${i}.ts`);
  return out.join('\n') + '\n';
}

function deps(playlist: string, bytes: (url: string, signal: AbortSignal) => Promise<Buffer>): InspectDeps {
  return { fetchText: async () => playlist, fetchBytes: bytes, isAdUri: () => false };
}

const segmentsOf = (out: { ad_pods: unknown[] }) => (out.ad_pods[0] as HlsAdPod).hls[0]!.rendtions[0]!.segments;

t.test('garbage bytes give no tags; a failing segment is reported on itself; the job completes', async (t) => {
  const out = await inspect(
    { url: `${BASE}p.m3u8`, wholePod: true },
    deps(pod(4), async (url) => {
      if (url.endsWith('s1.ts')) return Buffer.from('<html>not media</html>');
      if (url.endsWith('s2.ts')) throw new Error('dai.example.com answered 500');
      if (url.endsWith('s3.ts')) return Buffer.from([0x47, 0x40, 0, 0x10, ...Array(400).fill(0xff)]);
      return ts;
    }),
    DEFAULT_LIMITS,
    AbortSignal.timeout(10_000),
  );
  const segs = segmentsOf(out);
  t.same(
    segs.map((s) => [s.name, s.tags.length, s.error]),
    [
      ['s0.ts', 4, undefined],
      ['s1.ts', 0, undefined],
      ['s2.ts', 0, 'dai.example.com answered 500'],
      ['s3.ts', 0, undefined],
    ],
  );
  t.notOk(out.error);
});

t.test('neither HLS nor DASH: the job fails', async (t) => {
  await t.rejects(
    inspect(
      { url: `${BASE}p.m3u8`, wholePod: false },
      deps('<html></html>', async () => ts),
      DEFAULT_LIMITS,
      AbortSignal.timeout(1000),
    ),
    /neither an HLS playlist nor an MPD/,
  );
});

t.test('the segment cap: the rest are listed as not inspected, never fetched', async (t) => {
  let fetched = 0;
  const out = await inspect(
    { url: `${BASE}p.m3u8`, wholePod: true },
    deps(pod(10), async () => (fetched++, ts)),
    { ...DEFAULT_LIMITS, maxSegments: 6 },
    AbortSignal.timeout(10_000),
  );
  t.equal(fetched, 6);
  const segs = segmentsOf(out);
  t.equal(segs.length, 10);
  t.same(
    segs.slice(6).map((s) => s.error),
    Array(4).fill('not inspected: the job reached its segment cap'),
  );
  t.match(out.error, /10 segments; only the first 6/);
});

t.test('bounded concurrency', async (t) => {
  let now = 0;
  let peak = 0;
  await inspect(
    { url: `${BASE}p.m3u8`, wholePod: true },
    deps(pod(20), async () => {
      peak = Math.max(peak, ++now);
      await new Promise((r) => setTimeout(r, 5));
      now--;
      return ts;
    }),
    { ...DEFAULT_LIMITS, concurrency: 3 },
    AbortSignal.timeout(10_000),
  );
  t.equal(peak, 3);
});

t.test('the job deadline: segments not reached say so, the outcome says how many', async (t) => {
  const out = await inspect(
    { url: `${BASE}p.m3u8`, wholePod: true },
    deps(
      pod(10),
      (_u, signal) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve(ts), 40);
          signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)));
        }),
    ),
    { ...DEFAULT_LIMITS, concurrency: 2 },
    AbortSignal.timeout(100),
  );
  const segs = segmentsOf(out);
  const late = segs.filter((s) => s.error === 'not inspected: the job reached its time limit').length;
  t.ok(late >= 4 && late <= 8, `${late} not inspected`);
  t.equal(segs.filter((s) => s.tags.length === 4).length, 10 - late);
  t.match(out.error, new RegExp(`time limit; ${late} segments were not inspected`));
});

t.test('500 segments of 2 MB: memory stays bounded, well under a minute (issue 13 target)', async (t) => {
  // A 2 MB segment as an ad's: the fixture's packets (two ID3 tags), then null packets (PID 0x1FFF).
  const nul = Buffer.alloc(188, 0xff);
  nul.set([0x47, 0x1f, 0xff, 0x10]);
  const packets = Math.ceil((2 * 1024 * 1024 - ts.length) / 188);
  const segment = () => {
    // A fresh body per request, as the network gives it.
    const b = Buffer.allocUnsafe(ts.length + packets * 188);
    ts.copy(b, 0);
    for (let i = 0; i < packets; i++) nul.copy(b, ts.length + i * 188);
    return b;
  };
  const before = process.memoryUsage.rss();
  let peak = before;
  const started = Date.now();
  const out = await inspect(
    { url: `${BASE}p.m3u8`, wholePod: true },
    deps(pod(500), async () => {
      peak = Math.max(peak, process.memoryUsage.rss());
      return segment();
    }),
    DEFAULT_LIMITS,
    AbortSignal.timeout(120_000),
  );
  const ms = Date.now() - started;
  const segs = segmentsOf(out);
  t.equal(segs.length, 500);
  t.ok(
    segs.every((s) => s.tags.length === 4),
    'every tag of every segment',
  );
  // Measured as growth: the tap process with its TypeScript loader already holds ~250 MB before any work.
  t.ok(peak - before < 150 * 1024 * 1024, `RSS grew ${Math.round((peak - before) / 1048576)} MB`);
  t.ok(ms < 60_000, `${ms} ms`);
});
