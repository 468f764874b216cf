/** Server-side stitching's parts (lib/app.ts): the stitch service, its POST routes and the stitched-manifest endpoints. */
import type { AdTagSettings } from '../ads/ad-request.js';
import { resolveAds } from '../ads/resolve.js';
import type { BrandCache } from '../brand/cache.js';
import type { AssetRecord } from '../catalog/repo.js';
import type { Config } from '../config/index.js';
import type { Cors } from '../http/cors.js';
import type { TemplatedApp } from '../http/uws.js';
import type { Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import { OutboundClient, type OutboundPolicy } from '../outbound/index.js';
import type { Stores } from '../store/index.js';
import { StitchEndpoints } from './endpoints.js';
import { stitchRoutes } from './routes.js';
import { StitchService, stitchWaitMs, type StitchServiceDeps } from './service.js';
import { StitchStore } from './store.js';

export interface StitchUses extends Pick<StitchServiceDeps, 'conditioned' | 'conditionedByKey'> {
  findAsset(brand: string, assetId: string): Promise<AssetRecord>;
  /** The brand's squeeze brand configuration (undefined when it has none, or it cannot be read). */
  brandSettings(brand: string): Promise<Record<string, unknown> | undefined>;
  brands: BrandCache;
  beaconSecret: string;
  publicBaseUrl: () => string;
}

export function stitchParts(
  core: {
    config: Config;
    log: Logger;
    life: Stops;
    stores: Stores;
    policy: OutboundPolicy;
    fetchText: (url: string, signal: AbortSignal) => Promise<string>;
  },
  uses: StitchUses,
) {
  const { config, log } = core;
  // Manifests capped at 8 MiB each (a 3-hour VOD playlist is a few hundred KiB).
  const manifests = new OutboundClient(core.policy, { timeoutMs: 10_000, maxResponseSize: 8 * 1024 * 1024 });
  core.life.add('stitch manifest client', manifests, (m) => m.close());
  const store = new StitchStore(core.stores.sql);
  const service = new StitchService({
    findAsset: uses.findAsset,
    adTag: async (brand) =>
      ((await uses.brandSettings(brand))?.['ad_tag'] as AdTagSettings | undefined) ?? { params: {} },
    resolve: (url) => resolveAds({ url }, core.fetchText, { log, streaming: true }),
    fetchText: (url, signal) => manifests.text(url, signal),
    store,
    adServerUrl: config.adServerUrl,
    publicBaseUrl: uses.publicBaseUrl,
    stitchPath: config.stitchPath,
    ttlSec: config.stitchTtlSec,
    beaconSecret: uses.beaconSecret,
    log,
    conditioned: uses.conditioned,
    conditionedByKey: uses.conditionedByKey,
    waitForAds: async (brand) =>
      stitchWaitMs((await uses.brandSettings(brand))?.['stitch_wait_for_ads_ms'], config.stitchMaxWaitMs),
    slate: async (brand) => {
      const slate = (await uses.brandSettings(brand))?.['stitch_slate'] as { uri: string; fill?: boolean } | undefined;
      return slate ? { uri: slate.uri, fill: slate.fill === true } : undefined;
    },
  });
  return {
    routes: stitchRoutes(config.stitchPath, service, uses.brands),
    mount: (app: TemplatedApp, cors: Cors) =>
      new StitchEndpoints(config.stitchPath, store, service, log, cors, config.stitchTtlSec).mount(app),
  };
}
