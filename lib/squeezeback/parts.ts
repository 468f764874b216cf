/** The squeezeback player flow's parts (lib/app.ts): the brands' player-token keys, the origin pools, /squeezeback/*. */
import type { BrandCache } from '../brand/cache.js';
import type { Config } from '../config/index.js';
import type { BreakSource } from '../delivery/break-source.js';
import type { EventSettingsSource } from '../delivery/event-settings.js';
import type { ManifestCache } from '../delivery/manifest-cache.js';
import type { Edge } from '../http/edge.js';
import type { TemplatedApp } from '../http/uws.js';
import type { Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import type { OutboundPolicy } from '../outbound/index.js';
import type { Stores } from '../store/index.js';
import type { StreamRegistry } from '../streams/registry.js';
import { BrandKeyCache } from './brand-keys.js';
import { OriginPools } from './origins.js';
import { PlayerFlow } from './player-flow.js';
import { StreamIds } from './stream-ids.js';

export interface SqueezebackUses {
  events: EventSettingsSource;
  streams: StreamRegistry;
  brands: BrandCache;
  breaks: BreakSource;
  cache: ManifestCache;
}

export async function squeezebackParts(
  core: { config: Config; log: Logger; metrics: Registry; life: Stops; stores: Stores; policy: OutboundPolicy },
  /** The brands' player-token keys (the catalog's). */
  jwtKeys: () => Promise<Array<{ brand_name: string; jwt_key: string }>>,
) {
  const { config, log, metrics, life, stores } = core;
  const brandKeys = life.add('brand key cache', new BrandKeyCache(jwtKeys, stores.state, log), (k) => k.stop());
  await brandKeys.start();
  return {
    brandKeys,
    mount(app: TemplatedApp, edge: Edge, uses: SqueezebackUses): void {
      const origins = life.add('origin upstreams', new OriginPools(core.policy, config.upstreamDeadlineMs), (o) =>
        o.close(),
      );
      new PlayerFlow(
        { contentOrigin: config.contentOrigin, trustedProxies: edge.trusted, idleSec: config.streamIdleSec },
        {
          ...uses,
          ids: new StreamIds(stores.state, config.streamIdleSec * 1000),
          brandKeys,
          origins,
          metrics,
          log,
          limiter: edge.limiter,
          cors: edge.cors,
        },
      ).mount(app);
    },
  };
}
