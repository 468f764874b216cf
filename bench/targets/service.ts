/**
 * Benchmark targets (b) and (c): the service itself, upstream = the simulator, with a live window
 * of 10 segments and a live-edge delay of 2 for the benchmark's event. Prints "READY <port>".
 * With `--break`, SIGUSR2 toggles target (g): a squeeze break active on the benchmark's event, its
 * 1,000 streams each assigned, every content segment of the window squeezed ("BREAK on|off" is
 * printed once every instance's snapshot has it). One process measures both states, so the
 * comparison is not blurred by two processes' heaps and warm-up.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config/index.js';
import { createLogger } from '../../lib/log/index.js';
import { startService, type Service } from '../../lib/app.js';
import { mintToken } from '../../lib/http/auth.js';
import type { EventSettingsSource } from '../../lib/delivery/event-settings.js';
import { SqueezeConfigRepo } from '../../lib/squeeze/config/repo.js';
import { BreakRepo, type NewSegment } from '../../lib/squeeze/breaks/repo.js';
import { assignmentKey, placeOnTimeline } from '../../lib/squeeze/breaks/plan.js';
import { defaultShape } from '../../lib/sim/live-playlist.js';
import { SQUEEZEBACK_ASSET } from '../squeezeback.js';

const simUrl = process.argv[2]!;
const withBreak = process.argv.includes('--break');
// Manifests of the benchmark's event (asset key BENCH) are trimmed to 10 segments with a delay of 2;
// the ad-proxy run registers its streams under another event (ADS) so they can be counted apart.
const bench = { eventId: 1, windowSegs: 10, liveEdgeDelaySegments: 2 };
const ads = { eventId: 2, windowSegs: 0, liveEdgeDelaySegments: 0 };
// Target (h): a squeezeback-flow event whose source is the simulator's master, trimmed as the benchmark's event is.
const squeezeback = {
  eventId: 3,
  windowSegs: 10,
  liveEdgeDelaySegments: 2,
  assetId: SQUEEZEBACK_ASSET,
  sourceUri: `${simUrl}/source/master.m3u8`,
};
const events: EventSettingsSource = {
  generation: 0,
  forAssetKey: (key) => (key === 'ADS' ? ads : key === SQUEEZEBACK_ASSET ? squeezeback : bench),
};
const config = loadConfig(process.env, {
  port: 0,
  daiHost: simUrl,
  contentOrigin: 'https://origin.example.org',
  publicBaseUrl: 'https://edge.example.net',
  allowPrivateOutbound: true,
  logLevel: 'warn',
  // One load generator is one client: limits far above any rate it reaches (the limiter still runs).
  rateLimits: Object.fromEntries(
    ['api', 'beacon', 'vast', 'adproxy', 'stream', 'stitch'].map((k) => [k, { rate: 1e6, burst: 1e6 }]),
  ),
  dataDir: process.env['DATA_DIR'] ?? mkdtempSync(path.join(os.tmpdir(), 'sqz-bench-')),
});
const service = await startService(config, createLogger(config.logLevel), { events });
if (withBreak) {
  let on = false;
  let busy = Promise.resolve();
  process.on('SIGUSR2', () => {
    busy = busy.then(async () => {
      on = !on;
      await (on ? activeBreak(service) : removeBreak(service));
      process.stdout.write(`BREAK ${on ? 'on' : 'off'}\n`);
    });
  });
}
process.stdout.write(`TOKEN ${await mintToken(config)}\nREADY ${service.port}\n`);
process.on('SIGTERM', () => void service.close().then(() => process.exit(0)));

/**
 * A 600 s break that began 20 segments ago on event 1, as a PUT on 1,000 DAI streams leaves it
 * (per-stream assignments, tracking that the service fires itself), with every content segment of
 * the 720p rendition from then on ready. Held by a lease no worker takes, so the run measures
 * only the manifest path.
 */
const BREAK_ID = '00000000-0000-4000-8000-00000000be0c';

async function removeBreak(s: Service): Promise<void> {
  await s.stores.sql`delete from squeeze_break where id = ${BREAK_ID}`;
  await s.breaks.changed();
}

async function activeBreak(s: Service): Promise<void> {
  const repo = new SqueezeConfigRepo(s.stores.sql);
  await repo.upsertBrand({ brand_id: 'bench' });
  const event = await repo.upsertEvent({
    asset_id: 'BENCH',
    source_uri: `${simUrl}/source/master.m3u8`,
    brand_config_id: 'bench',
  });
  const segMs = defaultShape.segmentSec * 1000;
  const live = Math.floor((Date.now() - defaultShape.epochMs) / segMs);
  const start = defaultShape.epochMs + (live - 20) * segMs;
  const track = (ev: string) => [`${simUrl}/track?ev=${ev}`];
  const ad = {
    adId: 'bench-ad',
    uri: 'https://cdn.example.com/bench.mp4',
    durationSec: 30,
    tracking: {
      impression: track('impression'),
      start: track('start'),
      firstQuartile: track('q1'),
      midpoint: track('mid'),
      thirdQuartile: track('q3'),
      complete: track('complete'),
    },
  };
  const key = assignmentKey([ad]);
  const streams = [...Array.from({ length: 1000 }, (_, i) => `s${i}:LOC`), 'hot:LOC'];
  const breaks = new BreakRepo(s.stores.sql);
  const id = BREAK_ID;
  await breaks.insert({
    id,
    event_id: event['id'] as number,
    target: 'streams',
    status: 'active',
    start_time: new Date(start),
    end_time: new Date(start + 600_000),
    break_duration: 600,
    segment_sec: defaultShape.segmentSec,
    layout: 'dualbox',
    abid: null,
    geo_lang_loc: null,
    decision_source: 'vmap',
    reason: null,
    assignments: [{ key, source: 'vmap', ads: [ad] }],
    stream_assignments: Object.fromEntries(streams.map((st) => [st, key])),
    default_assignment: null,
    stream_tracking: {},
    settings: event,
    trigger: { source: 'api' },
  });
  await s.stores
    .sql`update squeeze_break set lease_owner = 'bench', lease_until = now() + interval '1 day' where id = ${id}`;
  const rows: NewSegment[] = [];
  for (let seq = live - 20; seq < live + 80; seq++) {
    const offset = (seq - live + 20) * defaultShape.segmentSec;
    // Tracking points as the worker plans them: each stream's first rendering hands them to the beacon forwarder.
    const { events } = placeOnTimeline([ad], offset, defaultShape.segmentSec);
    rows.push({
      break_id: id,
      assignment: key,
      content_path: `/content/720p/seg_${seq}.ts`,
      content_uri: `https://origin.example.org/content/720p/seg_${seq}.ts`,
      idx: seq - live + 20,
      start_time: new Date(defaultShape.epochMs + seq * segMs),
      duration: defaultShape.segmentSec,
      ad_index: 0,
      ad_offset: offset % 30,
      events,
      output_key: `bench/${seq}`,
    });
  }
  await breaks.addSegments(rows);
  await s.stores
    .sql`update squeeze_break_segment set status = 'ready', output_uri = 'https://objects.example.com/sqz/' || output_key || '.ts' where break_id = ${id}`;
  await s.breaks.changed();
}
