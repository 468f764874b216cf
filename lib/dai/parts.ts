/**
 * The DAI flow's parts (lib/app.ts): the DAI host's upstream, the manifest micro-cache (shared with
 * the squeezeback flow), the manifest proxy /dai/manifest/* and the preroll ad tag /dai/adproxy.
 */
import type { BrandCache } from '../brand/cache.js';
import type { Config } from '../config/index.js';
import type { BreakSource } from '../delivery/break-source.js';
import type { EventSettingsSource } from '../delivery/event-settings.js';
import { ManifestCache } from '../delivery/manifest-cache.js';
import { Upstream } from '../delivery/upstream.js';
import { clientIp } from '../http/client-ip.js';
import type { Edge } from '../http/edge.js';
import { addressText, type HttpRequest, type HttpResponse, type TemplatedApp } from '../http/uws.js';
import type { Stops } from '../lifecycle.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import type { OutboundPolicy } from '../outbound/index.js';
import type { StreamRegistry } from '../streams/registry.js';
import { AdProxy } from './adproxy.js';
import { ManifestProxy } from './manifest-proxy.js';

export interface DaiUses {
  events: EventSettingsSource;
  streams: StreamRegistry;
  breaks: BreakSource;
  brands: BrandCache;
}

export function daiParts(core: {
  config: Config;
  log: Logger;
  metrics: Registry;
  life: Stops;
  policy: OutboundPolicy;
}) {
  const { config, log, metrics, life } = core;
  const upstream = life.add(
    'DAI upstream',
    new Upstream(config.daiHost, {
      deadlineMs: config.upstreamDeadlineMs,
      connect: core.policy.connector(Math.min(2000, config.upstreamDeadlineMs), Upstream.socketOptions),
    }),
    (u) => u.close(),
  );
  const cache = life.add('manifest cache', new ManifestCache(), (c) => c.close());
  return {
    cache,
    mountManifests(app: TemplatedApp, edge: Edge, uses: DaiUses): void {
      // New DAI stream ids count against the client as trusted hops name it (lib/http/client-ip.ts).
      const clientKey = (req: HttpRequest, res: HttpResponse) =>
        clientIp(
          req.getHeader('x-device-ip'),
          req.getHeader('x-forwarded-for'),
          addressText(res.getRemoteAddressAsText()),
          edge.trusted,
        );
      new ManifestProxy(
        {
          daiHost: config.daiHost,
          publicBaseUrl: config.publicBaseUrl,
          contentOrigin: config.contentOrigin,
          accessLogSampleRate: config.accessLogSampleRate,
          trustedProxies: edge.trusted,
        },
        {
          upstream,
          cache,
          events: uses.events,
          streams: uses.streams,
          breaks: uses.breaks,
          metrics,
          log,
          inFlight: edge.inFlight,
          cors: edge.cors,
          limiter: edge.limiter,
          clientKey,
        },
      ).mount(app);
    },
    mountAdTag(app: TemplatedApp, edge: Edge, uses: DaiUses): void {
      new AdProxy(uses.events, uses.streams, metrics, log, uses.brands, edge.limiter, edge.trusted).mount(app);
    },
  };
}
