/**
 * The squeezeback player flow (spec "Player-facing endpoints", first row; docs/design.md §4, §9):
 *
 * - `GET|HEAD /squeezeback/{asset_id}/master.m3u8?{targeting…}[&token=<JWT>]` registers a new
 *   stream (./stream-ids.ts) with the client IP, the brand the recognition rules resolve, and the
 *   targeting (query minus `token`, overridden by the token's claims), and answers the event's
 *   source master with every variant and rendition under `{stream_id}/…` (./path.ts); a source that
 *   is a media playlist is answered as a master of one variant, itself under `{stream_id}/…`.
 * - `GET|HEAD /squeezeback/{asset_id}/{stream_id}/{path}` answers a source variant: fetched from the
 *   event's origin once per micro-cache period for every stream of the event (collapsed), trimmed
 *   to the live window, segments made absolute on the origin, then the event's break applied for
 *   the stream's ad assignment, exactly as `/dai/manifest` renders it. Segments are never proxied.
 *
 * Hot path rules: answers come from memory (event settings, brand rules and keys, breaks, the
 * micro-cache); the only state-store round trips are the claim of a new stream (and its admission
 * when the event caps its streams) and the first sight of a stream created by another instance.
 */
import { Exchange } from '../http/exchange.js';
import { corsOf, type Cors } from '../http/cors.js';
import { conditionsOf, sendNegotiated, type Conditions } from '../http/representation.js';
import { HttpError, problem, toHttpError } from '../http/problem.js';
import { guardMethods } from '../http/methods.js';
import { requestIdOf } from '../http/request-id.js';
import { addressText, type HttpRequest, type HttpResponse, type TemplatedApp } from '../http/uws.js';
import type { Counter, Registry } from '../metrics/index.js';
import type { Logger } from '../log/index.js';
import { isMediaPlaylist, mapMasterUris, singleVariantMaster, type UriRules } from '../hls/index.js';
import type { EventSettings, EventSettingsSource } from '../delivery/event-settings.js';
import type { BreakSource } from '../delivery/break-source.js';
import type { CacheHit, LoadDone, ManifestCache, Rendered } from '../delivery/manifest-cache.js';
import { BodySlab } from '../delivery/body-slab.js';
import { RenderMemo } from '../delivery/render-memo.js';
import { checkQuery } from '../delivery/query.js';
import { UpstreamError, type UpstreamSink } from '../delivery/upstream.js';
import { HLS_TYPE, MASTER_FRESH_MS, ManifestFetch, bodyFor, problemRendered } from '../delivery/manifest-fetch.js';
import { VodForms } from '../delivery/vod-dates.js';
import { targetingFrom } from '../ads/targeting.js';
import type { StreamRegistry } from '../streams/registry.js';
import type { BrandCache } from '../brand/cache.js';
import type { BrandKeyCache } from './brand-keys.js';
import { clientIp, type TrustedHops } from '../http/client-ip.js';
import { verifyPlayerToken } from './player-token.js';
import { masterDir, originPath, parsePlayerPath, variantPath } from './path.js';
import type { OriginPools } from './origins.js';
import type { StreamIds } from './stream-ids.js';
import { rateLimited, type RateLimiter } from '../http/rate-limit.js';

export interface PlayerFlowOptions {
  /** CONTENT_ORIGIN: root-relative segments go there when the event names no content_origin. */
  contentOrigin: string;
  trustedProxies: TrustedHops;
  idleSec: number;
}

export interface PlayerFlowDeps {
  events: EventSettingsSource;
  streams: StreamRegistry;
  ids: StreamIds;
  brands: BrandCache;
  brandKeys: BrandKeyCache;
  breaks: BreakSource;
  cache: ManifestCache;
  origins: OriginPools;
  metrics: Registry;
  log: Logger;
  /** New streams per client IP (the `stream` rule); variant requests are never limited. */
  limiter?: RateLimiter;
  /** CORS for web players (none: no CORS headers). */
  cors?: Cors;
}

