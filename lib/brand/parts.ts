/** The brand-recognition domain's parts (lib/app.ts): its repository, the matcher's cache, its routes. */
import type { Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Stores } from '../store/index.js';
import { BrandCache } from './cache.js';
import { BrandRepo } from './repo.js';
import { brandRoutes } from './routes.js';

export async function brandParts(core: { stores: Stores; log: Logger; life: Stops }) {
  const repo = new BrandRepo(core.stores.sql);
  // In-process rules the hot path reads, kept fresh through the state store's pub/sub.
  const cache = core.life.add('brand cache', new BrandCache(() => repo.all(), core.stores.state, core.log), (b) =>
    b.stop(),
  );
  await cache.start();
  return { repo, cache, routes: brandRoutes(repo, cache) };
}
