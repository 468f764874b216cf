/**
 * The composition root: builds every part of the service once, wires them, mounts their routes on
 * the HTTP face, and registers each part's stop with the lifecycle, so that shutdown and a failed
 * start-up stop them in reverse order (the embedded database last).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config/index.js';
import type { Logger } from './log/index.js';
import { Lifecycle } from './lifecycle.js';
import { projectRoot } from './paths.js';
import { HttpServer } from './http/server.js';
import { Registry } from './http/metrics.js';
import { Router } from './http/router.js';
import { Cors, parseOrigins } from './http/cors.js';
import { RateLimiter } from './http/rate-limit.js';
import { createAuthenticator, persistentSecret } from './http/auth.js';
import { configureCompression } from './http/representation.js';
import { addressText, type HttpRequest, type HttpResponse } from './http/uws.js';
import { coreOperations, openApiDocument } from './http/openapi.js';
import { daiOperations } from './dai/openapi.js';
import { playerOperations } from './squeeze/breaks/openapi.js';
import { squeezebackOperations } from './squeezeback/openapi.js';
import { stitchOperations } from './stitch/openapi.js';
import { keys, openStores, type Stores } from './store/index.js';
import { OutboundClient, OutboundPolicy } from './outbound/index.js';
import { BrandRepo } from './brand/repo.js';
import { BrandCache } from './brand/cache.js';
import { brandRoutes } from './brand/routes.js';
import { Upstream } from './delivery/upstream.js';
import { ManifestCache } from './delivery/manifest-cache.js';
import { StreamRegistry } from './streams/registry.js';
import type { EventSettingsSource } from './delivery/event-settings.js';
import { ManifestProxy } from './dai/manifest-proxy.js';
import { AdProxy } from './dai/adproxy.js';
import { streamRoutes } from './streams/routes.js';
import { CatalogRepo } from './catalog/repo.js';
import { catalogRoutes } from './catalog/routes.js';
import { FeedConfigRepo } from './catalog/feed-repo.js';
import { feedConfigRoutes } from './catalog/feed-routes.js';
import { FeedPuller } from './catalog/puller.js';
import { SqueezeConfigRepo } from './squeeze/config/repo.js';
import { EventConfigCache } from './squeeze/config/event-cache.js';
import { squeezeConfigRoutes } from './squeeze/config/routes.js';
import { ConfiguredAdRepo } from './squeeze/ads/repo.js';
import { configuredAdRoutes } from './squeeze/ads/routes.js';
import { BreakRepo } from './squeeze/breaks/repo.js';
import { BreakBoard } from './squeeze/breaks/board.js';
import { BreakReach, readReach } from './squeeze/breaks/reach.js';
import { AdDecider } from './squeeze/breaks/decide.js';
import { BreakService } from './squeeze/breaks/service.js';
import { breakRoutes } from './squeeze/breaks/routes.js';
import { BreakWorker } from './squeeze/breaks/worker.js';
import { TranscoderClient } from './squeeze/breaks/transcoder.js';
import { PlayerEndpoints } from './squeeze/breaks/player-endpoints.js';
import { daiBeaconFiring } from './squeeze/breaks/dai-beacons.js';
import { CueMonitorRepo } from './squeeze/monitor/repo.js';
import { CueMonitor } from './squeeze/monitor/monitor.js';
import { scte35Routes } from './squeeze/monitor/routes.js';
import { BeaconForwarder } from './beacons/forwarder.js';
import { liveBreakSelector, resolveAds } from './ads/resolve.js';
import { InspectionRepo } from './inspection/repo.js';
import { InspectionService } from './inspection/service.js';
import { inspectionRoutes } from './inspection/routes.js';
import { InspectionWorker } from './inspection/worker.js';
import { DEFAULT_LIMITS, inspect } from './inspection/inspect.js';
import { PlayerFlow } from './squeezeback/player-flow.js';
import { BrandKeyCache } from './squeezeback/brand-keys.js';
import { OriginPools } from './squeezeback/origins.js';
import { StreamIds } from './squeezeback/stream-ids.js';
import { clientIp, trustedProxies } from './http/client-ip.js';
import { StitchStore } from './stitch/store.js';
import { StitchService, stitchWaitMs } from './stitch/service.js';
import { stitchRoutes } from './stitch/routes.js';
import { StitchEndpoints } from './stitch/endpoints.js';
import { CreativeRepo } from './conditioning/repo.js';
import { CreativeFiles } from './conditioning/files.js';
import { ConditioningService } from './conditioning/service.js';
import { ConditioningWorker } from './conditioning/worker.js';
import { conditioningRoutes } from './conditioning/routes.js';
import { mountCreativeFiles } from './conditioning/endpoints.js';
import type { AdTagSettings } from './ads/ad-request.js';
import { UiPages, uiOperations } from './ui/static.js';

export interface Service {
  config: Config;
  log: Logger;
  stores: Stores;
  metrics: Registry;
  port: number;
  url: string;
  brands: BrandCache;
  streams: StreamRegistry;
  manifestCache: ManifestCache;
  puller: FeedPuller;
  breaks: BreakBoard;
  breakWorker: BreakWorker;
  cueMonitor: CueMonitor;
  beacons: BeaconForwarder;
  inspections: InspectionWorker;
  conditioning: ConditioningWorker;
  close(): Promise<void>;
}

export interface ServiceParts {
  /** Event settings for the manifest proxy (defaults: the event configurations). */
  events?: EventSettingsSource;
}

