/**
 * One upstream playlist on its way to a rendering (the upstream's sink), shared by the DAI manifest
 * proxy and the squeezeback player flow: 4xx passed on, 5xx and garbage failed, HLS trimmed to the
 * live window and rewritten line by line, a squeeze break applied last (docs/design.md §4), DASH
 * rewritten whole; response headers and micro-cache lifetimes from the target duration.
 */
import { HttpError, cdnProblemResponse, withRequestId, type ProblemCode } from '../http/problem.js';
import { PlaylistRewriter, trimThenRewrite, type PlaylistKind, type TrimOptions, type UriRules } from '../hls/index.js';
import { rewriteMpd, trimMpdWindow } from '../dash/index.js';
import { UpstreamError, type UpstreamSink } from './upstream.js';
import type { LoadDone, Rendered } from './manifest-cache.js';
import { ownBytes, type BodySlab } from './body-slab.js';
import type { RenderMemo } from './render-memo.js';
import type { EventSettings } from './event-settings.js';
import type { BreakSource } from './break-source.js';

export const HLS_TYPE = 'application/vnd.apple.mpegurl';
const DASH_TYPE = 'application/dash+xml';
export const MASTER_FRESH_MS = 1000;
const DEFAULT_TARGET_SEC = 6;
// Header sets are shared by every response and cached entry: frozen so none is changed in place.
// Cache-Control per answer kind: docs/design.md §16 and the one table, README.md "CDN origin".
// A live MPD's update period is not read: one second fresh, like the micro-cache, and through an
// upstream blip for two default target durations. No stale-while-revalidate (issue 30.1): a
// browser honours it, so a player refreshing every minimumUpdatePeriod (> 1 s) was answered from
// its own cache with the MPD it already had; dash.js places the edge by the wall clock, not by the
// timeline, and stalled waiting for segments that MPD did not list yet.
const DASH_HEADERS = Object.freeze({
  'Content-Type': DASH_TYPE,
  'Cache-Control': `public, max-age=1, stale-if-error=${2 * DEFAULT_TARGET_SEC}`,
});
export const MASTER_HEADERS = Object.freeze({
  'Content-Type': HLS_TYPE,
  'Cache-Control': 'public, max-age=2, stale-if-error=30',
});
/**
 * A VOD answer (an EXT-X-ENDLIST playlist, a static MPD) does not change: five minutes, a day
 * through upstream trouble. No stale-while-revalidate: a CDN revalidates it (Last-Modified, ETag).
 */
const VOD_CACHE_CONTROL = 'public, max-age=300, stale-if-error=86400';
const VOD_HEADERS = Object.freeze({ 'Content-Type': HLS_TYPE, 'Cache-Control': VOD_CACHE_CONTROL });
const DASH_VOD_HEADERS = Object.freeze({ 'Content-Type': DASH_TYPE, 'Cache-Control': VOD_CACHE_CONTROL });
const mediaHeaderSets = new Map<number, Readonly<Record<string, string>>>();

/**
 * Response headers of a live media playlist; one object per target duration, shared by every
 * response: fresh for half the target duration (RFC 8216 §6.2.2's reload interval, so a CDN never
 * holds a playlist past the player's next reload), stale-while-revalidate for one target duration,
 * stale-if-error for two (what the micro-cache itself serves stale, docs/design.md §4).
 */
export function mediaHeaders(targetSec: number): Readonly<Record<string, string>> {
  let h = mediaHeaderSets.get(targetSec);
  if (!h) {
    const maxAge = Math.max(1, Math.floor(targetSec / 2));
    h = Object.freeze({
      'Content-Type': HLS_TYPE,
      'Cache-Control': `public, max-age=${maxAge}, stale-while-revalidate=${targetSec}, stale-if-error=${2 * targetSec}`,
    });
    if (mediaHeaderSets.size < 100) mediaHeaderSets.set(targetSec, h);
  }
  return h;
}

/** The body of a rendering for one answer: a problem gets this answer's `request_id` (renderings are shared). */
export function bodyFor(r: Rendered, requestId: string): Buffer {
  return r.status < 400 ? r.body : Buffer.from(withRequestId(r.body.toString('utf8'), requestId));
}

export function problemRendered(code: ProblemCode, detail: string, status?: number, requestId?: string): Rendered {
  const p = cdnProblemResponse(new HttpError(code, detail, undefined, undefined, status), requestId);
  return { status: p.status, headers: p.headers, body: Buffer.from(p.body), freshMs: 0, staleMs: 0 };
}

export function targetDurationOf(text: string): number {
  const at = text.indexOf('#EXT-X-TARGETDURATION:');
  return at === -1 ? DEFAULT_TARGET_SEC : Number(text.slice(at + 22, text.indexOf('\n', at))) || DEFAULT_TARGET_SEC;
}

