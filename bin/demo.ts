/**
 * `npm run demo`: the whole picture on one machine, in this one process. Real video made once
 * with ffmpeg (lib/sim/demo-media.ts), a live origin sliding over it with SCTE-35 cues every few
 * minutes, an ad server with real MP4 ads, the reference transcoder, and the service on its
 * embedded defaults (Postgres under DATA_DIR, default ./var/demo; state in memory), configured
 * through its API; then it prints the operator and player pages. Ctrl-C / SIGTERM stops
 * everything it started (the transcoder's ffmpeg runs, the embedded Postgres).
 */
import path from 'node:path';
import { loadConfig, ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { startService } from '../lib/app.js';
import { mintToken } from '../lib/http/auth.js';
import { UwsLoadError } from '../lib/http/uws.js';
import { loadTranscoderConfig, startTranscoder } from '../lib/transcoder/index.js';
import { checkDemoTools, demoMedia } from '../lib/sim/demo-media.js';
import { VideoOriginSim } from '../lib/sim/video-origin.js';
import { AdServerSim } from '../lib/sim/ad-server.js';
import { configureDemo, scheduleCues, DEMO_ASSET, DEMO_CHANNEL } from '../lib/sim/demo-setup.js';

/** A cue-triggered break of 32 s every 5 minutes, the first 3 minutes after start. */
const CUES = { firstAfterSec: 180, everySec: 300, breakSec: 32, hours: 12 };

const stops: Array<{ name: string; stop: () => Promise<unknown> }> = [];
const abort = new AbortController();
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    abort.abort();
    setTimeout(() => process.exit(code || 1), 20_000).unref();
    for (const { name, stop } of stops.reverse())
      await stop().catch((err: Error) => process.stderr.write(`stopping ${name}: ${err.message}\n`));
    process.exit(code);
  }
  return new Promise<never>(() => undefined);
}

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  const ffmpeg = process.env['FFMPEG_PATH'] || 'ffmpeg';
  await checkDemoTools(ffmpeg);
  const media = await demoMedia({ ffmpeg, signal: abort.signal }, (m) => say(m));
  if (stopping) return;

  const segmentSec = media.segmentSec;
  const origin = await new VideoOriginSim({
    segments: media.segments,
    segmentSec,
    windowSegments: 15,
    files: new Map([['/brand/background.png', { type: 'image/png', body: media.background }]]),
  }).start();
  stops.push({ name: 'origin', stop: () => origin.stop() });
  const live = origin.live();
  const cueStarts = scheduleCues(origin, DEMO_CHANNEL, {
    firstSeq: live + Math.round(CUES.firstAfterSec / segmentSec),
    everySegments: Math.round(CUES.everySec / segmentSec),
    breakSegments: Math.round(CUES.breakSec / segmentSec),
    count: Math.ceil((CUES.hours * 3600) / CUES.everySec),
  });
  const adServer = await new AdServerSim({
    ads: media.ads.map((a) => ({ id: a.id, durationSec: a.durationSec })),
    creatives: new Map(media.ads.map((a) => [a.id, a.mp4])),
  }).start();
  stops.push({ name: 'ad server', stop: () => adServer.stop() });

  const logLevel = process.env['LOG_LEVEL'] || 'warn';
  const log = createLogger(logLevel);
  const dataDir = path.resolve(process.env['DATA_DIR'] || './var/demo');
  const transcoder = await startTranscoder(
    loadTranscoderConfig({
      ...process.env,
      TRANSCODER_PORT: process.env['TRANSCODER_PORT'] || '0',
      TRANSCODER_DATA_DIR: process.env['TRANSCODER_DATA_DIR'] || path.join(dataDir, 'transcoder'),
    }),
    log.child({ part: 'transcoder' }),
  );
  stops.push({ name: 'transcoder', stop: () => transcoder.close() });

  const config = loadConfig(process.env, {
    dataDir,
    allowPrivateOutbound: true,
    contentOrigin: origin.url,
    adServerUrl: `${adServer.url}/ad`,
    transcoderUrl: transcoder.url,
    logLevel,
  });
  const service = await startService(config, log);
  stops.push({ name: 'service', stop: () => service.close() });
  const baseUrl = config.publicBaseUrl;
  const token = await mintToken(config, { subject: 'demo', ttlSec: 12 * 3600 });
  await configureDemo({
    baseUrl: service.url,
    token,
    originUrl: origin.url,
    ads: media.ads.map((a) => ({ id: a.id, uri: adServer.creativeUrl(a.id), durationSec: a.durationSec })),
    backgroundUri: `${origin.url}/brand/background.png`,
  });

  const stream = `${baseUrl}/squeezeback/${DEMO_ASSET}/master.m3u8`;
  const at = (seq: number) => new Date(origin.pdtOf(seq)).toISOString().slice(11, 19);
  say();
  say('The squeezeback demo is running.');
  say();
  say(`  Operator page  ${baseUrl}/ui/#token=${token}`);
  say(`  Player page    ${baseUrl}/ui/player.html?src=${encodeURIComponent(stream)}`);
  say(`  Stream         ${stream}`);
  say(`  Token          ${token}`);
  say();
  say(
    `  Live origin ${origin.url}/${DEMO_CHANNEL}/master.m3u8 (${media.segments.length} segments of ${segmentSec} s, looped), ad server ${adServer.url}, transcoder ${transcoder.url}`,
  );
  say(
    `  SCTE-35 cue-outs (${CUES.breakSec} s breaks) every ${CUES.everySec / 60} minutes, the first at ${at(cueStarts[0]!)} UTC; or start a break on the operator page.`,
  );
  say(`  Data: ${dataDir} (embedded Postgres), video cache: ${media.dir}`);
  say();
  say('Ctrl-C stops everything.');
}

main().catch((err: unknown) => {
  if (stopping) return;
  let message =
    err instanceof ConfigError || err instanceof UwsLoadError
      ? err.message
      : err instanceof Error
        ? err.message
        : String(err);
  if (/^cannot listen/.test(message)) message += ': set PORT to another port';
  process.stderr.write(`npm run demo: ${message}\n`);
  void stopAll(1);
});
