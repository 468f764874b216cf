/**
 * Benchmark targets (b) and (c): the service itself, upstream = the simulator, with a live window
 * of 10 segments and a live-edge delay of 2 for the benchmark's event. Prints "READY <port>".
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config/index.js';
import { createLogger } from '../../lib/log/index.js';
import { startService } from '../../lib/http/server.js';
import { mintToken } from '../../lib/http/auth.js';
import type { EventSettingsSource } from '../../lib/dai/event-settings.js';

const simUrl = process.argv[2]!;
// Manifests of the benchmark's event (asset key BENCH) are trimmed to 10 segments with a delay of 2;
// the ad-proxy run registers its streams under another event (ADS) so they can be counted apart.
const bench = { eventId: 1, windowSegs: 10, liveEdgeDelaySegments: 2 };
const ads = { eventId: 2, windowSegs: 0, liveEdgeDelaySegments: 0 };
const events: EventSettingsSource = { generation: 0, forAssetKey: (key) => (key === 'ADS' ? ads : bench) };
const config = loadConfig(process.env, {
  port: 0,
  daiHost: simUrl,
  contentOrigin: 'https://origin.example.org',
  publicBaseUrl: 'https://edge.example.net',
  logLevel: 'warn',
  dataDir: process.env['DATA_DIR'] ?? mkdtempSync(path.join(os.tmpdir(), 'sqz-bench-')),
});
const service = await startService(config, createLogger(config.logLevel), { events });
process.stdout.write(`TOKEN ${await mintToken(config)}\nREADY ${service.port}\n`);
process.on('SIGTERM', () => void service.close().then(() => process.exit(0)));
