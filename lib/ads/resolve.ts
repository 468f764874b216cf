/**
 * From an ad request to the linear ads a squeeze break can play: fetch the answer, tell VMAP from
 * VAST, follow `<vmap:AdTagURI>` and VAST `<Wrapper><VASTAdTagURI>` redirects, merge each wrapper's
 * impressions and tracking into the ad it leads to (VAST 4.1 §2.4.3.4), pick one progressive MP4
 * per linear creative, and order the result (pod ads by `sequence`, then stand-alone ads).
 *
 * Limits (docs/design.md §7): at most 5 redirects per chain (VAST 4.1 lets players stop after 5
 * wrappers), a URL seen twice in a chain is a loop, 3 s per request and 10 s overall (aborted via
 * the AbortSignal handed to fetchText, and raced so a fetcher that ignores it cannot stall us), and
 * a cap on requests per resolution so a hostile answer with many wrappers cannot fan out.
 * Nothing throws: a failure yields `{ads: [], reason}` and a log.warn; when some chains fail and
 * others resolve, the resolved ads are returned.
 *
 * VMAP breaks: by default every linear break with an ad source is taken, in document order. The ad
 * request asks for the one break being filled, so an answer normally has one; `pickBreak` narrows
 * it, and `selectBreaks` chooses among those (a squeeze break fills from one: liveBreakSelector).
 */
import type { Document } from '@xmldom/xmldom';
import { TRACKING_EVENTS, type DecidedAd, type TrackingEvent } from './types.js';
import { AdXmlError, parseXml } from './xml.js';
import {
  isVast,
  parseVast,
  type VastAd,
  type VastDocument,
  type VastLinear,
  type VastMediaFile,
  type VastWrapper,
} from './vast.js';
import { isVmap, parseVmap, type VmapBreak } from './vmap.js';
import { deadline } from '../errors/deadline.js';

export type FetchText = (url: string, signal: AbortSignal) => Promise<string>;

export interface ResolveLog {
  warn(obj: object, msg: string): void;
}

export interface ResolveOptions {
  /** Redirects (AdTagURI or VASTAdTagURI) followed per chain; default 5. */
  maxHops?: number;
  /** Per request deadline; default 3000 ms. */
  perRequestMs?: number;
  /** Deadline for the whole resolution; default 10000 ms. */
  totalMs?: number;
  /** Requests per resolution; default 32. */
  maxRequests?: number;
  /** Preferred media bitrate ceiling in kbit/s; default 5000. */
  maxBitrateKbps?: number;
  /** XML size cap per document; default parseXml's 2 MiB. */
  maxBytes?: number;
  /** Cancels everything (the break was cancelled). */
  signal?: AbortSignal;
  log?: ResolveLog;
  /** Which VMAP breaks to fill from; default: linear breaks with an ad source. */
  pickBreak?: (b: VmapBreak) => boolean;
  /** Of the picked VMAP breaks, those to fill from (default: all of them); see liveBreakSelector. */
  selectBreaks?: (breaks: VmapBreak[]) => VmapBreak[];
  /**
   * Server-side stitching: also accept linear creatives whose only media are streaming renditions
   * (HLS `application/x-mpegURL`, DASH `application/dash+xml`), exposed in `DecidedAd.streams`.
   */
  streaming?: boolean;
}

export interface ResolvedAds {
  ads: DecidedAd[];
  /** Why nothing (or not everything) came back; undefined on a clean success. */
  reason?: string;
}

type Limits = Required<Pick<ResolveOptions, 'maxHops' | 'perRequestMs' | 'totalMs' | 'maxRequests' | 'maxBitrateKbps'>>;

export const RESOLVE_DEFAULTS: Readonly<Limits> = {
  maxHops: 5,
  perRequestMs: 3000,
  totalMs: 10_000,
  maxRequests: 32,
  maxBitrateKbps: 5000,
};

/** Failure ranks: what the operator should hear first when several chains fail differently. */
const NETWORK = 0;
const DOCUMENT = 1;
const CHAIN = 2;
const CONTENT = 3;

class ChainFailure extends Error {
  constructor(
    readonly reason: string,
    readonly rank: number,
    readonly url?: string,
    readonly detail?: string,
  ) {
    super(reason);
  }
}

