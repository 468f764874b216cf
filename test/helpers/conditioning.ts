/**
 * The set-up the ad conditioning tests share (issue 26): small MP4 creatives made with ffmpeg
 * (426x240, 30 fps, 44.1 kHz mono: unlike the content), an HLS TS VOD with a 3-rung ladder and a
 * DASH VOD (25 fps, 48 kHz stereo) served by the origin simulator, the ad server simulator, and
 * instances sharing one database and object store with the brand, its push token and catalog.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Test } from 'tap';
import { call } from './http.js';
import { FFMPEG, ffmpeg } from './ffmpeg.js';
import { REDIS_URL, freshSchemaUrl, startTestService, tempDir, token } from './services.js';
import { vod } from './stitch-checks.js';
import { AdServerSim, type SimAd } from '../../lib/sim/ad-server.js';
import { StaticHostSim } from '../../lib/sim/static-host.js';
import type { Service } from '../../lib/app.js';
import type { Config } from '../../lib/config/index.js';

const TOKEN = 'push-token-0123456789abcdefghij';

export const RUNGS = [
  { w: 320, h: 180, bw: 400_000, codecs: 'avc1.4d400d,mp4a.40.2' },
  { w: 480, h: 270, bw: 700_000, codecs: 'avc1.4d4015,mp4a.40.2' },
  { w: 640, h: 360, bw: 1_000_000, codecs: 'avc1.64001e,mp4a.40.2' },
];
export const DASH_RUNGS = [RUNGS[0]!, RUNGS[2]!];
/** The content's segment length (HLS target duration and DASH SegmentTemplate). */
export const SEGMENT_SEC = 2;

function hlsContent(): Map<string, string> {
  const files = new Map<string, string>();
  const master = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    ...RUNGS.flatMap((r, i) => [
      `#EXT-X-STREAM-INF:BANDWIDTH=${r.bw},RESOLUTION=${r.w}x${r.h},CODECS="${r.codecs}",FRAME-RATE=25.000`,
      `v${i}.m3u8`,
    ]),
  ];
  files.set('/vod/hls/master.m3u8', master.join('\n') + '\n');
  RUNGS.forEach((_, i) =>
    files.set(`/vod/hls/v${i}.m3u8`, vod(`v${i}_`, Array(6).fill(SEGMENT_SEC), { target: SEGMENT_SEC })),
  );
  return files;
}

