/**
 * `GET|HEAD /dai/manifest/*` (spec "DAI proxy: manifests"; docs/design.md §4). The path maps to the
 * DAI host; the stream is registered without the response waiting; the upstream body is rewritten
 * line by line as it arrives, or, with a live window, trimmed then rewritten in one pass over the
 * held playlist; concurrent requests for one upstream URL share one fetch. A squeeze break of the
 * event (lib/squeeze/breaks/board.ts, from memory) is applied last, as docs/design.md §4 orders it.
 *
 * Streams (issue 24): a refresh of a stream this instance knows costs one map lookup and is never
 * limited. An id it does not know is a new stream: counted against the client's `stream` rate
 * limit (429 beyond it), and recorded only once the DAI host answered its manifest 2xx, so an
 * invented id the upstream refuses leaves nothing behind.
 */
// The module binding, not the global: Node's global `performance` is a lazy accessor whose getter
// runs on every read (~70 instructions a read in callgrind; read twice per manifest answer).
import { performance } from 'node:perf_hooks';
import { addressText, type HttpRequest, type HttpResponse, type TemplatedApp } from '../http/uws.js';
import { FORWARDED_FOR, trustedProxies, viewerOf, type TrustedHops } from '../http/client-ip.js';
import { Exchange, statusLine, writeHeaders, writePairs } from '../http/exchange.js';
import { corsOf, type Cors } from '../http/cors.js';
import { wallNow } from '../http/wall-clock.js';
import {
  answerHead,
  CONDITION_HEADERS,
  conditionsOf,
  extraFor,
  honoursIfModifiedSince,
  negotiate,
  sendNegotiated,
  type Conditions,
} from '../http/representation.js';
import { HttpError, problemResponse } from '../http/problem.js';
import type { Registry } from '../metrics/index.js';
import type { Logger } from '../log/index.js';
import { textPathStats, type UriRules } from '../hls/index.js';
import { parsePath, type PathTarget } from './path.js';
import { checkQuery } from '../delivery/query.js';
import { Upstream, UpstreamError } from '../delivery/upstream.js';
import { ManifestCache, type LoadDone, type Rendered } from '../delivery/manifest-cache.js';
import { BodySlab } from '../delivery/body-slab.js';
import { RenderMemo } from '../delivery/render-memo.js';
import { ManifestFetch, bodyFor, problemRendered } from '../delivery/manifest-fetch.js';
import { guardMethods } from '../http/methods.js';
import { incomingRequestId, requestId, requestIdForHeader } from '../http/request-id.js';
import { DEFAULT_EVENT_SETTINGS, type EventSettings, type EventSettingsSource } from '../delivery/event-settings.js';
import { STREAM_LIMITS, type StreamRegistry } from '../streams/registry.js';
import type { BreakSource } from '../delivery/break-source.js';
import { rateLimited, type RateLimiter } from '../http/rate-limit.js';
import { VodForms } from '../delivery/vod-dates.js';

export interface ManifestProxyOptions {
  daiHost: string;
  publicBaseUrl: string;
  contentOrigin: string;
  accessLogSampleRate: number;
  /** TRUSTED_PROXIES: the CDN hops whose X-Forwarded-For names the viewer to the DAI host (geo); none: the peer. */
  trustedProxies?: TrustedHops;
}

export interface ManifestProxyDeps {
  upstream: Upstream;
  cache: ManifestCache;
  events: EventSettingsSource;
  streams: StreamRegistry;
  /** Squeeze breaks applied to media playlists of an event's streams (none: plain pass-through). */
  breaks?: BreakSource;
  metrics: Registry;
  log: Logger;
  inFlight: { count: number };
  /** CORS for web players (none: no CORS headers). */
  cors?: Cors;
  /** Per-client cap on new stream ids (rule `stream`); known streams never reach it. */
  limiter?: RateLimiter;
  /** The client a new stream id is counted against (the composition root's trusted-hop rule); the peer address without it. */
  clientKey?: (req: HttpRequest, res: HttpResponse) => string;
}

