/**
 * The composition root: builds every part of the service once, wires them, mounts their routes on
 * the HTTP face, and registers each part's stop with the lifecycle, so that shutdown and a failed
 * start-up stop them in reverse order (the embedded database last). Each domain builds its own parts
 * (its `parts.ts`: repositories, caches, workers, routes, endpoints); what one domain takes from
 * another is passed here, by name.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config/index.js';
import type { Logger } from './log/index.js';
import { Lifecycle } from './lifecycle.js';
import { projectRoot } from './paths.js';
import { Registry } from './metrics/index.js';
import { HttpServer } from './http/server.js';
import { Router } from './http/router.js';
import { Cors, parseOrigins } from './http/cors.js';
import { RateLimiter } from './http/rate-limit.js';
import { createAuthenticator } from './http/auth.js';
import { configureCompression } from './http/representation.js';
import { trustedProxies } from './http/client-ip.js';
import type { Edge } from './http/edge.js';
import { coreOperations, openApiDocument } from './http/openapi.js';
import { daiOperations } from './dai/openapi.js';
import { playerOperations } from './squeeze/breaks/openapi.js';
import { squeezebackOperations } from './squeezeback/openapi.js';
import { stitchOperations } from './stitch/openapi.js';
import { keys, openStores, type Stores } from './store/index.js';
import { OutboundClient, OutboundPolicy } from './outbound/index.js';
import type { BrandCache } from './brand/cache.js';
import type { StreamRegistry } from './streams/registry.js';
import type { ManifestCache } from './delivery/manifest-cache.js';
import type { EventSettingsSource } from './delivery/event-settings.js';
import type { FeedPuller } from './catalog/puller.js';
import type { BreakBoard } from './squeeze/breaks/board.js';
import type { BreakWorker } from './squeeze/breaks/worker.js';
import type { CueMonitor } from './squeeze/monitor/monitor.js';
import type { BeaconForwarder } from './beacons/forwarder.js';
import type { InspectionWorker } from './inspection/worker.js';
import type { ConditioningWorker } from './conditioning/worker.js';
import { brandParts } from './brand/parts.js';
import { catalogParts } from './catalog/parts.js';
import { streamParts } from './streams/parts.js';
import { squeezeConfigParts, squeezeParts } from './squeeze/parts.js';
import { inspectionParts } from './inspection/parts.js';
import { conditioningParts } from './conditioning/parts.js';
import { stitchParts } from './stitch/parts.js';
import { daiParts } from './dai/parts.js';
import { squeezebackParts } from './squeezeback/parts.js';
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
  const publicBaseUrl = () => baseUrl;
  const stores = life.add('stores', await openStores(config, log), (s) => s.close());

  // Every outbound fetch goes through one policy: configured collaborators by name, the rest public only.
  const policy = life.add(
    'outbound policy',
    new OutboundPolicy({
      allowPrivate: config.allowPrivateOutbound,
      trusted: [config.daiHost, config.contentOrigin, config.adServerUrl, config.transcoderUrl, config.s3Endpoint],
      log,
      metrics,
    }),
    (p) => p.close(),
  );
  const outbound = new OutboundClient(policy, { timeoutMs: 30_000 });
  const fetchText = (url: string, signal: AbortSignal) => outbound.text(url, signal);
  const owner = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const core = { config, log, metrics, life, stores, policy, outbound, fetchText, owner };

  // The domains, each building its parts: caches started (and their stops registered) here, workers at the end.
  const brand = await brandParts(core);
  const catalog = catalogParts(core);
  const squeezeback = await squeezebackParts(core, () => catalog.repo.jwtKeys());
  const squeezeConfig = await squeezeConfigParts(core);
  const streams = streamParts(core);
  const squeeze = await squeezeParts(core, { settings: squeezeConfig.settings, streams: streams.registry });
  const inspection = inspectionParts(core, {
    streams: streams.registry,
    eventSource: (eventId, assetKey) => squeezeConfig.settings.sourceOf(eventId, assetKey),
  });
  const conditioning = conditioningParts(core, { owner, publicBaseUrl });
  const stitch = stitchParts(core, {
    findAsset: (brandName, assetId) => catalog.repo.findAsset(brandName, assetId),
    brandSettings: (brandName) => squeezeConfig.settings.getBrand(brandName).catch(() => undefined),
    brands: brand.cache,
    beaconSecret: squeeze.beaconSecret,
    publicBaseUrl,
    ...conditioning.forStitch,
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
  for (const route of [
    ...brand.routes,
    ...squeezeConfig.routes,
    ...squeeze.routes,
    ...streams.routes,
    ...catalog.routes(() => squeezeback.brandKeys.changed()),
    ...inspection.routes,
    ...stitch.routes,
    ...conditioning.routes,
  ])
    router.add(route);
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
  const dai = daiParts(core);
  configureCompression(config.compressMinBytes);
  // Whose X-Device-Ip and X-Forwarded-For name the client (issue 24): the ad manager's and the CDN's ranges.
  const edge: Edge = {
    limiter,
    cors,
    trusted: trustedProxies(config.trustedProxies),
    inFlight: http.inFlight,
    publicBaseUrl,
  };
  const flows = {
    events: parts.events ?? squeezeConfig.eventConfigs,
    streams: streams.registry,
    breaks: squeeze.board,
    brands: brand.cache,
    cache: dai.cache,
  };
  dai.mountManifests(http.app, edge, flows);
  squeeze.mount(http.app, edge);
  dai.mountAdTag(http.app, edge, flows);
  squeezeback.mount(http.app, edge, flows);
  stitch.mount(http.app, cors);
  conditioning.mount(http.app, cors);
  // The operator and player pages: files read once here, answered from memory under /ui/.
  new UiPages({ dir: path.join(projectRoot, 'ui'), log }).mount(http.app);
  http.mountFallback();

  // Workers, then the listener: registered last, it is the first to stop (drained) on shutdown.
  for (const [name, worker] of [...catalog.workers, ...squeeze.workers, ...inspection.workers, ...conditioning.workers])
    life.add(name, worker, (w) => w.stop()).start();
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
    brands: brand.cache,
    streams: streams.registry,
    manifestCache: dai.cache,
    puller: catalog.puller,
    breaks: squeeze.board,
    breakWorker: squeeze.breakWorker,
    cueMonitor: squeeze.cueMonitor,
    beacons: squeeze.beacons,
    inspections: inspection.worker,
    conditioning: conditioning.worker,
    close: async () => {
      await life.stopAll();
      log.info('stopped');
    },
  };
}
