/**
 * The service: one uWS app with the hot-path routes registered directly and the management API
 * behind the thin router; health, readiness and metrics; graceful shutdown.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadUws, type TemplatedApp, type us_listen_socket, type HttpResponse } from './uws.js';
import { Exchange } from './exchange.js';
import { Registry } from './metrics.js';
import { Router, requestId } from './router.js';
import { createAuthenticator } from './auth.js';
import { openApiDocument } from './openapi.js';
import { HttpError, notFound } from './problem.js';
import { projectRoot } from '../paths.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { openStores, type Stores } from '../store/index.js';
import { BrandRepo } from '../brand/repo.js';
import { BrandCache } from '../brand/cache.js';
import { brandRoutes } from '../brand/routes.js';
import { Upstream } from '../dai/upstream.js';
import { ManifestCache } from '../dai/manifest-cache.js';
import { StreamRegistry } from '../dai/streams.js';
import type { EventSettingsSource } from '../dai/event-settings.js';
import { ManifestProxy } from '../dai/manifest-proxy.js';
import { AdProxy } from '../dai/adproxy.js';
import { streamRoutes } from '../dai/stream-routes.js';
import { CatalogRepo } from '../catalog/repo.js';
import { catalogRoutes } from '../catalog/routes.js';
import { FeedConfigRepo, feedConfigRoutes } from '../catalog/feed-config.js';
import { FeedPuller } from '../catalog/puller.js';
import { SqueezeConfigRepo } from '../squeeze/config-repo.js';
import { EventConfigCache } from '../squeeze/event-cache.js';
import { squeezeConfigRoutes } from '../squeeze/routes.js';
import { ConfiguredAdRepo } from '../squeeze/ads-repo.js';
import { configuredAdRoutes } from '../squeeze/ads-routes.js';
import { OutboundClient, OutboundPolicy } from '../outbound/index.js';
import { persistentSecret } from './auth.js';
import { BreakRepo } from '../squeeze/break-repo.js';
import { BreakBoard } from '../squeeze/break-board.js';
import { AdDecider } from '../squeeze/break-decide.js';
import { BreakService } from '../squeeze/break-service.js';
import { breakRoutes } from '../squeeze/break-routes.js';
import { BreakWorker } from '../squeeze/break-worker.js';
import { TranscoderClient } from '../squeeze/transcoder.js';
import { PlayerEndpoints } from '../squeeze/player-endpoints.js';
import { BeaconForwarder } from '../ads/beacon-forwarder.js';
import { resolveAds } from '../ads/resolve.js';

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
  beacons: BeaconForwarder;
  close(): Promise<void>;
}

const version = (JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
const READY_TIMEOUT_MS = 1000;

function sendProblem(res: HttpResponse, err: HttpError, isHead = false): void {
  const ex = new Exchange(res, isHead);
  const id = requestId(undefined);
  ex.send(err.status, { 'Content-Type': 'application/problem+json', ...err.headers }, JSON.stringify(err.toProblem(id)));
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out`)), ms)))]).finally(() => clearTimeout(timer));
}

export interface ServiceParts {
  /** Event settings for the manifest proxy (defaults: unconfigured events). */
  events?: EventSettingsSource;
}

