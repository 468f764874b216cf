/**
 * The squeeze domain's parts (lib/app.ts): brand and event configuration, configured ads, the ad
 * breaks (decisions, service, board, worker, transcoder client), the SCTE-35 cue monitor, the
 * beacons players send, and the player endpoints /vast and /beacon.
 */
import type { Config } from '../config/index.js';
import type { Edge } from '../http/edge.js';
import type { Route } from '../http/router.js';
import type { TemplatedApp } from '../http/uws.js';
import type { NamedWorker, Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import type { OutboundClient, OutboundPolicy } from '../outbound/index.js';
import type { Stores } from '../store/index.js';
import type { StreamRegistry } from '../streams/registry.js';
import { liveBreakSelector, resolveAds } from '../ads/resolve.js';
import { BeaconForwarder } from '../beacons/forwarder.js';
import { beaconSecret } from '../beacons/signing.js';
import { SqueezeConfigRepo } from './config/repo.js';
import { EventConfigCache } from './config/event-cache.js';
import { squeezeConfigRoutes } from './config/routes.js';
import { ConfiguredAdRepo } from './ads/repo.js';
import { configuredAdRoutes } from './ads/routes.js';
import { BreakRepo } from './breaks/repo.js';
import { BreakBoard } from './breaks/board.js';
import { BreakReach, readReach } from './breaks/reach.js';
import { AdDecider } from './breaks/decide.js';
import { BreakService } from './breaks/service.js';
import { breakRoutes } from './breaks/routes.js';
import { BreakWorker } from './breaks/worker.js';
import { TranscoderClient } from './breaks/transcoder.js';
import { PlayerEndpoints } from './breaks/player-endpoints.js';
import { daiBeaconFiring } from './breaks/dai-beacons.js';
import { CueMonitorRepo } from './monitor/repo.js';
import { CueMonitor } from './monitor/monitor.js';
import { scte35Routes } from './monitor/routes.js';

const BEACON_TTL_MS = 24 * 3600 * 1000;

export interface SqueezeCore {
  config: Config;
  log: Logger;
  metrics: Registry;
  life: Stops;
  stores: Stores;
  policy: OutboundPolicy;
  outbound: OutboundClient;
  fetchText: (url: string, signal: AbortSignal) => Promise<string>;
  /** This instance's name on the leases its workers hold. */
  owner: string;
}

/** Brand and event configuration: the repository, and the event settings every flow reads (kept fresh across instances). */
export async function squeezeConfigParts(core: Pick<SqueezeCore, 'log' | 'life' | 'stores'>) {
  const settings = new SqueezeConfigRepo(core.stores.sql);
  const eventConfigs = core.life.add(
    'event config cache',
    new EventConfigCache(() => settings.allEventSettings(), core.stores.state, core.log),
    (e) => e.stop(),
  );
  await eventConfigs.start();
  return { settings, eventConfigs, routes: squeezeConfigRoutes(settings, eventConfigs) };
}

/** Configured ads, the ad breaks, the cue monitor, the beacons and the player endpoints, over the configuration. */
export async function squeezeParts(core: SqueezeCore, uses: { settings: SqueezeConfigRepo; streams: StreamRegistry }) {
  const { config, log, metrics, life, stores, policy, fetchText } = core;
  const { settings, streams } = uses;
  const configuredAds = new ConfiguredAdRepo(stores.sql);
  const breakRepo = new BreakRepo(stores.sql);
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
  const secret = beaconSecret(config, log);
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

  // Breaks: decide ads, start breaks, and the worker that has their segments composed.
  const decider = new AdDecider({
    configuredAds: async (eventId) =>
      (await configuredAds.list({ event_id: eventId, page: 0, page_size: 500 })).results,
    resolve: (url, want) => resolveAds({ url }, fetchText, { log, selectBreaks: liveBreakSelector(want?.abid) }),
    creativeAllowed: (uri) => policy.allows(uri),
    log,
  });
  const breaks = new BreakService({
    repo: breakRepo,
    config: settings,
    decider,
    streams,
    board,
    fetchText,
    adServerUrl: config.adServerUrl,
    log,
    reach: (id) => readReach(stores.state, id),
  });
  const lease = { owner: core.owner, leaseMs: config.breakLeaseMs, tickMs: config.breakTickMs };
  const transcoder = new TranscoderClient(config.transcoderUrl, core.outbound);
  const breakWorker = new BreakWorker({ repo: breakRepo, board, transcoder, fetchText, log, metrics }, lease);
  // Cue-triggered breaks: one instance per scte35 event follows its source (same lease settings as the worker).
  const cueMonitor = new CueMonitor(
    { repo: new CueMonitorRepo(stores.sql), breaks, breakRepo, config: settings, streams, fetchText, log, metrics },
    lease,
  );

  return {
    board,
    beacons,
    beaconSecret: secret,
    breakWorker,
    cueMonitor,
    workers: [
      ['break worker', breakWorker],
      ['cue monitor', cueMonitor],
    ] as NamedWorker[],
    routes: [...configuredAdRoutes(configuredAds), ...breakRoutes(breaks), ...scte35Routes()] as Route[],
    /** The player endpoints /vast and /beacon. */
    mount(app: TemplatedApp, edge: Edge): void {
      const { publicBaseUrl, limiter, cors } = edge;
      new PlayerEndpoints({
        board,
        streams,
        forwarder: beacons,
        beaconSecret: secret,
        publicBaseUrl,
        metrics,
        log,
        limiter,
        cors,
      }).mount(app);
    },
  };
}
