/** The catalog's parts (lib/app.ts): the catalog and feed repositories, the feed puller, their routes. */
import type { Config } from '../config/index.js';
import type { NamedWorker } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { OutboundPolicy } from '../outbound/index.js';
import type { Stores } from '../store/index.js';
import { FeedConfigRepo } from './feed-repo.js';
import { feedConfigRoutes } from './feed-routes.js';
import { FeedPuller } from './puller.js';
import { CatalogRepo } from './repo.js';
import { catalogRoutes } from './routes.js';

export function catalogParts(core: { config: Config; stores: Stores; log: Logger; policy: OutboundPolicy }) {
  const repo = new CatalogRepo(core.stores.sql);
  const feeds = new FeedConfigRepo(core.stores.sql);
  const puller = new FeedPuller(core.stores.sql, repo, core.log, {
    policy: core.policy,
    agent: core.policy.agent({ timeoutMs: 30_000, maxResponseSize: 200 * 1024 * 1024 }),
    leaseMs: core.config.feedLeaseMs,
  });
  return {
    repo,
    puller,
    workers: [['feed puller', puller]] as NamedWorker[],
    /** `onJwtKeyChanged`: a brand's player-token key was set (the squeezeback flow's key cache reloads). */
    routes: (onJwtKeyChanged: () => Promise<void>) => [
      ...catalogRoutes(repo, onJwtKeyChanged),
      ...feedConfigRoutes(feeds, () => void puller.tick()),
    ],
  };
}