export async function startService(config: Config, log: Logger, parts: ServiceParts = {}): Promise<Service> {
  const uws = loadUws(config.allowUwsFallback);
  const stores = await openStores(config, log);
  const metrics = new Registry();
  metrics.gauge('process_resident_memory_bytes', 'Resident set size', () => process.memoryUsage.rss());
  metrics.gauge('nodejs_heap_used_bytes', 'V8 heap in use', () => process.memoryUsage().heapUsed);
  metrics.gauge('process_uptime_seconds', 'Seconds since start', () => Math.round(process.uptime()));

  const brands = new BrandCache(() => new BrandRepo(stores.sql).all(), stores.state, log);
  const squeezeConfig = new SqueezeConfigRepo(stores.sql);
  const eventConfigs = new EventConfigCache(() => squeezeConfig.allEventSettings(), stores.state, log);
  const upstream = new Upstream(config.daiHost, { deadlineMs: config.upstreamDeadlineMs });
  const manifestCache = new ManifestCache();
  const streams = new StreamRegistry(stores.state, log, config.streamIdleSec * 1000);
  const catalog = new CatalogRepo(stores.sql);
  // Every outbound fetch goes through one policy: configured collaborators by name, the rest public only.
  const policy = new OutboundPolicy({ allowPrivate: config.allowPrivateOutbound, trusted: [config.daiHost, config.contentOrigin, config.adServerUrl, config.transcoderUrl], log, metrics });
  const feedAgent = policy.agent({ timeoutMs: 30_000, maxResponseSize: 200 * 1024 * 1024 });
  const puller = new FeedPuller(stores.sql, catalog, log, { policy, agent: feedAgent });
  const outbound = new OutboundClient(policy, { timeoutMs: 30_000 });
  const fetchText = (url: string, signal: AbortSignal) => outbound.text(url, signal);
  const breakRepo = new BreakRepo(stores.sql);
  const board = new BreakBoard(breakRepo, stores.state, log, metrics, config.breakRetentionSec * 1000);
  const decider = new AdDecider({
    configuredAds: async (eventId) => (await new ConfiguredAdRepo(stores.sql).list({ event_id: eventId, page: 0, page_size: 500 })).results,
    resolve: (url) => resolveAds({ url }, fetchText, { log }),
    creativeAllowed: (uri) => policy.allows(uri),
    log,
  });
  const breakService = new BreakService({ repo: breakRepo, config: squeezeConfig, decider, streams, board, fetchText, adServerUrl: config.adServerUrl, log });
  const transcoder = new TranscoderClient(config.transcoderUrl, outbound);
  const owner = `${process.pid}-${randomUUID().slice(0, 8)}`;
  const breakWorker = new BreakWorker({ repo: breakRepo, board, transcoder, fetchText, log, metrics }, { owner, leaseMs: config.breakLeaseMs, tickMs: config.breakTickMs });
  const beaconTtlMs = 24 * 3600 * 1000;
  if (!config.beaconSecret && config.redisUrl) log.warn('BEACON_SECRET is not set: each instance signs beacons with its own generated secret, so a beacon URL handed out by one instance is refused by the others');
  const beacons = new BeaconForwarder({
    claim: (key) => stores.state.setIfAbsent(key, '1', beaconTtlMs),
    policy,
    dedupTtlMs: beaconTtlMs,
    metrics,
    log,
  });
  let app: TemplatedApp | undefined;
  let listenSocket: us_listen_socket | undefined;
  let baseUrl = config.publicBaseUrl;
  try {
    await brands.start();
    await eventConfigs.start();
    await board.start();
    const inFlight = { count: 0 };
    const router = new Router({ log, metrics, bodyLimit: config.bodyLimitBytes, authenticate: createAuthenticator(config), inFlight });
    for (const route of brandRoutes(new BrandRepo(stores.sql), brands)) router.add(route);
    for (const route of squeezeConfigRoutes(squeezeConfig, eventConfigs)) router.add(route);
    for (const route of configuredAdRoutes(new ConfiguredAdRepo(stores.sql))) router.add(route);
    for (const route of breakRoutes(breakService)) router.add(route);
    for (const route of streamRoutes(streams)) router.add(route);
    for (const route of catalogRoutes(catalog)) router.add(route);
    for (const route of feedConfigRoutes(new FeedConfigRepo(stores.sql), () => void puller.tick())) router.add(route);
    const openapi = JSON.stringify(openApiDocument(router.list(), { version, serverUrl: config.publicBaseUrl }));
    router.add({ method: 'GET', pattern: '/api/v1/openapi.json', public: true, summary: 'This document', handler: async () => ({ body: openapi, headers: { 'Content-Type': 'application/json' } }) });

    let shuttingDown = false;
    app = uws.App();
    app.get('/healthz', (res) => void new Exchange(res, false).send(200, { 'Content-Type': 'application/json' }, '{"status":"ok"}'));
    app.get('/metrics', (res) => void new Exchange(res, false).send(200, { 'Content-Type': 'text/plain; version=0.0.4' }, metrics.render()));
    app.get('/readyz', (res) => {
      const ex = new Exchange(res, false);
      const checks = [withTimeout(stores.sql`select 1`, READY_TIMEOUT_MS, 'postgres'), withTimeout(stores.state.ping(), READY_TIMEOUT_MS, 'state store')];
      void Promise.allSettled(checks).then(([pg, st]) => {
        const status = { postgres: pg!.status === 'fulfilled' ? 'ok' : 'down', state_store: st!.status === 'fulfilled' ? 'ok' : 'down', shutting_down: shuttingDown };
        const ok = status.postgres === 'ok' && status.state_store === 'ok' && !shuttingDown;
        ex.send(ok ? 200 : 503, { 'Content-Type': 'application/json' }, JSON.stringify({ status: ok ? 'ready' : 'unavailable', ...status }));
      });
    });
    router.mount(app, '/api/v1');
    router.mount(app, '/mrssfeed');
    new ManifestProxy(
      { daiHost: config.daiHost, publicBaseUrl: config.publicBaseUrl, contentOrigin: config.contentOrigin, accessLogSampleRate: config.accessLogSampleRate },
      { upstream, cache: manifestCache, events: parts.events ?? eventConfigs, streams, breaks: board, metrics, log, inFlight },
    ).mount(app);
    new PlayerEndpoints({ board, streams, forwarder: beacons, beaconSecret: config.beaconSecret || persistentSecret(config.dataDir, 'beacon-secret'), publicBaseUrl: () => baseUrl, metrics, log }).mount(app);
    new AdProxy(parts.events ?? eventConfigs, streams, metrics, log).mount(app);
    app.any('/*', (res, req) => sendProblem(res, notFound(`no route for ${req.getUrl()}`), req.getMethod() === 'head'));

    listenSocket = await new Promise<us_listen_socket>((resolve, reject) =>
      app!.listen(config.host, config.port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.host}:${config.port} (in use or not permitted)`)))),
    );
    const port = uws.us_socket_local_port(listenSocket);
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // Listening on port 0 (tests): the derived base URL names the port actually bound.
    if (new URL(baseUrl).port === '0') baseUrl = url;
    puller.start();
    breakWorker.start();
    log.info({ host: config.host, port, database: config.databaseUrl ? 'external' : 'embedded', state: stores.state.kind }, 'listening');

    const service: Service = {
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
      beacons,
      close: async () => {
        if (shuttingDown) return;
        shuttingDown = true;
        uws.us_listen_socket_close(listenSocket!);
        const deadline = Date.now() + config.shutdownGraceMs;
        while (inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        if (inFlight.count > 0) log.warn({ inFlight: inFlight.count }, 'shutdown grace elapsed with requests in flight');
        await puller.stop();
        await breakWorker.stop();
        await beacons.close();
        await board.stop();
        await outbound.close();
        await policy.close();
        await brands.stop();
        await eventConfigs.stop();
        await streams.close();
        manifestCache.close();
        await upstream.close();
        await stores.close();
        log.info('stopped');
      },
    };
    return service;
  } catch (err) {
    if (listenSocket) uws.us_listen_socket_close(listenSocket);
    await puller.stop().catch(() => undefined);
    await breakWorker.stop().catch(() => undefined);
    await beacons.close().catch(() => undefined);
    await board.stop().catch(() => undefined);
    await outbound.close().catch(() => undefined);
    await policy.close();
    await brands.stop().catch(() => undefined);
    await eventConfigs.stop().catch(() => undefined);
    await streams.close().catch(() => undefined);
    manifestCache.close();
    await upstream.close().catch(() => undefined);
    await stores.close();
    throw err;
  }
}