const PATH_CACHE_SIZE = 10_000;
const noop = () => undefined;
const NO_CONDITIONS: Conditions = Object.freeze({ ifNoneMatch: '', ifModifiedSince: '', acceptEncoding: '' });
/** What the upstream request carries (besides the viewer's address as X-Forwarded-For): nothing else is forwarded. */
const UPSTREAM_HEADERS = Object.freeze({ accept: '*/*', 'user-agent': 'squeezeback-dai-proxy' });

/** A manifest path seen recently: its parse, and its event's settings and cache keys while the generations hold. */
interface KnownPath {
  target: PathTarget;
  /** The event settings of the path's asset key (a new generation of the event configs may change them). */
  settings: EventSettings;
  /** The cache key without a query: the generations and the upstream path. */
  key: string;
  /** What stands for key before a query (see current). */
  queryScope: string;
  eventsGeneration: number;
  breaksGeneration: number;
}

export class ManifestProxy {
  private readonly proxyBase: string;
  private readonly trusted: TrustedHops;
  private readonly byStatus;
  /** byStatus's 200, read without a Map lookup: nearly every answer is one. */
  private readonly ok;
  private readonly durations;
  private readonly paths = new Map<string, KnownPath>();
  private lastUrl = '';
  private lastKnown: KnownPath | undefined;
  /** A short alias per query-less cache key, so a key with a query hashes little more than the query (current). */
  private readonly scopes = new Map<string, string>();
  private scopesMade = 0;
  private readonly bodies = new BodySlab();
  /** Media playlists whose upstream bytes repeat across streams are rendered once (lib/delivery/render-memo.ts). */
  private readonly memo = new RenderMemo();
  private readonly memoOptions = Object.freeze({ memo: this.memo });
  /** Renderings are shared (compressed once); VOD ones are dated (lib/delivery/vod-dates.ts). */
  private readonly forms: VodForms;

  constructor(
    private readonly opts: ManifestProxyOptions,
    private readonly deps: ManifestProxyDeps,
  ) {
    this.proxyBase = `${opts.publicBaseUrl}/dai/manifest`;
    this.forms = new VodForms(deps.events, deps.breaks);
    this.trusted = opts.trustedProxies ?? trustedProxies('');
    const family = deps.metrics.counter('dai_manifest_requests_total', 'Manifest proxy requests by status');
    this.byStatus = new Map([200, 304, 400, 404, 502, 504].map((s) => [s, family.with({ code: String(s) })]));
    const other = family.with({ code: 'other' });
    this.byStatus.set(0, other);
    this.ok = this.byStatus.get(200)!;
    this.durations = deps.metrics.histogram('dai_manifest_duration_seconds', 'Manifest proxy latency').with();
    deps.metrics.gauge(
      'dai_manifest_cache_entries',
      'Rewritten manifests held by the micro-cache',
      () => deps.cache.size,
    );
    deps.metrics.gauge(
      'dai_manifest_cache_hits',
      'Requests answered by the micro-cache or a shared fetch',
      () => deps.cache.hits,
    );
    deps.metrics.gauge(
      'dai_manifest_stale_served',
      'Stale manifests served while the upstream failed',
      () => deps.cache.staleServed,
    );
    deps.metrics.gauge(
      'dai_manifest_cache_not_admitted',
      'Renderings not cached: first fetch of their URL while the cache was half full',
      () => deps.cache.notAdmitted,
    );
    deps.metrics.counterFuncs(
      'dai_manifest_render_memo_hits_total',
      'Media playlists answered with the rendering of identical upstream bytes another stream fetched',
      [[{}, () => this.memo.hits]],
    );
    // The text fast paths and how often they handed a playlist to the line-based reference (lib/hls/stats.ts).
    deps.metrics.counterFuncs(
      'hls_text_path_total',
      'Live-window trims and break substitutions by the way they were done',
      [
        [{ op: 'trim', way: 'offsets' }, () => textPathStats.trimOffsets],
        [{ op: 'trim', way: 'reference' }, () => textPathStats.trimReference],
        [{ op: 'trim', way: 'rewritten_first' }, () => textPathStats.trimRewrittenFirst],
        [{ op: 'break', way: 'text' }, () => textPathStats.breakText],
        [{ op: 'break', way: 'reference' }, () => textPathStats.breakReference],
      ],
    );
  }

