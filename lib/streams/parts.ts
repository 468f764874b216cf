/** The stream model's parts (lib/app.ts): the registry every flow records its streams in, and its routes. */
import type { Config } from '../config/index.js';
import type { Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import type { Stores } from '../store/index.js';
import { StreamRegistry } from './registry.js';
import { streamRoutes } from './routes.js';

export function streamParts(core: { config: Config; stores: Stores; log: Logger; metrics: Registry; life: Stops }) {
  const { config, metrics } = core;
  const registry = core.life.add(
    'stream registry',
    new StreamRegistry(core.stores.state, core.log, config.streamIdleSec * 1000, {
      maxStreams: config.maxStreams,
      metrics,
    }),
    (s) => s.close(),
  );
  return { registry, routes: streamRoutes(registry) };
}
