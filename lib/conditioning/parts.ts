/**
 * Ad conditioning's parts (lib/app.ts): MP4 creatives transcoded to the content's ladder by leased
 * jobs, the creative files they produce (served under the stitch path) and the API.
 */
import type { Config } from '../config/index.js';
import type { Cors } from '../http/cors.js';
import type { TemplatedApp } from '../http/uws.js';
import type { NamedWorker, Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import { OutboundClient, type OutboundPolicy } from '../outbound/index.js';
import type { Stores } from '../store/index.js';
import type { StitchServiceDeps } from '../stitch/service.js';
import { mountCreativeFiles } from './endpoints.js';
import { CreativeFiles, type RenditionStore } from './files.js';
import { S3_AGENT, S3CreativeFiles } from './s3-files.js';
import { CreativeRepo } from './repo.js';
import { conditioningRoutes } from './routes.js';
import { ConditioningService } from './service.js';
import { ConditioningWorker } from './worker.js';

/** Issue 26: back-off doubled per failure up to a day (size cap and job deadline: AD_CONDITIONING_MAX_BYTES, AD_CONDITIONING_JOB_TIMEOUT_SEC). */
const CONDITIONING = {
  leaseMs: 15_000,
  tickMs: 2000,
  maxAttempts: 3,
  backoffMaxSec: 86_400,
};

export function conditioningParts(
  core: { config: Config; log: Logger; metrics: Registry; life: Stops; stores: Stores; policy: OutboundPolicy },
  uses: { owner: string; publicBaseUrl: () => string },
) {
  const { config, log, metrics } = core;
  // Renditions in DATA_DIR/ad-creatives, or in an S3-compatible store when S3_ENDPOINT is set.
  let files: RenditionStore = new CreativeFiles(config.dataDir);
  if (config.s3Endpoint) {
    files = new S3CreativeFiles(
      {
        endpoint: config.s3Endpoint,
        bucket: config.s3Bucket,
        region: config.s3Region,
        accessKeyId: config.s3AccessKeyId,
        secretAccessKey: config.s3SecretAccessKey,
        prefix: config.s3Prefix,
      },
      config.dataDir,
      core.policy.agent(S3_AGENT),
    );
  }
  const jobTimeoutMs = config.adConditioningJobTimeoutSec * 1000;
  const creatives = new OutboundClient(core.policy, {
    timeoutMs: 60_000,
    maxResponseSize: config.adConditioningMaxBytes,
  });
  core.life.add('ad creative client', creatives, (c) => c.close());
  const repo = new CreativeRepo(core.stores.sql, config.adConditioningBackoffSec, CONDITIONING.backoffMaxSec);
  const service = new ConditioningService(
    {
      repo,
      files,
      fetchBytes: (url, signal) => creatives.bytes(url, signal),
      ffmpeg: config.ffmpegPath,
      queued: () => void worker.tick(),
      publicBaseUrl: uses.publicBaseUrl,
      stitchPath: config.stitchPath,
      log,
      metrics,
    },
    {
      maxBytes: config.adConditioningMaxBytes,
      maxDurationSec: config.adConditioningMaxSec,
      jobTimeoutMs,
      preset: config.adConditioningX264Preset,
    },
  );
  const worker = new ConditioningWorker(
    { repo, condition: (job, signal) => service.condition(job, signal), log, metrics },
    {
      owner: uses.owner,
      leaseMs: CONDITIONING.leaseMs,
      tickMs: CONDITIONING.tickMs,
      maxJobs: config.adConditioningJobs,
      jobTimeoutMs,
      maxAttempts: CONDITIONING.maxAttempts,
    },
  );
  /** What the stitcher asks of conditioning: an ad's renditions for a ladder, a session's again by key. */
  const forStitch: Pick<StitchServiceDeps, 'conditioned' | 'conditionedByKey'> = {
    conditioned: (ad, profile, waitUntilMs) => service.lookup(ad, profile, waitUntilMs),
    conditionedByKey: (key, base) => service.byKey(key, base),
  };
  return {
    worker,
    forStitch,
    workers: [['ad conditioning worker', worker]] as NamedWorker[],
    routes: conditioningRoutes(service),
    mount: (app: TemplatedApp, cors: Cors) => mountCreativeFiles(app, config.stitchPath, files, cors),
  };
}