/** Which manifest a path names. */
export type ManifestKind = 'master' | 'media' | 'mpd';

/** What a fetch needs to know of its target: the kind by name, and the stream whose break assignment applies. */
export interface FetchTarget {
  kind: ManifestKind;
  streamId?: string | undefined;
}

export interface FetchOptions {
  /** Who answered, for error details ("the DAI host", "the origin"). */
  upstreamName?: string;
  /** Keep the rendered text on the result (for callers that render it further per stream). */
  keepText?: boolean;
  /** Renderings of identical upstream media playlists, shared between streams (render-memo.ts). */
  memo?: RenderMemo;
}

/**
 * One upstream response on its way to a rendering (the upstream's sink). With a live window the
 * whole playlist is needed before its head can be written: the raw bytes are held, trimmed, then
 * only what is kept is rewritten. Otherwise lines are rewritten chunk by chunk as they arrive.
 * A squeeze break of the event is applied last, as docs/design.md §4 orders it.
 */
export class ManifestFetch implements UpstreamSink {
  private readonly trim: TrimOptions | undefined;
  /** The rewriter of an HLS body rewritten chunk by chunk as it arrives (no window, no memo); else made when needed. */
  private readonly streaming: PlaylistRewriter | undefined;
  private readonly chunks: Buffer[] = [];
  private text = '';
  /** The upstream's Last-Modified as sent (VOD renderings are dated by it). */
  private lastModified: string | undefined;

  constructor(
    private readonly target: FetchTarget,
    private readonly settings: EventSettings,
    private readonly rules: UriRules,
    private readonly breaks: BreakSource | undefined,
    private readonly bodies: BodySlab,
    private readonly done: LoadDone,
    private readonly opts: FetchOptions = {},
  ) {
    this.trim =
      settings.windowSegs > 0 || settings.liveEdgeDelaySegments > 0
        ? { windowSegments: settings.windowSegs, delaySegments: settings.liveEdgeDelaySegments }
        : undefined;
    this.streaming = target.kind !== 'mpd' && !this.trim && !opts.memo ? new PlaylistRewriter(rules) : undefined;
  }

  start(status: number, lastModified?: string): boolean {
    this.lastModified = lastModified;
    return status >= 200 && status < 300;
  }

  data(chunk: Buffer): void {
    // Held whole when trimmed (the head depends on the end), memoised (the bytes are the key) or an MPD.
    if (this.streaming) this.text += this.streaming.push(chunk);
    else this.chunks.push(chunk);
  }

  error(err: UpstreamError): void {
    this.done(err);
  }

  end(status: number): void {
    let out: Rendered;
    try {
      out = this.rendered(status);
    } catch (err) {
      this.done(err);
      return;
    }
    this.done(undefined, out);
  }