const DASH_MPD = `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT12S" minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
  <Period id="content" start="PT0S">
    <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true" frameRate="25">
      <SegmentTemplate timescale="1000" duration="${SEGMENT_SEC * 1000}" startNumber="1" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Number$.m4s"/>
${DASH_RUNGS.map((r, i) => `      <Representation id="v${i}" width="${r.w}" height="${r.h}" bandwidth="${r.bw}" codecs="${r.codecs.split(',')[0]}"/>`).join('\n')}
    </AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en">
      <SegmentTemplate timescale="1000" duration="${SEGMENT_SEC * 1000}" startNumber="1" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Number$.m4s"/>
      <Representation id="a0" bandwidth="128000" codecs="mp4a.40.2" audioSamplingRate="48000">
        <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>
      </Representation>
    </AdaptationSet>
  </Period>
</MPD>
`;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * An MP4 creative of `sec` seconds: H.264 426x240 at 30 fps, AAC mono at 44.1 kHz. videoKbps: a
 * target video bitrate (x264's default rate control without it).
 */
export async function makeCreative(
  dir: string,
  name: string,
  sec: number,
  tone = 440,
  videoKbps?: number,
): Promise<Buffer> {
  const file = path.join(dir, `${name}.mp4`);
  await ffmpeg([
    ...[
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=426x240:rate=30:duration=${sec}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=${tone}:sample_rate=44100:duration=${sec}`,
    ],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', ...(videoKbps ? ['-b:v', `${videoKbps}k`] : [])],
    ...['-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '1', '-shortest', file],
  ]);
  return readFile(file);
}

export interface CreativeView {
  id: string;
  key: string;
  media_url: string;
  protocol: string;
  state: string;
  job_id: string;
  attempts: number;
  failures: number;
  error?: string;
  renditions: { files: string[]; seconds_to_ready: number } | null;
}

export interface Rig {
  instances: Service[];
  adServer: AdServerSim;
  jwt: string;
  stitch(
    base: string,
    protocol: 'hls' | 'dash',
    stream: string,
    asset: 'vod-hls' | 'vod-dash',
  ): ReturnType<typeof call>;
  creatives(): Promise<CreativeView[]>;
  /** Polls the creatives until none is pending or the deadline passes; answers the last view. */
  settle(deadlineMs: number): Promise<CreativeView[]>;
}

/** Origin, ad server (VMAP breaks `breaks`, the given ads and their MP4s), `count` instances sharing one schema and DATA_DIR, brand `acme` with both VODs (cue point 6 s). */
export async function rig(
  t: Test,
  opts: {
    count: number;
    breaks: string[];
    ads: SimAd[];
    creatives: Map<string, Buffer>;
    config?: Partial<Config>;
    /** A DATA_DIR per instance (they then share renditions only through an object store in `config`). */
    dataDirEach?: boolean;
  },
): Promise<Rig> {
  const files = hlsContent();
  files.set('/vod/dash/manifest.mpd', DASH_MPD);
  const origin = await new StaticHostSim(files).start();
  t.teardown(() => origin.stop());
  const adServer = await new AdServerSim({ breaks: opts.breaks, ads: opts.ads, creatives: opts.creatives }).start();
  t.teardown(() => adServer.stop());
  const databaseUrl = await freshSchemaUrl(t);
  // Instances share the database and the object store (DATA_DIR), as instances on one host do.
  const overrides = {
    databaseUrl,
    redisUrl: REDIS_URL,
    adServerUrl: `${adServer.url}/ad`,
    allowPrivateOutbound: true,
    dataDir: tempDir(t),
    ffmpegPath: FFMPEG,
    // x264's fastest preset (the default is veryfast): what these tests check of a rendition (its
    // size, codec, segment lengths, the pod it fills) does not depend on it, and encoding is most
    // of their CPU. test/browser/conditioned.test.ts conditions with the default and plays it.
    adConditioningX264Preset: 'ultrafast' as const,
    ...opts.config,
  };
  const instances: Service[] = [];
  for (let i = 0; i < opts.count; i++)
    instances.push(await startTestService(t, opts.dataDirEach ? { ...overrides, dataDir: tempDir(t) } : overrides));
  const a = instances[0]!;
  const jwt = await token(a);
  t.equal(
    (
      await call(a.url, 'POST', '/api/v1/brand-recognition', {
        token: jwt,
        json: { brand_name: 'acme', match_type: 'header', match_name: 'X-Brand', match_value: 'acme' },
      })
    ).status,
    201,
  );
  t.equal(
    (await call(a.url, 'PUT', '/api/v1/brand-tokens/acme', { token: jwt, json: { mrss_token: TOKEN } })).status,
    204,
  );
  const mrss = `<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dfpvideo="http://api.google.com/dfpvideo"><channel>
<item><guid>vod-hls</guid><title>HLS</title><dfpvideo:cuepoints>6</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/hls/master.m3u8" type="application/x-mpegURL" duration="12"/></item>
<item><guid>vod-dash</guid><title>DASH</title><dfpvideo:cuepoints>6</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/dash/manifest.mpd" type="application/dash+xml" duration="12"/></item>
</channel></rss>`;
  t.match(
    (
      await call(a.url, 'POST', '/mrssfeed/acme', {
        body: mrss,
        headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN },
      })
    ).body,
    { inserted: 2 },
  );
  // The brand rule reaches every instance's matcher through the state store's pub/sub.
  const loaded = Date.now() + 10_000;
  while (instances.some((s) => s.brands.current.size !== 1) && Date.now() < loaded) await sleep(50);
  const creatives = async (): Promise<CreativeView[]> =>
    (await call(a.url, 'GET', '/api/v1/ad-creatives', { token: jwt })).body.results;
  return {
    instances,
    adServer,
    jwt,
    stitch: (base, protocol, stream, asset) =>
      call(base, 'POST', `/stitch/${protocol}/stream/${stream}/asset/${asset}`, { headers: { 'x-brand': 'acme' } }),
    creatives,
    settle: async (deadlineMs) => {
      const end = Date.now() + deadlineMs;
      let views = await creatives();
      while (views.some((c) => c.state === 'pending') && Date.now() < end) {
        await sleep(250);
        views = await creatives();
      }
      return views;
    },
  };
}