interface Chain {
  /** URL the current document came from (relative redirects resolve against it). */
  base: string | undefined;
  visited: string[];
  hops: number;
  wrappers: VastWrapper[];
  /** False when a wrapper (followAdditionalWrappers) or the VMAP source (followRedirects) forbids more redirects. */
  follow: boolean;
  allowMultiple: boolean | undefined;
}

const xmlReasons: Record<AdXmlError['code'], string> = {
  'too-large': 'ad server answered an oversized XML document',
  doctype: 'ad server answered XML with a DOCTYPE',
  malformed: 'ad server answered malformed XML',
};

function hasSource(b: VmapBreak): boolean {
  return b.adSource !== undefined && (b.adSource.vastXml !== undefined || b.adSource.adTagUri !== undefined);
}

/** Linear breaks (or breaks that do not say) are the ones a squeeze can fill. */
export function defaultPickBreak(b: VmapBreak): boolean {
  return (
    hasSource(b) && (b.breakType === '' || b.breakType.split(',').some((t) => t.trim().toLowerCase() === 'linear'))
  );
}

const PRE_OR_POST = /^(start|end)$/i;

/**
 * The VMAP break a live squeeze break fills from (issue 30.5; docs/decisions.md): an answer that
 * schedules several breaks (pre-, mid- and post-roll of a VOD schedule) is not several pods for one
 * squeeze. The break whose `breakId` is the squeeze break's abid, when one is; else the first
 * mid-roll (a `timeOffset` other than `start`/`end`) in document order; else the first break.
 */
