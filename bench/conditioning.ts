/**
 * Ad conditioning (issue 26): the time to condition one 15 s H.264/AAC MP4 creative (1280x720,
 * 30 fps, 44.1 kHz mono: unlike the content) into (1) a 3-rung HLS TS ladder and (2) a 3-rung DASH
 * ladder (25 fps, 4 s segments, 48 kHz stereo), each measured by the job itself
 * (`seconds_to_ready`: queued → renditions published, through the real job path: fetch over HTTP,
 * probe, ffmpeg, publish), the jobs run one after the other; then the wall time of stitch POSTs for
 * distinct streams (every one a session-cache miss) once the ads are conditioned (a VMAP of a
 * pre-roll and a mid-roll, the same creative in each).
 * One service in this process on a fresh Postgres schema (the memory state store), the origin and
 * the ad server simulated as real HTTP servers.
 * Run: `npm run build && node dist/bench/conditioning.js [posts]` (Postgres at DATABASE_URL or
 * postgres://postgres@127.0.0.1:5432/test; ffmpeg at FFMPEG_PATH or on PATH).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { loadConfig } from '../lib/config/index.js';
import { startService } from '../lib/app.js';
import { createLogger } from '../lib/log/index.js';
import { mintToken } from '../lib/http/auth.js';
import { StaticHostSim } from '../lib/sim/static-host.js';
import { AdServerSim } from '../lib/sim/ad-server.js';

const PG_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const FFMPEG = process.env['FFMPEG_PATH'] ?? 'ffmpeg';
const AD_SEC = 15;
const SEG_SEC = 4;
const CONTENT_SEGMENTS = 15;
const RUNGS = [
  { w: 640, h: 360, bw: 1_000_000, codecs: 'avc1.64001e,mp4a.40.2' },
  { w: 960, h: 540, bw: 2_000_000, codecs: 'avc1.64001f,mp4a.40.2' },
  { w: 1280, h: 720, bw: 3_500_000, codecs: 'avc1.64001f,mp4a.40.2' },
];
const PUSH_TOKEN = 'push-token-0123456789abcdefghij';
const posts = Number(process.argv[2] ?? 10);

function contentFiles(): Map<string, string> {
  const files = new Map<string, string>();
  files.set(
    '/vod/hls/master.m3u8',
    [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      ...RUNGS.flatMap((r, i) => [
        `#EXT-X-STREAM-INF:BANDWIDTH=${r.bw},RESOLUTION=${r.w}x${r.h},CODECS="${r.codecs}",FRAME-RATE=25.000`,
        `v${i}.m3u8`,
      ]),
    ].join('\n') + '\n',
  );
  RUNGS.forEach((_, i) => {
    const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${SEG_SEC}`, '#EXT-X-PLAYLIST-TYPE:VOD'];
    for (let s = 0; s < CONTENT_SEGMENTS; s++) lines.push(`#EXTINF:${SEG_SEC},`, `v${i}_${s}.ts`);
    files.set(`/vod/hls/v${i}.m3u8`, [...lines, '#EXT-X-ENDLIST', ''].join('\n'));
  });
  const total = SEG_SEC * CONTENT_SEGMENTS;
  files.set(
    '/vod/dash/manifest.mpd',
    `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT${total}S" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
  <Period id="content" start="PT0S">
    <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true" frameRate="25">
      <SegmentTemplate timescale="1000" duration="${SEG_SEC * 1000}" startNumber="1" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Number$.m4s"/>
${RUNGS.map((r, i) => `      <Representation id="v${i}" width="${r.w}" height="${r.h}" bandwidth="${r.bw}" codecs="${r.codecs.split(',')[0]}"/>`).join('\n')}
    </AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en">
      <SegmentTemplate timescale="1000" duration="${SEG_SEC * 1000}" startNumber="1" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Number$.m4s"/>
      <Representation id="a0" bandwidth="128000" codecs="mp4a.40.2" audioSamplingRate="48000"/>
    </AdaptationSet>
  </Period>
</MPD>
`,
  );
  return files;
}

function creative(dir: string): Buffer {
  const file = path.join(dir, 'ad-1.mp4');
  execFileSync(FFMPEG, [
    ...[
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=1280x720:rate=30:duration=${AD_SEC}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:sample_rate=44100:duration=${AD_SEC}`,
    ],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '1', '-shortest', file],
  ]);
  return readFileSync(file);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-bench-cond-'));
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create schema ${schema}`);
  const origin = await new StaticHostSim(contentFiles()).start();
  const adServer = await new AdServerSim({
    breaks: ['start', '00:00:20.000'],
    ads: [{ id: 'ad-1', durationSec: AD_SEC }],
    creatives: new Map([['ad-1', creative(dir)]]),
  }).start();
  const db = new URL(PG_URL);
  db.searchParams.set('search_path', schema);
  const unlimited = Object.fromEntries(
    ['api', 'auth_failure', 'beacon', 'vast', 'adproxy', 'stream', 'stitch'].map((k) => [k, { rate: 1e6, burst: 1e6 }]),
  );
  const config = loadConfig(
    {},
    {
      port: 0,
      databaseUrl: db.toString(),
      dataDir: path.join(dir, 'data'),
      ffmpegPath: FFMPEG,
      adServerUrl: `${adServer.url}/ad`,
      allowPrivateOutbound: true,
      rateLimits: unlimited,
      jwtSecret: 'bench-secret-0123456789abcdef0123456789abcdef',
      logLevel: 'silent',
    },
  );
  const service = await startService(config, createLogger('silent'));
  try {
    const jwt = await mintToken(config);
    const api = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${service.url}${p}`, {
        method,
        headers: {
          authorization: `Bearer ${jwt}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${p} answered ${res.status}: ${text.slice(0, 300)}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    await api('POST', '/api/v1/brand-recognition', {
      brand_name: 'acme',
      match_type: 'header',
      match_name: 'X-Brand',
      match_value: 'acme',
    });
    await api('PUT', '/api/v1/brand-tokens/acme', { mrss_token: PUSH_TOKEN });
    const mrss = `<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dfpvideo="http://api.google.com/dfpvideo"><channel>
<item><guid>vod-hls</guid><title>HLS</title><dfpvideo:cuepoints>20</dfpvideo:cuepoints><media:content url="${origin.url}/vod/hls/master.m3u8" type="application/x-mpegURL" duration="60"/></item>
<item><guid>vod-dash</guid><title>DASH</title><dfpvideo:cuepoints>20</dfpvideo:cuepoints><media:content url="${origin.url}/vod/dash/manifest.mpd" type="application/dash+xml" duration="60"/></item>
</channel></rss>`;
    await api('POST', '/mrssfeed/acme', mrss, {
      'content-type': 'application/xml',
      'x-service-mrss-token': PUSH_TOKEN,
    });
    const loaded = Date.now() + 10_000;
    while (service.brands.current.size !== 1 && Date.now() < loaded) await sleep(50);
    const stitch = async (protocol: 'hls' | 'dash', stream: string) => {
      const t0 = performance.now();
      const body = await api('POST', `/stitch/${protocol}/stream/${stream}/asset/vod-${protocol}`, undefined, {
        'x-brand': 'acme',
      });
      return {
        ms: performance.now() - t0,
        ads: (body['breaks'] as Array<{ ads: unknown[] }>).reduce((n, b) => n + b.ads.length, 0),
      };
    };

    const results: Record<string, unknown> = {};
    for (const protocol of ['hls', 'dash'] as const) {
      await stitch(protocol, `${protocol}-queue`); // queues the job (the ad is left out of this one)
      const deadline = Date.now() + 600_000;
      let row: { protocol: string; state: string; renditions?: { seconds_to_ready: number } } | undefined;
      while (Date.now() < deadline) {
        row = ((await api('GET', '/api/v1/ad-creatives')).results as Array<typeof row>).find(
          (c) => c!.protocol === protocol,
        );
        if (row && row.state !== 'pending') break;
        await sleep(250);
      }
      if (row?.state !== 'ready') throw new Error(`${protocol} conditioning ended ${row?.state ?? 'never'}`);
      results[`conditioning ${protocol} (s, queued → ready)`] = row.renditions!.seconds_to_ready;
    }
    for (const protocol of ['hls', 'dash'] as const) {
      await stitch(protocol, `${protocol}-warm`);
      const runs: number[] = [];
      let adsPerPost = 0;
      for (let i = 0; i < posts; i++) {
        const r = await stitch(protocol, `${protocol}-${i}`);
        if (r.ads < 1) throw new Error(`${protocol} stitch carried no ad: the conditioned ad was not used`);
        adsPerPost = r.ads;
        runs.push(r.ms);
      }
      runs.sort((a, b) => a - b);
      results[`stitch POST ${protocol}, ${adsPerPost} conditioned ads (ms p50 / p90 / max of ${posts})`] =
        `${pct(runs, 50).toFixed(1)} / ${pct(runs, 90).toFixed(1)} / ${runs.at(-1)!.toFixed(1)}`;
    }
    for (const [k, v] of Object.entries(results)) console.log(`${k}: ${String(v)}`);
  } finally {
    await service.close();
    await adServer.stop();
    await origin.stop();
    await admin.unsafe(`drop schema if exists ${schema} cascade`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
