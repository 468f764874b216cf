/**
 * `GET /dai/adproxy` (spec "DAI proxy: preroll ad tag"): the DAI provider's preroll ad tag. Every
 * query parameter is captured as targeting (an `imafw_` prefix is stripped; a native name wins over
 * its prefixed twin), the event is resolved by asset_key or caid from memory, the stream is created
 * or updated fire-and-forget, and the answer is always an empty VAST 4.0 document: the DAI provider
 * must never see an error from us. Oversized query strings are truncated, not rejected.
 * The per-viewer rate limit (`adproxy`) therefore never changes the answer: a caller over it still
 * gets the empty VAST, and only the registration is skipped (counted, logged once a second).
 */
import { addressText, type HttpRequest, type HttpResponse, type TemplatedApp } from '../http/uws.js';
import type { Registry } from '../metrics/index.js';
import { guardMethods } from '../http/methods.js';
import { incomingRequestId, requestIdForHeader } from '../http/request-id.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { clientIp, trustedProxies, type TrustedHops } from '../http/client-ip.js';
import type { Logger } from '../log/index.js';
import type { EventSettingsSource } from '../delivery/event-settings.js';
import type { StreamRegistry, StreamTouch } from '../streams/registry.js';
import type { BrandCache } from '../brand/cache.js';
import { targetingFrom } from '../ads/targeting.js';

export const EMPTY_VAST = '<?xml version="1.0" encoding="UTF-8"?>\n<VAST version="4.0"/>\n';
const EMPTY_VAST_BYTES = Buffer.from(EMPTY_VAST);
/** Distinct unknown asset keys remembered for log throttling; beyond it the oldest is forgotten. */
const MAX_LOGGED_KEYS = 1000;
const LOG_EVERY_MS = 60_000;

/** The viewer's address: X-Device-Ip (spec) from a trusted caller (the ad manager), else the socket's. Read synchronously (uWS). */
function clientIpOf(req: HttpRequest, res: HttpResponse, trusted: TrustedHops): string {
  return clientIp(
    req.getHeader('x-device-ip'),
    req.getHeader('x-forwarded-for'),
    addressText(res.getRemoteAddressAsText()),
    trusted,
  );
}

export class AdProxy {
  private readonly requests;
  private readonly unknownEvent;
  private readonly noStream;
  private readonly overLimit;
  /** Requests over the limit since the last log line, and when it was written. */
  private overLimitPending = 0;
  private overLimitLoggedAt = 0;
  /** Unknown asset keys → when each was last logged: one line a key a minute, not one a request. */
  private readonly unknownLogged = new Map<string, number>();

  constructor(
    private readonly events: EventSettingsSource,
    private readonly streams: StreamRegistry,
    metrics: Registry,
    private readonly log: Logger,
    /** Brand recognition (spec "Brand-Recognition") over the ad tag's query and forwarded host. */
    private readonly brands?: BrandCache,
    private readonly limiter?: RateLimiter,
    /** TRUSTED_PROXIES: the only callers whose X-Device-Ip names the viewer (the ad manager's ranges). */
    private readonly trusted: TrustedHops = trustedProxies(''),
  ) {
    const family = metrics.counter('dai_adproxy_requests_total', 'Preroll ad-tag requests by outcome');
    this.requests = family.with({ outcome: 'registered' });
    this.unknownEvent = family.with({ outcome: 'unknown_event' });
    this.noStream = family.with({ outcome: 'no_stream_id' });
    this.overLimit = family.with({ outcome: 'rate_limited' });
  }

  mount(app: TemplatedApp): void {
    app.get('/dai/adproxy', (res, req) => this.handle(res, req));
    guardMethods(app, '/dai/adproxy', 'GET');
  }

  private handle(res: HttpResponse, req: HttpRequest): void {
    // Keyed by the viewer (X-Device-Ip) when the caller is the trusted DAI provider's server, shared
    // by every viewer; anyone else is keyed by its own address, whatever it claims (issue 24).
    const viewerIp = clientIpOf(req, res, this.trusted);
    const verdict = this.limiter?.take('adproxy', viewerIp);
    if (verdict && !verdict.ok) this.refused(viewerIp);
    else this.registerSafely(req, viewerIp);
    res
      .writeStatus('200 OK')
      .writeHeader('Content-Type', 'application/xml')
      .writeHeader('Cache-Control', 'no-store')
      .writeHeader('X-Request-Id', requestIdForHeader(incomingRequestId(req)))
      .end(EMPTY_VAST_BYTES);
  }

  /**
   * Over the limit: the viewer is not registered (its stream gets no targeting from this call and
   * no break until a manifest or a later ad tag registers it), but the ad manager still gets the
   * empty VAST: a problem document here would cost the viewer its preroll slot, not us a request.
   */
  private refused(clientIp: string): void {
    this.overLimit.inc();
    this.overLimitPending++;
    const now = Date.now();
    if (now - this.overLimitLoggedAt < 1000) return;
    this.log.warn(
      { requests: this.overLimitPending, client_ip: clientIp },
      'adproxy: over the per-viewer rate limit; not registered (answered the empty VAST)',
    );
    this.overLimitPending = 0;
    this.overLimitLoggedAt = now;
  }

  /** A stream whose asset key names no event can never get a break: worth a warning, once a minute a key. */
  private unknownKey(streamId: string, key: string | undefined): void {
    this.unknownEvent.inc();
    const name = key ?? '';
    const now = Date.now();
    const last = this.unknownLogged.get(name);
    if (last !== undefined && now - last < LOG_EVERY_MS) return;
    if (last === undefined && this.unknownLogged.size >= MAX_LOGGED_KEYS)
      this.unknownLogged.delete(this.unknownLogged.keys().next().value as string);
    this.unknownLogged.delete(name);
    this.unknownLogged.set(name, now);
    this.log.warn(
      { stream_id: streamId, key: name.slice(0, 256) },
      key === undefined
        ? 'adproxy: no asset_key or caid; stream recorded without an event (it can never get a break)'
        : 'adproxy: no event config for this asset key or caid; stream recorded without an event (it can never get a break)',
    );
  }

  private registerSafely(req: HttpRequest, viewerIp: string): void {
    try {
      this.register(req, viewerIp);
    } catch (err) {
      this.log.error({ err }, 'adproxy registration failed');
    }
  }

  private register(req: HttpRequest, clientIp: string): void {
    const targeting = targetingFrom(req.getQuery() ?? '');
    const streamId = targeting.get('stream_id');
    if (!streamId || streamId.length > 256) {
      this.noStream.inc();
      return;
    }
    const assetKey = targeting.get('asset_key');
    const key = assetKey ?? targeting.get('caid');
    const settings = this.events.forAssetKey(key);
    const touch: StreamTouch = {
      streamId,
      flow: 'dai',
      targeting,
      vprn: targeting.get('vprn') || undefined,
      pvrn: targeting.get('pvrn') || undefined,
      clientIp,
    };
    if (assetKey) touch.assetKey = assetKey;
    // No rules, no brand: the common case costs no header copies.
    const matcher = this.brands?.current;
    const brand =
      matcher?.size === 0
        ? undefined
        : matcher?.resolve({
            query: Object.fromEntries(targeting),
            headers: {
              'x-forwarded-host': req.getHeader('x-forwarded-host'),
              'x-forwarded': req.getHeader('x-forwarded'),
            },
          })?.brand_name;
    if (brand !== undefined) touch.brand = brand;
    if (settings.eventId !== undefined) touch.eventId = settings.eventId;
    else this.unknownKey(streamId, key);
    this.requests.inc();
    this.streams.touch(touch);
  }
}