export function liveBreakSelector(breakId?: string): (breaks: VmapBreak[]) => VmapBreak[] {
  return (breaks) => {
    if (breaks.length <= 1) return breaks;
    const named = breakId ? breaks.filter((b) => b.breakId === breakId) : [];
    if (named.length) return named.slice(0, 1);
    return [breaks.find((b) => !PRE_OR_POST.test(b.timeOffset)) ?? breaks[0]!];
  };
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function isHttpUrl(u: string): boolean {
  return /^https?:\/\//i.test(u);
}

const PLAYER_CODE = /^(application\/(javascript|x-javascript|x-shockwave-flash)|text\/javascript)$/i;

/**
 * The media file the transcoder composes from: progressive (delivery absent counts) video/mp4 first,
 * else any progressive video; within that the highest bitrate ≤ the ceiling, else one without a
 * bitrate (largest), else the lowest above the ceiling. VPAID/Flash files are never picked.
 */
export function pickMediaFile(
  files: VastMediaFile[],
  maxBitrateKbps: number = RESOLVE_DEFAULTS.maxBitrateKbps,
): VastMediaFile | undefined {
  const usable = files.filter(
    (f) =>
      isHttpUrl(f.uri) &&
      (f.delivery ?? 'progressive').toLowerCase() === 'progressive' &&
      !PLAYER_CODE.test(f.type ?? '') &&
      f.apiFramework?.toUpperCase() !== 'VPAID',
  );
  const isMp4 = (f: VastMediaFile) => (f.type ? f.type.toLowerCase() === 'video/mp4' : /\.mp4(\?|$)/i.test(f.uri));
  const isVideo = (f: VastMediaFile) => (f.type ? f.type.toLowerCase().startsWith('video/') : true);
  const tier = usable.some(isMp4) ? usable.filter(isMp4) : usable.filter(isVideo);
  const under = tier
    .filter((f) => f.bitrate !== undefined && f.bitrate <= maxBitrateKbps)
    .sort((a, b) => b.bitrate! - a.bitrate! || (b.height ?? 0) - (a.height ?? 0));
  if (under[0]) return under[0];
  const unknown = tier.filter((f) => f.bitrate === undefined).sort((a, b) => (b.height ?? 0) - (a.height ?? 0));
  if (unknown[0]) return unknown[0];
  return tier.sort((a, b) => a.bitrate! - b.bitrate!)[0];
}

const HLS_TYPES = /^(application\/(x-mpegurl|vnd\.apple\.mpegurl)|audio\/mpegurl)$/i;
const DASH_TYPES = /^application\/dash\+xml$/i;

/** The streaming media files of a creative (VAST 4.1 §3.9.1.1 `delivery="streaming"`; the type decides, since servers often omit delivery). */
export function streamingMedia(files: VastMediaFile[]): { hls?: string; dash?: string } {
  const out: { hls?: string; dash?: string } = {};
  for (const f of files) {
    if (!isHttpUrl(f.uri) || f.apiFramework?.toUpperCase() === 'VPAID') continue;
    const type = f.type ?? '';
    const path = f.uri.split('?')[0]!.toLowerCase();
    if (!out.hls && (HLS_TYPES.test(type) || (!type && path.endsWith('.m3u8')))) out.hls = f.uri;
    else if (!out.dash && (DASH_TYPES.test(type) || (!type && path.endsWith('.mpd')))) out.dash = f.uri;
  }
  return out;
}

/** Pod ads (with `sequence`) in sequence order, then stand-alone ads in document order (VAST 4.1 ad pods). */
function playOrder(ads: VastAd[]): VastAd[] {
  const pod = ads.filter((a) => a.sequence !== undefined).sort((a, b) => a.sequence! - b.sequence!);
  return [...pod, ...ads.filter((a) => a.sequence === undefined)];
}

/** `allowMultipleAds="false"`: only the first stand-alone ad (VAST 4.1 Wrapper attributes); when all are pod ads, the first one. */
function single(ads: VastAd[]): VastAd[] {
  if (ads.length <= 1) return ads;
  return [ads.find((a) => a.sequence === undefined) ?? ads[0]!];
}

function breakRef(b: VmapBreak, index: number): NonNullable<DecidedAd['adBreak']> {
  return b.breakId ? { index, timeOffset: b.timeOffset, breakId: b.breakId } : { index, timeOffset: b.timeOffset };
}

class Resolver {
  private readonly failures: ChainFailure[] = [];
  private requests = 0;
  private adCounter = 0;
  private readonly o: ResolveOptions & Omit<Limits, 'totalMs'>;

  constructor(
    private readonly fetchText: FetchText,
    opts: ResolveOptions,
    private readonly total: AbortSignal,
  ) {
    const d = RESOLVE_DEFAULTS;
    this.o = {
      ...opts,
      maxHops: opts.maxHops ?? d.maxHops,
      perRequestMs: opts.perRequestMs ?? d.perRequestMs,
      maxRequests: opts.maxRequests ?? d.maxRequests,
      maxBitrateKbps: opts.maxBitrateKbps ?? d.maxBitrateKbps,
    };
  }

  fail(f: ChainFailure): void {
    this.failures.push(f);
    const detail = f.detail ? { detail: f.detail } : {};
    this.o.log?.warn({ reason: f.reason, url: f.url?.slice(0, 500), ...detail }, `ad resolution: ${f.reason}`);
  }

  reason(): string | undefined {
    return [...this.failures].sort((a, b) => a.rank - b.rank)[0]?.reason;
  }

  async fetchDoc(url: string): Promise<Document> {
    if (++this.requests > this.o.maxRequests)
      throw new ChainFailure(`more than ${this.o.maxRequests} ad requests`, CHAIN, url);
    const perRequest = deadline(this.o.perRequestMs, this.total);
    const signal = perRequest.signal;
    let text: string;
    try {
      text = await raceAbort(
        Promise.resolve().then(() => this.fetchText(url, signal)),
        signal,
      );
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      if (this.o.signal?.aborted) throw new ChainFailure('ad request cancelled', NETWORK, url, detail);
      if (signal.aborted) throw new ChainFailure('ad server timed out', NETWORK, url, detail);
      throw new ChainFailure('ad server request failed', NETWORK, url, detail);
    } finally {
      perRequest.clear();
    }
    return this.parse(text, url);
  }

  parse(text: string, url: string | undefined): Document {
    try {
      return parseXml(text, this.o.maxBytes === undefined ? {} : { maxBytes: this.o.maxBytes });
    } catch (err) {
      if (err instanceof AdXmlError) throw new ChainFailure(xmlReasons[err.code], DOCUMENT, url, err.message);
      throw new ChainFailure('ad server answered malformed XML', DOCUMENT, url, String(err));
    }
  }

  async start(start: { url?: string; text?: string }): Promise<DecidedAd[]> {
    let base: string | undefined;
    if (start.url !== undefined) {
      base = this.absolute(start.url, undefined);
    }
    const doc = start.text !== undefined ? this.parse(start.text, base) : await this.fetchDoc(base!);
    const chain: Chain = {
      base,
      visited: base ? [base] : [],
      hops: 0,
      wrappers: [],
      follow: true,
      allowMultiple: undefined,
    };
    if (isVmap(doc)) return this.vmap(doc, chain);
    if (isVast(doc)) return this.vast(this.vastOf(doc, base), chain, true);
    throw new ChainFailure('ad server answered neither VAST nor VMAP', DOCUMENT, base);
  }

  vastOf(doc: Parameters<typeof parseVast>[0], url: string | undefined): VastDocument {
    try {
      return parseVast(doc);
    } catch (err) {
      throw new ChainFailure('ad server answered malformed XML', DOCUMENT, url, (err as Error).message);
    }
  }

  absolute(uri: string, base: string | undefined): string {
    let u: URL;
    try {
      u = new URL(uri, base);
    } catch {
      throw new ChainFailure('invalid ad tag URL', CHAIN, uri.slice(0, 500));
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ChainFailure('ad tag URL is not http(s)', CHAIN, u.href);
    return u.href;
  }

  async vmap(doc: Document, chain: Chain): Promise<DecidedAd[]> {
    const pick = this.o.pickBreak ?? defaultPickBreak;
    const picked = parseVmap(doc).breaks.filter((b) => hasSource(b) && pick(b));
    const breaks = this.o.selectBreaks && picked.length ? this.o.selectBreaks(picked) : picked;
    if (!breaks.length) throw new ChainFailure('no linear ad break in the VMAP', CONTENT, chain.base);
    const perBreak = await Promise.all(
      breaks.map((b, i) =>
        this.guard(async () => {
          const src = b.adSource!;
          const c: Chain = { ...chain, follow: src.followRedirects !== false, allowMultiple: src.allowMultipleAds };
          if (src.vastXml !== undefined) {
            const vast =
              typeof src.vastXml === 'string'
                ? this.vastOf(this.parse(src.vastXml, chain.base), chain.base)
                : this.vastOf(src.vastXml, chain.base);
            return this.vast(vast, c, true);
          }
          return this.follow(src.adTagUri!, c);
        }).then((ads) => ads.map((ad) => ({ ...ad, adBreak: breakRef(b, i) }))),
      ),
    );
    return perBreak.flat();
  }

  /** One redirect: counted, loop-checked, fetched, and resolved as VAST. */
  async follow(uri: string, chain: Chain): Promise<DecidedAd[]> {
    const url = this.absolute(uri, chain.base);
    if (chain.visited.includes(url)) throw new ChainFailure('wrapper loop', CHAIN, url);
    if (chain.hops + 1 > this.o.maxHops)
      throw new ChainFailure(`wrapper chain longer than ${this.o.maxHops} hops`, CHAIN, url);
    const doc = await this.fetchDoc(url);
    if (!isVast(doc)) throw new ChainFailure('wrapper target is not VAST', DOCUMENT, url);
    return this.vast(
      this.vastOf(doc, url),
      { ...chain, base: url, visited: [...chain.visited, url], hops: chain.hops + 1 },
      false,
    );
  }

  async vast(vast: VastDocument, chain: Chain, top: boolean): Promise<DecidedAd[]> {
    const ads = playOrder(chain.allowMultiple === false ? single(vast.ads) : vast.ads);
    if (!ads.length)
      throw new ChainFailure(top ? 'ad server returned no ads' : 'wrapper led to no ads', CONTENT, chain.base);
    const perAd = await Promise.all(
      ads.map((ad) =>
        this.guard(async () => {
          if (ad.inline) return this.decided(ad, chain.wrappers);
          const w = ad.wrapper;
          if (!w) throw new ChainFailure('no linear ads', CONTENT, chain.base);
          if (!chain.follow)
            throw new ChainFailure('wrapper not followed: redirects are not allowed here', CHAIN, chain.base);
          if (!w.vastAdTagUri) throw new ChainFailure('wrapper without VASTAdTagURI', CONTENT, chain.base);
          return this.follow(w.vastAdTagUri, {
            ...chain,
            wrappers: [...chain.wrappers, w],
            follow: w.followAdditionalWrappers !== false,
            allowMultiple: w.allowMultipleAds,
          });
        }),
      ),
    );
    return perAd.flat();
  }

  /** Runs one chain; its failure is recorded and it yields nothing. */
  async guard(run: () => Promise<DecidedAd[]>): Promise<DecidedAd[]> {
    try {
      return await run();
    } catch (err) {
      this.fail(
        err instanceof ChainFailure ? err : new ChainFailure('ad resolution failed', DOCUMENT, undefined, String(err)),
      );
      return [];
    }
  }

  decided(ad: VastAd, wrappers: VastWrapper[]): DecidedAd[] {
    const inline = ad.inline!;
    if (!inline.linears.length) throw new ChainFailure('no linear ads', CONTENT, undefined, `ad ${ad.id}`);
    const out: DecidedAd[] = [];
    let why = this.o.streaming ? 'no progressive or streaming video media file' : 'no progressive video media file';
    for (const lin of inline.linears) {
      const progressive = pickMediaFile(lin.mediaFiles, this.o.maxBitrateKbps);
      const streams = this.o.streaming ? streamingMedia(lin.mediaFiles) : {};
      const media =
        progressive ?? ((streams.hls ?? streams.dash) ? { uri: (streams.hls ?? streams.dash)! } : undefined);
      if (!media) continue;
      if (!(lin.durationSec > 0)) {
        why = 'linear ad without a duration';
        continue;
      }
      // Impressions count once per ad, so only its first playable creative carries them.
      const decided = this.toDecided(ad, lin, media, wrappers, out.length === 0);
      if (streams.hls || streams.dash) decided.streams = streams;
      out.push(decided);
    }
    if (!out.length) throw new ChainFailure(why, CONTENT, undefined, `ad ${ad.id}`);
    return out;
  }

  toDecided(
    ad: VastAd,
    lin: VastLinear,
    media: VastMediaFile,
    wrappers: VastWrapper[],
    withImpressions: boolean,
  ): DecidedAd {
    const inline = ad.inline!;
    const tracking: Partial<Record<TrackingEvent, string[]>> = {};
    for (const event of TRACKING_EVENTS) {
      const urls =
        event === 'impression'
          ? withImpressions
            ? [...inline.impressions, ...wrappers.flatMap((w) => w.impressions)]
            : []
          : [...(lin.tracking[event] ?? []), ...wrappers.flatMap((w) => w.tracking[event] ?? [])];
      const http = urls.filter(isHttpUrl);
      if (http.length) tracking[event] = http;
    }
    const d: DecidedAd = {
      adId: ad.id || lin.creativeId || `vast-ad-${++this.adCounter}`,
      uri: media.uri,
      durationSec: lin.durationSec,
      tracking,
    };
    if (lin.creativeId) d.creativeId = lin.creativeId;
    if (lin.universalAdId) d.universalAdId = lin.universalAdId;
    if (inline.adSystem) d.adSystem = inline.adSystem;
    if (inline.title) d.title = inline.title;
    if (lin.clickThrough && isHttpUrl(lin.clickThrough)) d.clickThrough = lin.clickThrough;
    if (media.width !== undefined) d.width = media.width;
    if (media.height !== undefined) d.height = media.height;
    if (media.bitrate !== undefined) d.bitrate = media.bitrate;
    return d;
  }

  async run(start: { url?: string; text?: string }): Promise<ResolvedAds> {
    const ads = await this.guard(() => this.start(start));
    if (ads.length) return { ads };
    return { ads: [], reason: this.reason() ?? 'no linear ads' };
  }
}

/**
 * Resolves an ad request (`url`, fetched) or an answer already in hand (`text`; relative redirects
 * then need `url` as their base) to playable linear ads. Never throws.
 */
export async function resolveAds(
  start: { url?: string; text?: string },
  fetchText: FetchText,
  opts: ResolveOptions = {},
): Promise<ResolvedAds> {
  const totalMs = opts.totalMs ?? RESOLVE_DEFAULTS.totalMs;
  const limit = opts.signal ? deadline(totalMs, opts.signal) : deadline(totalMs);
  const total = limit.signal;
  try {
    if (start.url === undefined && start.text === undefined) return { ads: [], reason: 'no ad request URL' };
    return await new Resolver(fetchText, opts, total).run(start);
  } catch (err) {
    opts.log?.warn({ err: String(err) }, 'ad resolution failed');
    return { ads: [], reason: 'ad resolution failed' };
  } finally {
    limit.clear();
  }
}