/** Stands for the stream id in a cached master: each stream's copy replaces it. */
const SID = '\u0001sid\u0001';
const RESERVED = ['token'];
const UPSTREAM_HEADERS = Object.freeze({ accept: '*/*', 'user-agent': 'squeezeback-player-flow' });
/** A stream's master names its id: never shared by a CDN. */
const MASTER_HEADERS = Object.freeze({ 'Content-Type': HLS_TYPE, 'Cache-Control': 'private, no-store' });
const MAX_HEADERS = 100;
const MAX_BRAND_LABELS = 200;

/** What the flow derives from an event's source_uri, once per settings object. */
interface Source {
  master: URL;
  origin: string;
  dir: string;
  contentPrefix: string;
  originPrefix: string;
}

export class PlayerFlow {
  private readonly sources = new WeakMap<EventSettings, Source>();
  private readonly bodies = new BodySlab();
  /** An origin playlist fetched again with the same bytes (a stream's own query) is rendered once (lib/delivery/render-memo.ts). */
  private readonly memo = new RenderMemo();
  private readonly streamsByBrand;
  private readonly brandCounters = new Map<string, Counter>();
  private readonly outcomes;
  /** Variant renderings are shared (compressed once); VOD ones are dated as `/dai/manifest` dates them. */
  private readonly forms: VodForms;

  constructor(
    private readonly opts: PlayerFlowOptions,
    private readonly deps: PlayerFlowDeps,
  ) {
    this.forms = new VodForms(deps.events, deps.breaks);
    this.streamsByBrand = deps.metrics.counter(
      'squeezeback_streams_total',
      'Squeezeback-flow streams created, by recognised brand',
    );
    const o = deps.metrics.counter(
      'squeezeback_requests_total',
      'Squeezeback-flow manifest requests by kind and status',
    );
    this.outcomes = (kind: string, status: number) => o.with({ kind, code: String(status) });
    deps.metrics.counterFuncs(
      'squeezeback_render_memo_hits_total',
      'Origin playlists answered with the rendering of identical bytes fetched before (a stream-specific query)',
      [[{}, () => this.memo.hits]],
    );
  }

