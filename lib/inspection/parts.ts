/** ID3 inspection's parts (lib/app.ts): the job repository, the leased worker and the API. */
import type { Config } from '../config/index.js';
import type { NamedWorker } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import { OutboundClient, type OutboundPolicy } from '../outbound/index.js';
import type { Stores } from '../store/index.js';
import type { StreamRegistry } from '../streams/registry.js';
import { DEFAULT_LIMITS, inspect } from './inspect.js';
import { InspectionRepo } from './repo.js';
import { inspectionRoutes } from './routes.js';
import { InspectionService, type EventSourceLookup } from './service.js';
import { InspectionWorker } from './worker.js';

/** Issue 13: segments capped at 16 MiB each, a job at 120 s; 2 jobs at once per instance. */
const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;
const INSPECTION = { leaseMs: 15_000, tickMs: 1000, maxJobs: 2, jobTimeoutMs: 120_000, maxAttempts: 3 };

export function inspectionParts(
  core: { config: Config; log: Logger; metrics: Registry; stores: Stores; policy: OutboundPolicy; owner: string },
  uses: { streams: StreamRegistry; eventSource: EventSourceLookup },
) {
  const { config, log, metrics } = core;
  // Manifests and segments through the outbound policy, jobs leased through Postgres.
  const repo = new InspectionRepo(core.stores.sql, config.id3ResultTtlSec);
  const media = new OutboundClient(core.policy, {
    timeoutMs: DEFAULT_LIMITS.segmentTimeoutMs,
    maxResponseSize: SEGMENT_MAX_BYTES,
  });
  const daiOrigin = config.daiHost ? new URL(config.daiHost).origin : undefined;
  const worker = new InspectionWorker(
    {
      repo,
      inspect: (source, signal) =>
        inspect(
          source,
          {
            fetchText: (url, s) => media.text(url, s),
            fetchBytes: (url, s) => media.bytes(url, s),
            isAdUri: (uri) => daiOrigin !== undefined && uri.startsWith(`${daiOrigin}/`),
          },
          DEFAULT_LIMITS,
          signal,
        ),
      log,
      metrics,
    },
    { owner: core.owner, ...INSPECTION },
  );
  const service = new InspectionService(repo, uses.streams, {
    daiHost: config.daiHost,
    contentOrigin: config.contentOrigin,
    eventSource: uses.eventSource,
  });
  return { worker, workers: [['id3 inspection worker', worker]] as NamedWorker[], routes: inspectionRoutes(service) };
}