  /** The held body; a playlist usually arrives in one chunk, which needs no copy. */
  private body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }

  /** 4xx answers are passed on; 5xx and garbage throw. */
  private rendered(status: number): Rendered {
    if (status >= 400 && status < 500)
      return problemRendered(
        'upstream-client-error',
        `${this.opts.upstreamName ?? 'the DAI host'} answered ${status}`,
        status,
      );
    if (status < 200 || status >= 300)
      throw new UpstreamError('failed', `${this.opts.upstreamName ?? 'the DAI host'} answered ${status}`);
    const { rules, settings } = this;
    if (this.target.kind === 'mpd') {
      // The same live window and live-edge delay as HLS (spec rule 7), then the URL rewrite.
      const raw = this.body().toString('utf8');
      // The rendering is served fresh for MASTER_FRESH_MS: the raised live delay covers that too.
      const trimmed = this.trim && trimMpdWindow(raw, { ...this.trim, servedForSec: MASTER_FRESH_MS / 1000 }).text;
      const mpd = rewriteMpd(trimmed || raw, rules);
      if (!mpd.valid)
        throw new UpstreamError(
          'failed',
          `${this.opts.upstreamName ?? 'the DAI host'} answered something that is not an MPD`,
        );
      const vod = isStaticMpd(mpd.text);
      const out: Rendered = {
        status: 200,
        headers: vod ? DASH_VOD_HEADERS : DASH_HEADERS,
        body: this.bodies.store(mpd.text),
        freshMs: MASTER_FRESH_MS,
        staleMs: 2 * DEFAULT_TARGET_SEC * 1000,
        forms: undefined,
      };
      if (vod) this.markVod(out);
      return out;
    }
    const memo = this.opts.memo;
    const raw = this.streaming ? undefined : this.body();
    const found = memo && raw ? memo.find(settings, raw) : undefined;
    let entry = typeof found === 'object' ? found : undefined;
    let text: string;
    let kind: PlaylistKind = 'media'; // only valid media playlists are kept
    if (entry) text = entry.text;
    else {
      const hls = this.streaming ?? new PlaylistRewriter(rules);
      text = raw ? this.rewrite(raw, hls) : this.text + hls.end();
      if (!hls.valid)
        throw new UpstreamError(
          'failed',
          `${this.opts.upstreamName ?? 'the DAI host'} answered something that is not a playlist (#EXTM3U missing)`,
        );
      kind = hls.kind;
      // Kept when it depends on the bytes, the settings and the fixed rules alone: a live media playlist
      // whose URIs did not resolve against its own URL.
      if (typeof found === 'number' && kind === 'media' && !hls.usedPlaylistUrl && !isVodText(text))
        entry = memo!.keep(found, raw!, text);
    }
    let substituted = false;
    if (kind === 'media' && settings.eventId !== undefined && this.breaks) {
      // Root-relative content segments were rewritten to the content origin: matched by path. Names
      // the variant gives relative to itself resolve under its directory on the DAI host, which
      // serves ads too: matched only when the output's time agrees as well (issue 30.2). The rest,
      // absolute URIs elsewhere, are the DAI host's ads (spec rule 4): never squeezed.
      // Both prefixes are made on first use: most events have no break, and apply() then asks nothing.
      let contentPrefix: string | undefined;
      let ownDir: string | undefined;
      const applied = this.breaks.apply(text, settings.eventId, this.target.streamId, (uri) =>
        uri.startsWith((contentPrefix ??= `${rules.contentOrigin}/`))
          ? true
          : uri.startsWith((ownDir ??= variantDir(rules.playlistUrl)))
            ? 'timed'
            : false,
      );
      if (applied !== undefined) {
        text = applied;
        substituted = true;
      }
    }
    // A memoised rendering is the answer whenever no break changed the text, or a break changed it as
    // before (its ETag and compressed forms with it); made by the memo's owner, with its options.
    const shared = entry && !substituted ? entry : undefined;
    if (shared?.rendered) return shared.rendered;
    const variant = entry && substituted ? entry.variants?.get(text) : undefined;
    if (variant) return variant;
    const td = targetDurationOf(text);
    const vod = isVodText(text);
    // A body the memo keeps gets memory of its own: a view would hold a whole slab of other bodies.
    const body = entry ? ownBytes(text) : this.bodies.store(text);
    const out: Rendered =
      kind !== 'media'
        ? {
            status: 200,
            headers: MASTER_HEADERS,
            body,
            freshMs: MASTER_FRESH_MS,
            staleMs: 2 * td * 1000,
            forms: undefined,
          }
        : {
            status: 200,
            headers: vod ? VOD_HEADERS : mediaHeaders(td),
            body,
            freshMs: Math.min(1000, (td * 1000) / 2),
            staleMs: 2 * td * 1000,
            forms: undefined,
          };
    if (this.opts.keepText) out.text = text;
    if (vod && kind === 'media') this.markVod(out);
    if (shared) shared.rendered = out;
    else if (entry) this.opts.memo!.keepVariant(entry, text, out);
    return out;
  }

  /** The held body trimmed to the live window and rewritten, or rewritten whole. */
  private rewrite(raw: Buffer, hls: PlaylistRewriter): string {
    return this.trim ? trimThenRewrite(raw.toString('utf8'), hls, this.trim) : hls.push(raw) + hls.end();
  }

  /** A VOD rendering, with the upstream's date when it sent a valid one that is not in the future. */
  private markVod(out: Rendered): void {
    out.vod = true;
    const at = this.lastModified === undefined ? NaN : Date.parse(this.lastModified);
    if (Number.isFinite(at) && at <= Date.now()) out.upstreamLastModified = at;
  }
}

function isVodText(text: string): boolean {
  return text.endsWith('#EXT-X-ENDLIST\n');
}

/** The directory of a playlist URL (up to its last `/`), where its document-relative names resolve. */
function variantDir(playlistUrl: string): string {
  const q = playlistUrl.indexOf('?');
  const path = q === -1 ? playlistUrl : playlistUrl.slice(0, q);
  return path.slice(0, path.lastIndexOf('/') + 1);
}

/** MPD@type is static when it says so or says nothing (ISO/IEC 23009-1 §5.3.1.2: the default). */
export function isStaticMpd(text: string): boolean {
  const at = text.indexOf('<MPD');
  if (at === -1) return false;
  const end = text.indexOf('>', at);
  const type = /\stype\s*=\s*["']([^"']*)["']/.exec(text.slice(at, end === -1 ? undefined : end));
  return !type || type[1] === 'static';
}