const version = (JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string })
  .version;
const BEACON_TTL_MS = 24 * 3600 * 1000;
/** ID3 inspection (issue 13): segments capped at 16 MiB each, a job at 120 s; 2 jobs at once per instance. */
const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;
const INSPECTION = { leaseMs: 15_000, tickMs: 1000, maxJobs: 2, jobTimeoutMs: 120_000, maxAttempts: 3 };
/** Ad conditioning (issue 26): creatives up to 200 MiB, a job at 180 s; back-off doubled per failure up to a day. */
const CONDITIONING = {
  leaseMs: 15_000,
  tickMs: 2000,
  jobTimeoutMs: 180_000,
  maxAttempts: 3,
  maxBytes: 200 * 1024 * 1024,
  backoffMaxSec: 86_400,
};

export async function startService(config: Config, log: Logger, parts: ServiceParts = {}): Promise<Service> {
  const life = new Lifecycle(log);
  try {
    return await assemble(config, log, parts, life);
  } catch (err) {
    await life.stopAll();
    throw err;
  }
}

async function assemble(config: Config, log: Logger, parts: ServiceParts, life: Lifecycle): Promise<Service> {
  const metrics = new Registry();
  metrics.gauge('process_resident_memory_bytes', 'Resident set size', () => process.memoryUsage.rss());
  metrics.gauge('nodejs_heap_used_bytes', 'V8 heap in use', () => process.memoryUsage().heapUsed);
  metrics.gauge('process_uptime_seconds', 'Seconds since start', () => Math.round(process.uptime()));
  // Fails before anything starts when the native uWS binary is missing (and no fallback is allowed).
  const http = new HttpServer({
    host: config.host,
    port: config.port,
    allowUwsFallback: config.allowUwsFallback,
    metrics,
    log,
    readiness: { postgres: () => stores.sql`select 1`, state_store: () => stores.state.ping() },
    metricsToken: config.metricsToken,
  });
  let baseUrl = config.publicBaseUrl;
  const stores = life.add('stores', await openStores(config, log), (s) => s.close());

  // Every outbound fetch goes through one policy: configured collaborators by name, the rest public only.
  const policy = life.add(
    'outbound policy',
    new OutboundPolicy({
      allowPrivate: config.allowPrivateOutbound,
      trusted: [config.daiHost, config.contentOrigin, config.adServerUrl, config.transcoderUrl],
      log,
      metrics,
    }),
    (p) => p.close(),
  );
  const outbound = new OutboundClient(policy, { timeoutMs: 30_000 });
  const fetchText = (url: string, signal: AbortSignal) => outbound.text(url, signal);

  // Repositories, each built once.
  const brandRepo = new BrandRepo(stores.sql);
  const squeezeConfig = new SqueezeConfigRepo(stores.sql);
  const configuredAds = new ConfiguredAdRepo(stores.sql);
  const breakRepo = new BreakRepo(stores.sql);
  const catalog = new CatalogRepo(stores.sql);
  const feedConfigs = new FeedConfigRepo(stores.sql);

  // In-process state the hot path reads, kept fresh through the state store's pub/sub.
  const brands = life.add('brand cache', new BrandCache(() => brandRepo.all(), stores.state, log), (b) => b.stop());
  await brands.start();
  const brandKeys = life.add('brand key cache', new BrandKeyCache(() => catalog.jwtKeys(), stores.state, log), (k) =>
    k.stop(),
  );
  await brandKeys.start();
  const eventConfigs = life.add(
    'event config cache',
    new EventConfigCache(() => squeezeConfig.allEventSettings(), stores.state, log),
    (e) => e.stop(),
  );
  await eventConfigs.start();
  const streams = life.add(
    'stream registry',
    new StreamRegistry(stores.state, log, config.streamIdleSec * 1000, { maxStreams: config.maxStreams, metrics }),
    (s) => s.close(),
  );
  const board = life.add(
    'break board',
    new BreakBoard(breakRepo, stores.state, log, metrics, config.breakRetentionSec * 1000),
    (b) => b.stop(),
  );
  await board.start();
  // What each break reached, written behind the registry's flush (issue 30.2).
  board.reach = new BreakReach(config.breakRetentionSec * 1000);
  streams.alsoFlush(board.reach);

  // Beacons: signed for players, forwarded once; DAI streams' beacons fired by the service.
  if (!config.beaconSecret && config.redisUrl)
    log.warn(
      'BEACON_SECRET is not set: each instance signs beacons with its own generated secret, so a beacon URL handed out by one instance is refused by the others',
    );
  const beacons = life.add(
    'beacon forwarder',
    new BeaconForwarder({
      claim: (key) => stores.state.setIfAbsent(key, '1', BEACON_TTL_MS),
      policy,
      dedupTtlMs: BEACON_TTL_MS,
      metrics,
      log,
    }),
    (b) => b.close(),
  );
  board.onSqueezed = daiBeaconFiring(beacons, streams, metrics);

  // Squeeze breaks: decide ads, start breaks, and the worker that has their segments composed.
  const decider = new AdDecider({
    configuredAds: async (eventId) =>
      (await configuredAds.list({ event_id: eventId, page: 0, page_size: 500 })).results,
    resolve: (url, want) => resolveAds({ url }, fetchText, { log, selectBreaks: liveBreakSelector(want?.abid) }),
    creativeAllowed: (uri) => policy.allows(uri),
    log,
  });
  const breakService = new BreakService({
    repo: breakRepo,
    config: squeezeConfig,
    decider,
    streams,
    board,
    fetchText,
    adServerUrl: config.adServerUrl,
    log,
    reach: (id) => readReach(stores.state, id),
  });
  const owner = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const transcoder = new TranscoderClient(config.transcoderUrl, outbound);
  const breakWorker = new BreakWorker(
    { repo: breakRepo, board, transcoder, fetchText, log, metrics },
    { owner, leaseMs: config.breakLeaseMs, tickMs: config.breakTickMs },
  );
  // Cue-triggered breaks: one instance per scte35 event follows its source (same lease settings as the worker).
  const cueMonitor = new CueMonitor(
    {
      repo: new CueMonitorRepo(stores.sql),
      breaks: breakService,
      breakRepo,
      config: squeezeConfig,
      streams,
      fetchText,
      log,
      metrics,
    },
    { owner, leaseMs: config.breakLeaseMs, tickMs: config.breakTickMs },
  );
  // ID3 inspection: manifests and segments through the outbound policy, jobs leased through Postgres.
  const inspections = new InspectionRepo(stores.sql, config.id3ResultTtlSec);
  const media = new OutboundClient(policy, {
    timeoutMs: DEFAULT_LIMITS.segmentTimeoutMs,
    maxResponseSize: SEGMENT_MAX_BYTES,
  });
  const daiOrigin = config.daiHost ? new URL(config.daiHost).origin : undefined;
  const inspectionWorker = new InspectionWorker(
    {
      repo: inspections,
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
    { owner, ...INSPECTION },
  );
  // Server-side stitching: manifests capped at 8 MiB each (a 3-hour VOD playlist is a few hundred KiB).
  const beaconSecret = config.beaconSecret || persistentSecret(config.dataDir, 'beacon-secret');
  const manifests = new OutboundClient(policy, { timeoutMs: 10_000, maxResponseSize: 8 * 1024 * 1024 });
  life.add('stitch manifest client', manifests, (m) => m.close());
  const stitchStore = new StitchStore(stores.sql);
  // Ad conditioning: MP4 creatives transcoded to the content's ladder, jobs leased through Postgres.
  const creativeFiles = new CreativeFiles(config.dataDir);
  const creatives = new OutboundClient(policy, { timeoutMs: 60_000, maxResponseSize: CONDITIONING.maxBytes });
  life.add('ad creative client', creatives, (c) => c.close());
  const creativeRepo = new CreativeRepo(stores.sql, config.adConditioningBackoffSec, CONDITIONING.backoffMaxSec);
  const conditioning = new ConditioningService(
    {
      repo: creativeRepo,
      files: creativeFiles,
      fetchBytes: (url, signal) => creatives.bytes(url, signal),
      ffmpeg: config.ffmpegPath,
      queued: () => void conditioningWorker.tick(),
      publicBaseUrl: () => baseUrl,
      stitchPath: config.stitchPath,
      log,
      metrics,
    },
    {
      maxBytes: CONDITIONING.maxBytes,
      maxDurationSec: config.adConditioningMaxSec,
      jobTimeoutMs: CONDITIONING.jobTimeoutMs,
    },
  );
  const conditioningWorker = new ConditioningWorker(
    { repo: creativeRepo, condition: (job, signal) => conditioning.condition(job, signal), log, metrics },
    {
      owner,
      leaseMs: CONDITIONING.leaseMs,
      tickMs: CONDITIONING.tickMs,
      maxJobs: config.adConditioningJobs,
      jobTimeoutMs: CONDITIONING.jobTimeoutMs,
      maxAttempts: CONDITIONING.maxAttempts,
    },
  );
  const stitch = new StitchService({
    findAsset: (brand, assetId) => catalog.findAsset(brand, assetId),
    adTag: async (brand) => {
      const view = await squeezeConfig.getBrand(brand).catch(() => undefined);
      return (view?.['ad_tag'] as AdTagSettings | undefined) ?? { params: {} };
    },
    resolve: (url) => resolveAds({ url }, fetchText, { log, streaming: true }),
    fetchText: (url, signal) => manifests.text(url, signal),
    store: stitchStore,
    adServerUrl: config.adServerUrl,
    publicBaseUrl: () => baseUrl,
    stitchPath: config.stitchPath,
    ttlSec: config.stitchTtlSec,
    beaconSecret,
    log,
    conditioned: (ad, profile, waitUntilMs) => conditioning.lookup(ad, profile, waitUntilMs),
    conditionedByKey: (key, base) => conditioning.byKey(key, base),
    waitForAds: async (brand) => {
      const asked = (await squeezeConfig.getBrand(brand).catch(() => undefined))?.['stitch_wait_for_ads_ms'];
      return stitchWaitMs(asked, config.stitchMaxWaitMs);
    },
    slate: async (brand) => {
      const slate = (await squeezeConfig.getBrand(brand).catch(() => undefined))?.['stitch_slate'] as
        { uri: string; fill?: boolean } | undefined;
      return slate ? { uri: slate.uri, fill: slate.fill === true } : undefined;
    },
  });
  const puller = new FeedPuller(stores.sql, catalog, log, {
    policy,
    leaseMs: config.feedLeaseMs,
    agent: policy.agent({ timeoutMs: 30_000, maxResponseSize: 200 * 1024 * 1024 }),
  });

  // Per-client token buckets; counted across instances through Redis when there is one.
  const limiter = life.add(
    'rate limiter',
    new RateLimiter({
      rules: config.rateLimits,
      shared: stores.state.kind === 'redis' ? (increments) => stores.state.incrMany(increments) : undefined,
      keyPrefix: keys.prefix,
    }),
    (l) => l.close(),
  );

  // The management API.
  const router = new Router({
    log,
    metrics,
    bodyLimit: config.bodyLimitBytes,
    authenticate: createAuthenticator(config),
    inFlight: http.inFlight,
    limiter,
  });
  for (const routes of [
    brandRoutes(brandRepo, brands),
    squeezeConfigRoutes(squeezeConfig, eventConfigs),
    configuredAdRoutes(configuredAds),
    breakRoutes(breakService),
    scte35Routes(),
    streamRoutes(streams),
    catalogRoutes(catalog, () => brandKeys.changed()),
    feedConfigRoutes(feedConfigs, () => void puller.tick()),
    inspectionRoutes(
      new InspectionService(inspections, streams, {
        daiHost: config.daiHost,
        contentOrigin: config.contentOrigin,
        eventSource: (eventId, assetKey) => squeezeConfig.sourceOf(eventId, assetKey),
      }),
    ),
    stitchRoutes(config.stitchPath, stitch, brands),
    conditioningRoutes(conditioning),
  ]) {
    for (const route of routes) router.add(route);
  }
  let openapi = '';
  router.add({
    method: 'GET',
    pattern: '/api/v1/openapi.json',
    public: true,
    summary: 'This document (OpenAPI 3.1)',
    schema: { response: { type: 'object', required: ['openapi', 'paths'] } },
    handler: async () => ({ body: openapi, headers: { 'Content-Type': 'application/json' } }),
  });
  // Every endpoint: the routes above, and the player-facing ones their modules describe.
  const playerFacing = {
    ...coreOperations,
    ...daiOperations,
    ...playerOperations,
    ...squeezebackOperations,
    ...stitchOperations(config.stitchPath),
    ...uiOperations,
  };
  openapi = JSON.stringify(openApiDocument(router.list(), { version, serverUrl: config.publicBaseUrl }, playerFacing));
  router.mount(http.app, '/api/v1');
  router.mount(http.app, '/mrssfeed');
  // Player-facing answers carry CORS headers (web players on other origins); /api/v1 and /mrssfeed do not (docs/decisions.md "CORS").
  const cors = new Cors(parseOrigins(config.corsAllowedOrigins));
  router.mount(http.app, `/${config.stitchPath}/hls`, { policy: cors, methods: 'POST, OPTIONS' });
  router.mount(http.app, `/${config.stitchPath}/dash`, { policy: cors, methods: 'POST, OPTIONS' });

  // The hot path and the player endpoints.
  const upstream = life.add(
    'DAI upstream',
    new Upstream(config.daiHost, {
      deadlineMs: config.upstreamDeadlineMs,
      connect: policy.connector(Math.min(2000, config.upstreamDeadlineMs), Upstream.socketOptions),
    }),
    (u) => u.close(),
  );
  const manifestCache = life.add('manifest cache', new ManifestCache(), (c) => c.close());
  configureCompression(config.compressMinBytes);
  const events = parts.events ?? eventConfigs;
  // Whose X-Device-Ip and X-Forwarded-For name the client (issue 24): the ad manager's and the CDN's ranges.
  const trusted = trustedProxies(config.trustedProxies);
  // New DAI stream ids count against the client as trusted hops name it (lib/http/client-ip.ts).
  const clientKey = (req: HttpRequest, res: HttpResponse) =>
    clientIp(
      req.getHeader('x-device-ip'),
      req.getHeader('x-forwarded-for'),
      addressText(res.getRemoteAddressAsText()),
      trusted,
    );
  new ManifestProxy(
    {
      daiHost: config.daiHost,
      publicBaseUrl: config.publicBaseUrl,
      contentOrigin: config.contentOrigin,
      accessLogSampleRate: config.accessLogSampleRate,
      trustedProxies: trusted,
    },
    {
      upstream,
      cache: manifestCache,
      events,
      streams,
      breaks: board,
      metrics,
      log,
      inFlight: http.inFlight,
      cors,
      limiter,
      clientKey,
    },
  ).mount(http.app);
  new PlayerEndpoints({
    board,
    streams,
    forwarder: beacons,
    beaconSecret,
    publicBaseUrl: () => baseUrl,
    metrics,
    log,
    limiter,
    cors,
  }).mount(http.app);
  new AdProxy(events, streams, metrics, log, brands, limiter, trusted).mount(http.app);
  const origins = life.add('origin upstreams', new OriginPools(policy, config.upstreamDeadlineMs), (o) => o.close());
  new PlayerFlow(
    { contentOrigin: config.contentOrigin, trustedProxies: trusted, idleSec: config.streamIdleSec },
    {
      events,
      streams,
      ids: new StreamIds(stores.state, config.streamIdleSec * 1000),
      brands,
      brandKeys,
      breaks: board,
      cache: manifestCache,
      origins,
      metrics,
      log,
      limiter,
      cors,
    },
  ).mount(http.app);
  new StitchEndpoints(config.stitchPath, stitchStore, stitch, log, cors, config.stitchTtlSec).mount(http.app);
  mountCreativeFiles(http.app, config.stitchPath, creativeFiles, cors);
  // The operator and player pages: files read once here, answered from memory under /ui/.
  new UiPages({ dir: path.join(projectRoot, 'ui'), log }).mount(http.app);
  http.mountFallback();

  // Workers, then the listener: registered last, it is the first to stop (drained) on shutdown.
  life.add('feed puller', puller, (p) => p.stop()).start();
  life.add('break worker', breakWorker, (w) => w.stop()).start();
  life.add('cue monitor', cueMonitor, (m) => m.stop()).start();
  life.add('id3 inspection worker', inspectionWorker, (w) => w.stop()).start();
  life.add('ad conditioning worker', conditioningWorker, (w) => w.stop()).start();
  const { port, url } = await http.listen();
  life.add('HTTP listener', http, (h) => h.drain(config.shutdownDrainMs, config.shutdownGraceMs));
  // Listening on port 0 (tests): the derived base URL names the port actually bound.
  if (new URL(baseUrl).port === '0') baseUrl = url;
  log.info(
    { host: config.host, port, database: config.databaseUrl ? 'external' : 'embedded', state: stores.state.kind },
    'listening',
  );

  return {
    config,
    log,
    stores,
    metrics,
    port,
    url,
    brands,
    streams,
    manifestCache,
    puller,
    breaks: board,
    breakWorker,
    cueMonitor,
    beacons,
    inspections: inspectionWorker,
    conditioning: conditioningWorker,
    close: async () => {
      await life.stopAll();
      log.info('stopped');
    },
  };
}