  mount(app: TemplatedApp): void {
    app.get('/dai/manifest/*', (res, req) => this.handle(res, req, false));
    app.head('/dai/manifest/*', (res, req) => this.handle(res, req, true));
    this.deps.cors?.mountPreflight(app, '/dai/manifest/*', 'GET, HEAD, OPTIONS');
    guardMethods(app, '/dai/manifest/*', this.deps.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD', this.deps.cors);
  }

  /** Path parsing depends on the path alone: remembered for the paths seen recently. */
  private known(url: string): KnownPath {
    // A hot URL (a CDN's edges pulling one stream) repeats back to back: a string compare, not a fresh hash per request.
    if (url === this.lastUrl) return this.lastKnown!;
    let k = this.paths.get(url);
    if (!k) {
      const target = parsePath(url);
      k = {
        target,
        settings: DEFAULT_EVENT_SETTINGS, // set by current(), as the generations below are not current
        key: '',
        queryScope: '',
        eventsGeneration: -1,
        breaksGeneration: -1,
      };
      if (this.paths.size >= PATH_CACHE_SIZE) this.paths.clear();
      this.paths.set(url, k);
    }
    this.lastUrl = url;
    this.lastKnown = k;
    return k;
  }

  /**
   * Brings a known path up to the current generations of the event settings and the breaks: its
   * settings (one Map lookup per generation, not per request), and its cache key, the upstream URL
   * under both generations, kept with the path so a hot URL's lookups hash no new string. With a
   * query, the key is the query behind a short alias of the query-less key (`\x01<n>\x01`, a form no
   * other key of the shared cache has): a query no request repeats (a cache-buster, a session
   * token) is otherwise a fresh ~110-character string per request, flattened and hashed by the
   * cache's Map, about 2,000 instructions of a distinct request's ~68,000 (callgrind, issue 31).
   */
  private current(k: KnownPath): void {
    const events = this.deps.events.generation;
    const breaks = this.deps.breaks?.generation ?? 0;
    if (k.eventsGeneration !== events || k.breaksGeneration !== breaks) {
      k.settings = this.deps.events.forAssetKey(k.target.assetKey);
      k.key = `${events}|${breaks}|${k.target.path}`;
      k.queryScope = this.scopeOf(k.key);
      k.eventsGeneration = events;
      k.breaksGeneration = breaks;
    }
  }

  /** The alias of a query-less key: one per key while remembered; a forgotten key gets a new one (its entries are missed, not confused). */
  private scopeOf(key: string): string {
    let scope = this.scopes.get(key);
    if (scope === undefined) {
      if (this.scopes.size >= PATH_CACHE_SIZE) this.scopes.clear();
      scope = `\x01${(this.scopesMade++).toString(36)}\x01`;
      this.scopes.set(key, scope);
    }
    return scope;
  }

  private handle(res: HttpResponse, req: HttpRequest, isHead: boolean): void {
    const started = performance.now();
    const url = req.getUrl();
    const query = req.getQuery() ?? '';
    const cors = corsOf(this.deps.cors, req);
    const incomingId = incomingRequestId(req);
    let known: KnownPath;
    try {
      checkQuery(query);
      known = this.known(url);
    } catch (err) {
      this.answer(
        new Exchange(res, isHead, cors, requestId(incomingId || undefined)),
        err instanceof HttpError
          ? problemRendered('bad-path', err.message)
          : problemRendered('internal', 'internal error'),
        undefined,
        started,
      );
      return;
    }
    this.current(known);
    const target = known.target;
    const settings = known.settings;
    const upstreamPath = query ? `${target.path}?${query}` : target.path;
    // A master (or MPD) request records its upstream path for ID3 inspection; media requests, the
    // frequent ones, pass nothing, and refresh() stores the path only when it changed.
    const masterPath = target.kind === 'media' ? undefined : upstreamPath;
    const streamId = target.streamId;
    /** A stream id this instance does not know: recorded once the upstream answered 2xx. */
    let newStream = false;
    // One wall-clock reading for the stream's last visit and the micro-cache's freshness, from the monotonic one.
    const now = wallNow(started);
    if (streamId && !this.deps.streams.refresh(streamId, settings.eventId, target.assetKey, masterPath, now)) {
      if (this.deps.streams.isKnown(streamId)) this.register(streamId, settings, target, masterPath);
      else if (streamId.length > STREAM_LIMITS.streamIdChars) {
        this.answer(
          new Exchange(res, isHead, cors),
          problemRendered('bad-path', 'the stream id is too long'),
          undefined,
          started,
        );
        return;
      } else {
        const verdict = this.deps.limiter?.take(
          'stream',
          this.deps.clientKey ? this.deps.clientKey(req, res) : addressText(res.getRemoteAddressAsText()),
        );
        if (verdict && !verdict.ok) {
          const p = problemResponse(rateLimited(verdict.retryAfterSec));
          this.count(p.status, started);
          new Exchange(res, isHead, cors).send(p.status, p.headers, p.body);
          return;
        }
        newStream = true;
      }
    }
    const key = query ? known.queryScope + query : known.key;
    const hit = this.deps.cache.fresh(key, now);
    if (hit && newStream && hit.value.status === 200) this.register(streamId!, settings, target, masterPath);
    if (hit && hit.value.status < 400) {
      // Fast lane: answered inside this uWS callback, so no onAborted, cork or promise is needed.
      // Each write is a call into uWS: its default status line is 200 OK, and a fresh hit is
      // under a second old (Age 0 is what its absence means).
      // The form (304, gzip, identity) and its headers were built once for this rendering (lib/http/representation.ts).
      const opts = this.forms.of(hit.value, upstreamPath);
      const ifNoneMatch = req.getHeader(CONDITION_HEADERS.ifNoneMatch);
      const v = negotiate(
        hit.value,
        ifNoneMatch,
        ifNoneMatch === '' && honoursIfModifiedSince(hit.value, opts)
          ? req.getHeader(CONDITION_HEADERS.ifModifiedSince)
          : '',
        req.getHeader(CONDITION_HEADERS.acceptEncoding),
        opts,
      );
      this.count(v.status, started);
      if (v.status !== 200) res.writeStatus(statusLine(v.status));
      if (hit.ageSec) res.writeHeader('Age', String(hit.ageSec));
      const extra = extraFor(v, cors);
      const head = answerHead(v, extra);
      const id = requestIdForHeader(incomingId);
      if (head) res.writeHeader(head, id);
      else {
        writeHeaders(res, v.headers); // no head: a value beyond ASCII, or one that would split a line (left out)
        writePairs(res, extra);
        res.writeHeader('X-Request-Id', id);
      }
      // This uWS build does not count endWithoutBody as an answer: an abort handler keeps it from aborting the process.
      // A 304 states no Content-Length (uWS omits it only when given no argument).
      if (v.status === 304) res.onAborted(noop).endWithoutBody();
      else if (isHead) res.onAborted(noop).endWithoutBody(v.body.byteLength);
      else res.end(v.body);
      return;
    }
    const ex = new Exchange(res, isHead, cors, requestId(incomingId || undefined));
    const conditions = conditionsOf(req);
    if (hit) return this.answer(ex, hit.value, hit.ageSec, started, conditions, upstreamPath);
    // The viewer as trusted hops name it (issue 24): a client cannot choose its geo at the DAI host.
    const xff = viewerOf(res, req.getHeader(FORWARDED_FOR), this.trusted);
    this.deps.inFlight.count++;
    this.deps.cache.load(
      key,
      (done) => this.render(target, query, upstreamPath, settings, xff, done),
      (err, hit) => {
        this.deps.inFlight.count--;
        try {
          if (newStream && hit?.value.status === 200) this.register(streamId!, settings, target, masterPath);
          this.answer(ex, hit ? hit.value : this.failure(err, ex.id), hit?.ageSec, started, conditions, upstreamPath);
        } catch (e) {
          this.deps.log.error({ err: e }, 'manifest answer failed');
        }
      },
    );
  }

  /** Records (or refreshes) the stream, fire-and-forget. */
  private register(
    streamId: string,
    settings: EventSettings,
    target: PathTarget,
    masterPath: string | undefined,
  ): void {
    const touch: Parameters<StreamRegistry['touch']>[0] = { streamId, flow: 'dai' };
    if (settings.eventId !== undefined) touch.eventId = settings.eventId;
    if (target.assetKey !== undefined) touch.assetKey = target.assetKey;
    if (masterPath !== undefined) touch.masterPath = masterPath;
    this.deps.streams.touch(touch);
  }

  /** The public answer names no address or URL (issue 24); the log has the reason under the answer's request id. */
  private failure(err: unknown, id: string): Rendered {
    if (err instanceof UpstreamError) {
      if (err.internal !== undefined)
        this.deps.log.warn({ req_id: id, reason: err.internal }, 'manifest upstream failed');
      return problemRendered(
        err.code === 'timeout' ? 'upstream-timeout' : 'upstream-failed',
        err.message,
        undefined,
        id,
      );
    }
    this.deps.log.error({ req_id: id, err }, 'manifest proxy failed');
    return problemRendered('upstream-failed', 'the manifest could not be produced', undefined, id);
  }

  private count(status: number, started: number): void {
    (status === 200 ? this.ok : (this.byStatus.get(status) ?? this.byStatus.get(0)!)).inc();
    this.durations.observe((performance.now() - started) / 1000);
    if (this.opts.accessLogSampleRate > 0 && Math.random() < this.opts.accessLogSampleRate)
      this.deps.log.info({ status, ms: performance.now() - started }, 'manifest');
  }

  private answer(
    ex: Exchange,
    r: Rendered,
    ageSec: number | undefined,
    started: number,
    conditions = NO_CONDITIONS,
    upstreamPath = '',
  ): void {
    this.count(r.status, started);
    // A problem gets this answer's request_id in the shared rendering; errors are neither compressed nor validated.
    if (r.status >= 400) {
      if (ex.aborted) return;
      ex.send(r.status, ageSec === undefined ? r.headers : { ...r.headers, Age: String(ageSec) }, bodyFor(r, ex.id));
      return;
    }
    sendNegotiated(ex, r, conditions, ageSec, this.forms.of(r, upstreamPath));
  }

  /** Fetches and rewrites one manifest: done gets the rendering, or the error (5xx, garbage, timeout). */
  private render(
    target: PathTarget,
    query: string,
    upstreamPath: string,
    settings: EventSettings,
    xff: string,
    done: LoadDone,
  ): void {
    const rules: UriRules = {
      daiHost: this.opts.daiHost,
      proxyBase: this.proxyBase,
      contentOrigin: settings.contentOrigin || this.opts.contentOrigin || this.opts.daiHost,
      playlistUrl: this.opts.daiHost + upstreamPath,
    };
    this.deps.upstream.get(
      target.path,
      UPSTREAM_HEADERS,
      new ManifestFetch(
        target,
        settings,
        rules,
        this.deps.breaks,
        this.bodies,
        done,
        target.kind === 'media' ? this.memoOptions : undefined,
      ),
      xff,
      query,
    );
  }
}
