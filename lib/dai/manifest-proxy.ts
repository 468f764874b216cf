/**
 * `GET|HEAD /dai/manifest/*` (spec "DAI proxy: manifests"; DESIGN.md §4). The path maps to the
 * DAI host; the stream is registered without the response waiting; the upstream body is rewritten
 * line by line as it arrives; media playlists are trimmed (and, during a break, substituted) in one
 * pass over the held playlist; concurrent requests for one upstream URL share one fetch.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import { Exchange } from '../http/exchange.js';
import { sendSized } from '../http/stream-writer.js';
import { HttpError } from '../http/problem.js';
import type { Registry } from '../http/metrics.js';
import type { Logger } from '../log/index.js';
import { PlaylistRewriter, joinLines, parseMedia, trimMedia, tagValue, type UriRules } from '../hls/index.js';
import { rewriteMpd } from '../dash/index.js';
import { parseManifestPath, type ManifestTarget } from './path.js';
import { Upstream, UpstreamError } from './upstream.js';
import { ManifestCache, type Rendered } from './manifest-cache.js';
import type { EventSettings, EventSettingsSource } from './event-settings.js';
import type { StreamRegistry } from './streams.js';

export interface ManifestProxyOptions {
  daiHost: string;
  publicBaseUrl: string;
  contentOrigin: string;
  accessLogSampleRate: number;
}

export interface ManifestProxyDeps {
  upstream: Upstream;
  cache: ManifestCache;
  events: EventSettingsSource;
  streams: StreamRegistry;
  metrics: Registry;
  log: Logger;
  inFlight: { count: number };
}

const HLS_TYPE = 'application/vnd.apple.mpegurl';
const DASH_TYPE = 'application/dash+xml';
const MASTER_FRESH_MS = 1000;
const DEFAULT_TARGET_SEC = 6;

function problemRendered(status: number, code: string, detail: string): Rendered {
  const err = new HttpError(status, code, detail);
  return { status, headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' }, body: Buffer.from(JSON.stringify(err.toProblem())), freshMs: 0, staleMs: 0 };
}

function targetDurationOf(lines: string[]): number {
  for (let i = 0; i < lines.length && i < 40; i++) if (lines[i]!.startsWith('#EXT-X-TARGETDURATION:')) return Number(tagValue(lines[i]!)) || DEFAULT_TARGET_SEC;
  return DEFAULT_TARGET_SEC;
}

export class ManifestProxy {
  private readonly proxyBase: string;
  private readonly byStatus;
  private readonly durations;

  constructor(
    private readonly opts: ManifestProxyOptions,
    private readonly deps: ManifestProxyDeps,
  ) {
    this.proxyBase = `${opts.publicBaseUrl}/dai/manifest`;
    const family = deps.metrics.counter('dai_manifest_requests_total', 'Manifest proxy requests by status');
    this.byStatus = new Map([200, 400, 404, 502, 504].map((s) => [s, family.with({ code: String(s) })]));
    const other = family.with({ code: 'other' });
    this.byStatus.set(0, other);
    this.durations = deps.metrics.histogram('dai_manifest_duration_seconds', 'Manifest proxy latency').with();
    deps.metrics.gauge('dai_manifest_cache_entries', 'Rewritten manifests held by the micro-cache', () => deps.cache.size);
    deps.metrics.gauge('dai_manifest_cache_hits', 'Requests answered by the micro-cache or a shared fetch', () => deps.cache.hits);
    deps.metrics.gauge('dai_manifest_stale_served', 'Stale manifests served while the upstream failed', () => deps.cache.staleServed);
  }

  mount(app: TemplatedApp): void {
    const handler = (res: HttpResponse, req: HttpRequest) => this.handle(res, req);
    app.get('/dai/manifest/*', handler);
    app.head('/dai/manifest/*', handler);
  }

  private handle(res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    const ex = new Exchange(res, req.getMethod() === 'head');
    const url = req.getUrl();
    const query = req.getQuery() ?? '';
    const xff = req.getHeader('x-forwarded-for');
    let target: ManifestTarget;
    try {
      target = parseManifestPath(url, query);
    } catch (err) {
      this.answer(ex, (err as HttpError).status === 400 ? problemRendered(400, 'bad-path', (err as Error).message) : problemRendered(500, 'internal', 'internal error'), undefined, started);
      return;
    }
    const settings = this.deps.events.forAssetKey(target.assetKey);
    if (target.streamId) {
      const touch: Parameters<StreamRegistry['touch']>[0] = { streamId: target.streamId, flow: 'dai' };
      if (settings.eventId !== undefined) touch.eventId = settings.eventId;
      if (target.assetKey !== undefined) touch.assetKey = target.assetKey;
      this.deps.streams.touch(touch);
    }
    this.deps.inFlight.count++;
    const key = `${this.deps.events.generation}|${target.upstreamPath}`;
    this.deps.cache
      .get(key, () => this.render(target, settings, xff))
      .then(
        (hit) => this.answer(ex, hit.value, hit.ageSec, started),
        (err: unknown) => this.answer(ex, this.failure(err), undefined, started),
      )
      .finally(() => this.deps.inFlight.count--);
  }

  private failure(err: unknown): Rendered {
    if (err instanceof UpstreamError) return err.code === 'timeout' ? problemRendered(504, 'upstream-timeout', err.message) : problemRendered(502, 'upstream-failed', err.message);
    this.deps.log.error({ err }, 'manifest proxy failed');
    return problemRendered(502, 'upstream-failed', 'the manifest could not be produced');
  }

  private answer(ex: Exchange, r: Rendered, ageSec: number | undefined, started: number): void {
    (this.byStatus.get(r.status) ?? this.byStatus.get(0)!).inc();
    this.durations.observe((performance.now() - started) / 1000);
    if (this.opts.accessLogSampleRate > 0 && Math.random() < this.opts.accessLogSampleRate) this.deps.log.info({ status: r.status, ms: performance.now() - started }, 'manifest');
    if (ex.aborted) return;
    const headers = ageSec === undefined ? r.headers : { ...r.headers, Age: String(ageSec) };
    if (ex.isHead) ex.send(r.status, headers, r.body);
    else void sendSized(ex, r.status, headers, r.body);
  }

  /** Fetches and rewrites one manifest. 4xx answers are passed on; 5xx, garbage and timeouts throw. */
  private async render(target: ManifestTarget, settings: EventSettings, xff: string): Promise<Rendered> {
    const rules: UriRules = {
      daiHost: this.opts.daiHost,
      proxyBase: this.proxyBase,
      contentOrigin: settings.contentOrigin || this.opts.contentOrigin || this.opts.daiHost,
      playlistUrl: this.opts.daiHost + target.upstreamPath,
    };
    const lines: string[] = [];
    const chunks: Buffer[] = [];
    const hls = target.kind === 'mpd' ? undefined : new PlaylistRewriter(rules, (l) => lines.push(l));
    const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'squeezeback-dai-proxy' };
    if (xff) headers['x-forwarded-for'] = xff;
    const status = await this.deps.upstream.get(target.upstreamPath, headers, {
      start: (s) => s >= 200 && s < 300,
      data: (chunk) => (hls ? hls.push(chunk) : chunks.push(chunk)),
    });
    if (status >= 400 && status < 500) return problemRendered(status, 'upstream-client-error', `the DAI host answered ${status}`);
    if (status < 200 || status >= 300) throw new UpstreamError('failed', `the DAI host answered ${status}`);

    if (!hls) {
      const mpd = rewriteMpd(Buffer.concat(chunks).toString('utf8'), rules);
      if (!mpd.valid) throw new UpstreamError('failed', 'the DAI host answered something that is not an MPD');
      return { status: 200, headers: { 'Content-Type': DASH_TYPE, 'Cache-Control': 'public, max-age=1' }, body: Buffer.from(mpd.text), freshMs: MASTER_FRESH_MS, staleMs: 2 * DEFAULT_TARGET_SEC * 1000 };
    }
    hls.end();
    if (!hls.valid) throw new UpstreamError('failed', 'the DAI host answered something that is not a playlist (#EXTM3U missing)');
    const td = targetDurationOf(lines);
    if (hls.kind !== 'media') {
      return { status: 200, headers: { 'Content-Type': HLS_TYPE, 'Cache-Control': 'public, max-age=2' }, body: Buffer.from(joinLines(lines)), freshMs: MASTER_FRESH_MS, staleMs: 2 * td * 1000 };
    }
    let out = lines;
    let ended = lines[lines.length - 1] === '#EXT-X-ENDLIST';
    if (settings.windowSegs > 0 || settings.liveEdgeDelaySegments > 0) {
      const parsed = parseMedia(lines);
      ended = parsed.endList;
      out = trimMedia(parsed, { windowSegments: settings.windowSegs, delaySegments: settings.liveEdgeDelaySegments }) ?? lines;
    }
    const maxAge = ended ? 300 : Math.max(1, Math.floor(td / 2));
    return {
      status: 200,
      headers: { 'Content-Type': HLS_TYPE, 'Cache-Control': `public, max-age=${maxAge}` },
      body: Buffer.from(joinLines(out)),
      freshMs: Math.min(1000, (td * 1000) / 2),
      staleMs: 2 * td * 1000,
    };
  }
}
