/**
 * HLS VOD stitching CPU: a 3-hour asset (2,700 segments of 4 s × 6 variants, one master) with 20
 * ad breaks of a 6-variant, 30 s ad (issue 16 target: < 100 ms CPU per stitch); then the same as
 * HLS Interstitials (`?interstitials=1`).
 * Run: `npm run build && node dist/bench/stitch.js [iterations]`.
 */
import { stitchHls, type HlsSource } from '../lib/stitch/hls/stitch.js';
import { interstitialHls } from '../lib/stitch/hls/interstitials.js';

const VARIANTS = [
  [416, 234, 400_000],
  [640, 360, 800_000],
  [854, 480, 1_400_000],
  [1280, 720, 2_800_000],
  [1920, 1080, 5_000_000],
  [2560, 1440, 8_000_000],
] as const;

function playlist(prefix: string, segments: number, duration: number): string {
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${Math.ceil(duration)}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
  ];
  for (let i = 0; i < segments; i++)
    lines.push(`#EXTINF:${duration.toFixed(3)},`, `${prefix}${String(i).padStart(5, '0')}.ts`);
  return [...lines, '#EXT-X-ENDLIST', ''].join('\n');
}

function source(base: string, segments: number, duration: number, absolute: boolean): HlsSource {
  const master = ['#EXTM3U', '#EXT-X-VERSION:3'];
  const playlists = new Map<string, string>();
  for (const [w, h, bw] of VARIANTS) {
    master.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${bw},RESOLUTION=${w}x${h},CODECS="avc1.640028,mp4a.40.2"`,
      `${h}p/index.m3u8`,
    );
    playlists.set(`${base}${h}p/index.m3u8`, playlist(absolute ? `${base}${h}p/seg_` : 'seg_', segments, duration));
  }
  return { url: `${base}master.m3u8`, master: master.join('\n') + '\n', playlists };
}

const content = source('https://origin.example.com/vod/movie/', 2700, 4, false);
const ad = source('https://ads.example.com/creative/abc/', 5, 6, true);
const pods = Array.from({ length: 20 }, (_, i) => ({
  id: `b${i}`,
  offsetSec: i === 0 ? 0 : i * 540 + 1,
  ads: [{ id: 'ad-1', source: ad }],
}));

const modes = {
  'stitch-hls-vod': () => stitchHls(content, pods, { fillerUri: 'https://svc.example.com/stitch/filler.vtt' }),
  // ?interstitials=1: the same content and pods as DATERANGEs (no splicing).
  'stitch-hls-vod-interstitials': () =>
    interstitialHls(content, pods, {
      epochMs: Date.UTC(2026, 0, 1),
      assetListUrl: (n) => `https://svc.example.com/stitch/cache/x/assets/${n}.json`,
      assetListFile: (n) => `assets/${n}.json`,
    }),
};

function once(run: () => { master: string; playlists: Map<string, string> }): {
  cpuMs: number;
  wallMs: number;
  bytes: number;
} {
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const r = run();
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  let bytes = r.master.length;
  for (const text of r.playlists.values()) bytes += text.length;
  return { cpuMs: (used.user + used.system) / 1000, wallMs, bytes };
}

const iterations = Number(process.argv[2] ?? 20);
for (const [bench, run] of Object.entries(modes)) {
  for (let i = 0; i < 3; i++) once(run); // warm-up (JIT)
  const runs = Array.from({ length: iterations }, () => once(run)).sort((a, b) => a.cpuMs - b.cpuMs);
  const median = runs[Math.floor(runs.length / 2)]!;
  console.log(
    JSON.stringify({
      bench,
      segments_per_variant: 2700,
      variants: 6,
      breaks: 20,
      output_bytes: median.bytes,
      cpu_ms_median: Math.round(median.cpuMs * 10) / 10,
      cpu_ms_max: Math.round(runs[runs.length - 1]!.cpuMs * 10) / 10,
      wall_ms_median: Math.round(median.wallMs * 10) / 10,
      target_cpu_ms: 100,
    }),
  );
}