  mount(app: TemplatedApp): void {
    app.get('/squeezeback/*', (res, req) => this.handle(res, req, false));
    app.head('/squeezeback/*', (res, req) => this.handle(res, req, true));
    this.deps.cors?.mountPreflight(app, '/squeezeback/*', 'GET, HEAD, OPTIONS');
    guardMethods(app, '/squeezeback/*', this.deps.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD', this.deps.cors);
  }

  private handle(res: HttpResponse, req: HttpRequest, isHead: boolean): void {
    const ex = new Exchange(res, isHead, corsOf(this.deps.cors, req), requestIdOf(req));
    const conditions = conditionsOf(req);
    try {
      const p = parsePlayerPath(req.getUrl());
      const settings = this.deps.events.forAssetKey(p.assetId);
      if (settings.eventId === undefined || !settings.sourceUri || settings.assetId !== p.assetId)
        throw problem('not-found', `no squeezeback event for asset ${p.assetId}`);
      const query = req.getQuery() ?? '';
      if (p.kind === 'master') return this.master(ex, req, res, settings, query, conditions);
      checkQuery(query);
      const live = this.deps.ids.check(p.streamId, settings.eventId);
      if (live === true) return this.variant(ex, p.streamId, settings, p.rest, query, conditions);
      if (live === false) throw problem('not-found', 'unknown or expired stream');
      live.then(
        (ok) =>
          ok
            ? this.variant(ex, p.streamId, settings, p.rest, query, conditions)
            : this.fail(ex, 'variant', problem('not-found', 'unknown or expired stream')),
        (err) => this.fail(ex, 'variant', err),
      );
    } catch (err) {
      this.fail(ex, 'request', err);
    }
  }

  private fail(ex: Exchange, kind: string, err: unknown): void {
    // The public answer names no address or URL (issue 24); the log has the reason under the request id.
    if (err instanceof UpstreamError && err.internal !== undefined)
      this.deps.log.warn({ req_id: ex.id, reason: err.internal }, `squeezeback ${kind}: upstream failed`);
    const e =
      err instanceof UpstreamError
        ? new HttpError(err.code === 'timeout' ? 'upstream-timeout' : 'upstream-failed', err.message)
        : toHttpError(err, this.deps.log, ex.id);
    this.outcomes(kind, ex.problem(e, { cdn: true })).inc();
  }

  private source(settings: EventSettings): Source {
    let s = this.sources.get(settings);
    if (!s) {
      const master = new URL(settings.sourceUri!);
      const contentOrigin = settings.contentOrigin || this.opts.contentOrigin || master.origin;
      s = {
        master,
        origin: master.origin,
        dir: masterDir(master),
        contentPrefix: `${contentOrigin}/`,
        originPrefix: `${master.origin}/`,
      };
      this.sources.set(settings, s);
    }
    return s;
  }

  // ---- master --------------------------------------------------------------------------------

  private master(
    ex: Exchange,
    req: HttpRequest,
    res: HttpResponse,
    settings: EventSettings,
    query: string,
    conditions: Conditions,
  ): void {
    // Everything of the request is read now: uWS invalidates it when this callback returns.
    const headers: Record<string, string> = {};
    let n = 0;
    req.forEach((k, v) => {
      if (n++ < MAX_HEADERS) headers[k] = v;
    });
    const ip = clientIp(
      headers['x-device-ip'] ?? '',
      headers['x-forwarded-for'] ?? '',
      addressText(res.getRemoteAddressAsText()),
      this.opts.trustedProxies,
    );
    const verdict = this.deps.limiter?.take('stream', ip);
    if (verdict && !verdict.ok) return this.fail(ex, 'master', rateLimited(verdict.retryAfterSec));
    this.register(settings, query, headers, ip).then(
      (body) => {
        this.outcomes('master', 200).inc();
        // One stream's, never shared: hashed (and compressed above the threshold, level 1) per answer.
        sendNegotiated(ex, { status: 200, headers: MASTER_HEADERS, body: Buffer.from(body) }, conditions);
      },
      (err) => this.fail(ex, 'master', err),
    );
  }

  /** The stream's master: the source master first (so an origin failure creates no stream), then the claim. */
  private async register(
    settings: EventSettings,
    query: string,
    headers: Record<string, string>,
    ip: string,
  ): Promise<string> {
    const eventId = settings.eventId!;
    // Capped in size and count (and truncated, not refused) as /dai/adproxy does.
    const targeting = targetingFrom(query);
    const token = targeting.get('token');
    const brand = this.deps.brands.current.resolve({ headers, query: Object.fromEntries(targeting) })?.brand_name;
    for (const name of RESERVED) targeting.delete(name);
    if (token !== undefined)
      for (const [k, v] of await verifyPlayerToken(
        token,
        brand === undefined ? undefined : this.deps.brandKeys.keyOf(brand),
        brand,
      ))
        targeting.set(k, v);
    const template = await this.masterTemplate(settings);
    const claim = await this.deps.ids.claim(eventId, settings.maxConcurrentStreams ?? 0);
    if ('overCap' in claim) {
      throw problem(
        'rate-limited',
        `event ${eventId} already has its maximum of ${settings.maxConcurrentStreams} concurrent streams`,
        { 'Retry-After': String(Math.min(30, this.opts.idleSec)) },
      );
    }
    const streamId = claim.streamId;
    this.deps.streams.touch({
      streamId,
      flow: 'squeezeback',
      eventId,
      assetKey: settings.assetId!,
      targeting,
      vprn: targeting.get('vprn') || undefined,
      pvrn: targeting.get('pvrn') || undefined,
      clientIp: ip,
      ...(brand !== undefined ? { brand } : {}),
    });
    this.countBrand(brand);
    return template.split(SID).join(streamId);
  }

  private countBrand(brand: string | undefined): void {
    const label = brand ?? '(none)';
    let c = this.brandCounters.get(label);
    if (!c) {
      c = this.streamsByBrand.with({ brand: this.brandCounters.size < MAX_BRAND_LABELS ? label : '(other)' });
      if (this.brandCounters.size < MAX_BRAND_LABELS) this.brandCounters.set(label, c);
    }
    c.inc();
  }

  /** The source master with its variant URIs mapped (the stream id left as a placeholder), collapsed and micro-cached. */
  private masterTemplate(settings: EventSettings): Promise<string> {
    const src = this.source(settings);
    const key = `sbm|${this.deps.events.generation}|${settings.sourceUri}`;
    const hit = this.deps.cache.fresh(key);
    if (hit?.value.text !== undefined) return Promise.resolve(hit.value.text);
    return new Promise((resolve, reject) =>
      this.deps.cache.load(
        key,
        (done) =>
          this.deps.origins
            .get(src.origin)
            .get(
              src.master.pathname,
              UPSTREAM_HEADERS,
              new MasterFetch(src, done),
              undefined,
              src.master.search.slice(1),
            ),
        (err, h) => {
          if (h && h.value.status === 200 && h.value.text !== undefined) resolve(h.value.text);
          else if (h)
            reject(
              new HttpError(
                h.value.status >= 500 ? 'upstream-failed' : 'upstream-client-error',
                `the origin answered ${h.value.status} for the event's master`,
                undefined,
                undefined,
                h.value.status >= 500 ? 502 : h.value.status,
              ),
            );
          else reject(err);
        },
      ),
    );
  }

  // ---- variants ------------------------------------------------------------------------------

  private variant(
    ex: Exchange,
    streamId: string,
    settings: EventSettings,
    rest: string[],
    query: string,
    conditions: Conditions,
  ): void {
    const eventId = settings.eventId!;
    if (!this.deps.streams.refresh(streamId, eventId, settings.assetId))
      this.deps.streams.touch({ streamId, flow: 'squeezeback', eventId, assetKey: settings.assetId! });
    const src = this.source(settings);
    const bare = originPath(rest, src.dir);
    const path = query ? `${bare}?${query}` : bare;
    // The origin's playlist, shared by every stream of the event; then the stream's break rendering.
    const baseKey = `sbv|${this.deps.events.generation}|${src.origin}${path}`;
    const renderKey = this.deps.breaks.renderKey(eventId, streamId);
    const key = renderKey ? `${baseKey}|${this.deps.breaks.generation}|${renderKey}` : baseKey;
    // A VOD body's versions are dated per origin URL and break rendering (the generations are VodForms' own).
    const dateKey = renderKey ? `${src.origin}${path}|${renderKey}` : `${src.origin}${path}`;
    const hit = this.deps.cache.fresh(key);
    if (hit) return this.answer(ex, hit.value, hit.ageSec, conditions, dateKey);
    const fetchBase = (done: (err: unknown, value?: Rendered) => void) => {
      const rules: UriRules = {
        daiHost: src.origin,
        proxyBase: '',
        contentOrigin: src.contentPrefix.slice(0, -1),
        playlistUrl: src.origin + path,
      };
      this.deps.origins.get(src.origin).get(
        bare,
        UPSTREAM_HEADERS,
        new ManifestFetch({ kind: 'media' }, settings, rules, undefined, this.bodies, done, {
          upstreamName: 'the origin',
          keepText: true,
          memo: this.memo,
        }),
        undefined,
        query,
      );
    };
    const derive = (done: LoadDone) => (err: unknown, base?: CacheHit) => {
      if (!base || base.value.status !== 200 || base.value.text === undefined) return done(err, base?.value);
      const isContent = (uri: string) => uri.startsWith(src.contentPrefix) || uri.startsWith(src.originPrefix);
      const text =
        this.deps.breaks.apply(base.value.text, eventId, streamId, isContent, 'squeezeback') ?? base.value.text;
      // Its own forms (ETag, compressed bytes): the base's, when it was answered already, are another body's.
      const own: Rendered = { ...base.value, body: this.bodies.store(text), text: undefined, forms: undefined };
      // A stale base (the origin failing): this copy is answered with the base's age and not cached
      // as fresh, so it is never served as newer than it is, nor beyond the base's stale window.
      if (base.stale) Object.assign(own, { freshMs: 0, staleAgeSec: base.ageSec });
      // A base from the micro-cache: the copy is fresh only for what is left of the base's lifetime.
      else if (base.ageMs) own.freshMs = Math.max(0, own.freshMs - base.ageMs);
      done(undefined, own);
    };
    // Every break assignment renders from the one base: a group whose rendering expired takes the
    // base from the micro-cache while it is fresh, not from the origin again (issue 27).
    const load = !renderKey ? fetchBase : (done: LoadDone) => this.deps.cache.get(baseKey, fetchBase, derive(done));
    this.deps.cache.load(key, load, (err, h) =>
      h
        ? this.answer(ex, h.value, h.ageSec ?? h.value.staleAgeSec, conditions, dateKey)
        : this.fail(ex, 'variant', err ?? new UpstreamError('failed', 'the variant could not be produced')),
    );
  }

  private answer(ex: Exchange, r: Rendered, ageSec: number | undefined, conditions: Conditions, dateKey: string): void {
    this.outcomes('variant', r.status).inc();
    if (ex.aborted) return;
    // A problem gets this answer's request_id in the shared rendering; errors are neither compressed nor validated.
    if (r.status >= 400)
      return void ex.send(r.status, ageSec ? { ...r.headers, Age: String(ageSec) } : r.headers, bodyFor(r, ex.id));
    // Micro-cached renderings shared by the event's streams (or by those with one assignment): compressed
    // once; a VOD one with its Last-Modified (If-Modified-Since answered).
    sendNegotiated(ex, r, conditions, ageSec, this.forms.of(r, dateKey));
  }
}

/** The origin's master, held whole and mapped (pure string work in lib/hls/master.ts). */
class MasterFetch implements UpstreamSink {
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly src: Source,
    private readonly done: (err: unknown, value?: Rendered) => void,
  ) {}

  start(status: number): boolean {
    return status >= 200 && status < 300;
  }

  data(chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  error(err: UpstreamError): void {
    this.done(err);
  }

  end(status: number): void {
    if (status >= 400 && status < 500)
      return this.done(undefined, problemRendered('upstream-client-error', `the origin answered ${status}`, status));
    if (status < 200 || status >= 300) return this.done(new UpstreamError('failed', `the origin answered ${status}`));
    const text = Buffer.concat(this.chunks).toString('utf8');
    const mapped = mapMasterUris(text, (uri) => variantPath(uri, this.src.master, this.src.dir, SID));
    // A source that is a media playlist is offered as a master of one variant: itself, under the stream's path.
    const master = mapped.valid
      ? mapped.text
      : isMediaPlaylist(text)
        ? singleVariantMaster(variantPath(this.src.master.href, this.src.master, this.src.dir, SID))
        : undefined;
    if (master === undefined)
      return this.done(new UpstreamError('failed', "the event's source_uri is not an HLS playlist"));
    this.done(undefined, {
      status: 200,
      headers: MASTER_HEADERS,
      body: Buffer.alloc(0),
      text: master,
      freshMs: MASTER_FRESH_MS,
      staleMs: 30_000,
    });
  }
}
