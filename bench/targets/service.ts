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
import type { EventSettingsSource } from '../../lib/dai/event-settings.js';

const simUrl = process.argv[2]!;
const events: EventSettingsSource = { generation: 0, forAssetKey: () => ({ eventId: 1, windowSegs: 10, liveEdgeDelaySegments: 2 }) };
const config = loadConfig(process.env, {
  port: 0,
  daiHost: simUrl,
  contentOrigin: 'https://origin.example.org',
  publicBaseUrl: 'https://edge.example.net',
  logLevel: 'warn',
  dataDir: process.env['DATA_DIR'] ?? mkdtempSync(path.join(os.tmpdir(), 'sqz-bench-')),
});
const service = await startService(config, createLogger(config.logLevel), { events });
process.stdout.write(`READY ${service.port}\n`);
process.on('SIGTERM', () => void service.close().then(() => process.exit(0)));
