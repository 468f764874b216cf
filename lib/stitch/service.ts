/**
 * The server-side stitching flow (spec "What the service does" 6; docs/design.md §11): the asset
 * from the brand's catalog, an ad request with the content's duration and cue points, the VMAP's
 * breaks as pods of ads with streaming media, everything fetched through the outbound policy,
 * stitched by the pure stitchers, stored, and answered as `{cache_url, breaks, warnings}`.
 *
 * Failures: the ad server (down, slow, garbage) or an ad's manifests → the content without those
 * ads and a warning; the content origin → 502; a content manifest over the caps or unusable → 422.
 * A session is stored only once it is whole.
 */
import { createHash, randomBytes } from 'node:crypto';
import { invalid, unprocessable, upstreamFailed } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { AssetRecord } from '../catalog/repo.js';
import type { Rendition } from '../catalog/mrss.js';
import { buildAdRequestUrl, type AdTagSettings } from '../ads/ad-request.js';
import { beaconUrl } from '../ads/beacon.js';
import { TRACKING_EVENTS, type DecidedAd } from '../ads/types.js';
import type { ResolvedAds, FetchText } from '../ads/resolve.js';
import { OutboundError } from '../outbound/client.js';
import { StitchError } from './errors.js';
import { breakType, planPods, type PlannedPod } from './plan.js';
import { mediaPlaylistUris, parseMaster } from './hls/master.js';
import { stitchHls, type HlsSource, type StitchedPod } from './hls/stitch.js';
import { interstitialHls } from './hls/interstitials.js';
import { stitchDash, type DashPodInput } from './dash/stitch.js';
import { parseIsoDuration } from '../dash/index.js';
import { readMedia } from '../hls/index.js';
import type { StitchSession, StitchStore } from './store.js';
import { dashProfile, hlsProfile, type ConditionedAd, type LadderProfile } from './profile.js';
import { MIN_FILL_SEC, slateHls, slateMpd, sourceSeconds } from './slate.js';
import { sourceKey, type SessionPlan, type SourceRef } from './session-plan.js';
import { CharLru, filesChars, sourceChars, type Source } from './source-cache.js';

export type Protocol = 'hls' | 'dash';

/** A placed pod with each ad's fetched manifests (none when they could not be had). */
interface PodMedia {
  id: string;
  offsetSec: number;
  /** `url`: where the source was read (the ad's streaming media file, or its conditioned renditions). */
  ads: Array<{ ad: DecidedAd; source?: HlsSource | string; url?: string; ref?: SourceRef }>;
}

/** What rendering a plan gives: the session's files and the pods on the stitched timeline. */
interface Rendered {
  files: Record<string, string>;
  pods: StitchedPod[];
  contentDuration: number;
  skipped: Array<{ podId: string; adId: string; reason: string }>;
}

export interface StitchRequest {
  protocol: Protocol;
  brand: string;
  streamId: string;
  assetId: string;
  targeting: Record<string, string>;
  contentUri?: string;
  /** HLS Interstitials (`?interstitials=1`): the content untouched, each pod an EXT-X-DATERANGE with an asset list. */
  interstitials?: boolean;
}

export interface TrackingOut {
  event: string;
  offset: number;
  urls: string[];
}

export interface BreakOut {
  id: string;
  type: 'pre' | 'mid' | 'post';
  start: number;
  duration: number;
  content_offset: number;
  ads: Array<{
    id: string;
    creative_id: string | null;
    sequence: number;
    start: number;
    duration: number;
    title?: string;
    ad_system?: string;
    slate?: true;
    tracking: TrackingOut[];
  }>;
}

export interface StitchAnswer {
  cache_url: string;
  breaks: BreakOut[];
  warnings?: string[];
}

export interface StitchServiceDeps {
  findAsset(brand: string, assetId: string): Promise<AssetRecord>;
  /** The brand's ad-tag settings (its squeeze brand config's `ad_tag`), empty when it has none. */
  adTag(brand: string): Promise<AdTagSettings>;
  resolve(url: string): Promise<ResolvedAds>;
  /** Manifest fetches (content and ads), size-capped: OutboundError on failure. */
  fetchText: FetchText;
  store: StitchStore;
  adServerUrl: string;
  publicBaseUrl: () => string;
  stitchPath: string;
  ttlSec: number;
  beaconSecret: string;
  log: Logger;
  /**
   * Renditions of an ad without streaming media of the content's protocol, conditioned from its
   * MP4 to the content's ladder (issue 26; lib/conditioning). Absent: such ads are left out.
   */
  conditioned?: (ad: DecidedAd, profile: LadderProfile, waitUntilMs?: number) => Promise<ConditionedAd>;
  /** A conditioned creative's ready renditions by its key, named under `base`, to render a session again (absent: not ready or unknown). */
  conditionedByKey?: (key: string, base: string) => Promise<ConditionedAd>;
  /** Characters of sources and of renderings kept in process, each (default 64 MiB). */
  cacheChars?: number;
  /** How long a stitch POST of the brand may wait for its ads' conditioning (`stitch_wait_for_ads_ms`, already capped); 0: never. */
  waitForAds?: (brand: string) => Promise<number>;
  /** The brand's slate (`stitch_slate` of its squeeze brand config): its MP4, and whether short pods are filled with it. */
  slate?: (brand: string) => Promise<{ uri: string; fill: boolean } | undefined>;
}

/**
 * How long a stitch POST may wait for its ads: the brand's `stitch_wait_for_ads_ms` (anything that
 * is not a non-negative number is 0) capped by the deployment's `STITCH_MAX_WAIT_MS`.
 */
export function stitchWaitMs(asked: unknown, capMs: number): number {
  return typeof asked === 'number' && asked > 0 ? Math.min(asked, Math.max(0, capMs)) : 0;
}

/** The slate ads of this process (told apart in `breaks[]`). */
const SLATES = new WeakSet<DecidedAd>();

const FETCH_MS = 10_000;
const MAX_PLAYLISTS = 64;
const BEACON_GRACE_SEC = 3600;

const round = (n: number) => Math.round(n * 1000) / 1000;

export class StitchService {
  /** Content and ad manifests by source key: shared by the sessions of an asset and of an ad. */
  private readonly sources: CharLru<Source>;
  /** Rendered files by session id, so a player's polling renders a session once. */
  private readonly rendered: CharLru<Record<string, string>>;
  /** Renderings under way, by session id: players polling a session this instance has not rendered yet share one. */
  private readonly rendering = new Map<string, Promise<Record<string, string>>>();
  /**
   * POST answers by session id, in this process only (issue 24): a session stores its plan and no
   * more, and the answer's signed tracking URLs cannot be made again from the plan (they are the ad
   * server's, for this decision). Asked again where the answer is gone, the request is stitched anew.
   */
  private readonly answers: CharLru<StitchAnswer>;

  constructor(private readonly deps: StitchServiceDeps) {
    this.sources = new CharLru(deps.cacheChars ?? 64 * 1024 * 1024, sourceChars);
    this.rendered = new CharLru(deps.cacheChars ?? 64 * 1024 * 1024, filesChars);
    this.answers = new CharLru(deps.cacheChars ?? 64 * 1024 * 1024, (a) => JSON.stringify(a).length);
  }

  cacheBase(id: string, base = this.deps.publicBaseUrl()): string {
    return `${base.replace(/\/+$/, '')}/${this.deps.stitchPath}/cache/${id}`;
  }

  async stitch(req: StitchRequest): Promise<StitchAnswer> {
    const asset = await this.deps.findAsset(req.brand, req.assetId);
    // Keyed by the item's guid: asked by guid or by content id, it is the same asset.
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          req.protocol,
          req.brand,
          req.streamId,
          asset.guid,
          ...(req.interstitials ? ['interstitials'] : []),
        ]),
      )
      .digest('base64url');
    const live = await this.deps.store.byKey(key);
    const held = live && this.answerOf(live);
    if (held) return held;

    const rendition = pickRendition(asset.renditions, req.protocol, req.contentUri);
    const id = randomBytes(16).toString('base64url');
    const warnings: string[] = [];
    const ttlMs = this.deps.ttlSec * 1000;
    // One deadline for every ad and the slate of this stitch (0: ads not ready are left out at once).
    const waitMs = (await this.deps.waitForAds?.(req.brand).catch(() => 0)) ?? 0;
    const waitUntil = waitMs > 0 ? Date.now() + waitMs : 0;

    let withMedia: PodMedia[];
    let content: Source;
    let epochMs: number | undefined;
    if (req.protocol === 'hls') {
      const hls = await this.contentHls(rendition.url);
      content = hls;
      const durationSec = contentDuration(hls, asset);
      const pods = await this.decide(req, asset, durationSec, warnings);
      const profile = this.profileOf(() => hlsProfile(hls), warnings);
      withMedia = await this.adSources(pods, 'hls', warnings, profile, waitUntil);
      if (!req.interstitials) await this.fillWithSlate(req.brand, withMedia, profile, warnings, waitUntil);
      // Whole seconds: the dates read plainly, and the same session never changes them.
      if (req.interstitials) epochMs = Math.floor(Date.now() / 1000) * 1000;
    } else {
      const mpd = await this.fetch(rendition.url, 'content');
      content = { url: rendition.url, mpd };
      const declared = /mediaPresentationDuration="([^"]+)"/.exec(mpd)?.[1];
      const pods = await this.decide(req, asset, parseIsoDuration(declared) ?? asset.duration ?? 0, warnings);
      const profile = this.profileOf(() => dashProfile(mpd), warnings);
      withMedia = await this.adSources(pods, 'dash', warnings, profile, waitUntil);
      await this.fillWithSlate(req.brand, withMedia, profile, warnings, waitUntil);
    }
    const { plan, sources } = planOf(this.deps.publicBaseUrl(), content, withMedia, epochMs);
    for (const [k, v] of sources) this.sources.set(k, v);
    const result = this.render(id, req.protocol, plan, (ref) => sources.get(sourceKey(ref, plan.base))!);
    for (const s of result.skipped) warnings.push(`ad ${s.adId} of break ${s.podId} left out: ${s.reason}`);
    const answer: StitchAnswer = {
      cache_url: `${this.cacheBase(id)}/${req.protocol === 'hls' ? 'master.m3u8' : 'manifest.mpd'}`,
      breaks: this.breaks(result.pods, withMedia, result.contentDuration, req.streamId, Date.now() + ttlMs),
    };
    if (warnings.length) answer.warnings = warnings;
    const session: StitchSession = { id, key, protocol: req.protocol, plan, expiresAt: Date.now() + ttlMs };
    // A live session whose answer this process does not hold is superseded: its row keeps its id
    // (its cache_url plays on until it expires) and gives up the request key to this one.
    let stored = await this.deps.store.put(session, live?.id);
    if (stored.id !== id) {
      const theirs = this.answerOf(stored);
      if (theirs) return theirs;
      // Another instance stitched the same request at the same moment: this session is kept under a key of its own.
      stored = await this.deps.store.put({ ...session, key: id });
    }
    this.rendered.set(id, result.files);
    this.answers.set(id, answer);
    return answer;
  }

  /** A session's POST answer: held here since its stitch, or stored whole by a session from before plans. */
  private answerOf(s: StitchSession): StitchAnswer | undefined {
    return (s.response as StitchAnswer | undefined) ?? this.answers.get(s.id);
  }

  /** A session's files from memory, or undefined when they must be rendered (`files`). */
  cachedFiles(s: StitchSession): Record<string, string> | undefined {
    return s.files ?? this.rendered.get(s.id);
  }

  /** A session's files: rendered again from its plan, reading the sources this process no longer holds. */
  files(s: StitchSession): Promise<Record<string, string>> {
    const hit = this.cachedFiles(s);
    if (hit) return Promise.resolve(hit);
    let p = this.rendering.get(s.id);
    if (!p) {
      p = this.renderAgain(s).finally(() => this.rendering.delete(s.id));
      this.rendering.set(s.id, p);
    }
    return p;
  }

  private async renderAgain(s: StitchSession): Promise<Record<string, string>> {
    if (!s.plan) throw new Error('the session has neither files nor a plan');
    const plan = s.plan;
    const refs: SourceRef[] = [{ u: plan.content }, ...plan.srcs];
    const got = new Map<string, Source>();
    await Promise.all(
      refs.map(async (ref, i) => {
        const k = sourceKey(ref, plan.base);
        const source = this.sources.get(k) ?? (await this.reread(ref, s.protocol, i === 0, plan.base));
        this.sources.set(k, source);
        got.set(k, source);
      }),
    );
    const files = this.render(s.id, s.protocol, plan, (ref) => got.get(sourceKey(ref, plan.base))!).files;
    this.rendered.set(s.id, files);
    return files;
  }

  /** A source read again as the stitch read it (the content's origin, the ad's, or the conditioning store). */
  private async reread(ref: SourceRef, protocol: Protocol, isContent: boolean, base: string): Promise<Source> {
    if ('u' in ref) {
      if (protocol === 'dash') return { url: ref.u, mpd: await this.fetch(ref.u, isContent ? 'content' : 'ad') };
      return isContent ? this.contentHls(ref.u) : this.adHls(ref.u);
    }
    const key = 'c' in ref ? ref.c : ref.s;
    const c = await this.deps.conditionedByKey?.(key, base);
    if (c?.state !== 'ready') throw new Error(`the conditioned creative ${key} is not readable now`);
    if (!('s' in ref)) return c.hls ?? { url: c.url, mpd: c.mpd! };
    const cut = c.hls ? slateHls(c.hls, ref.gap) : slateMpd(c.mpd!, ref.gap, ref.seg);
    return 'source' in cut ? cut.source : { url: c.url, mpd: cut.mpd };
  }

  /** The plan rendered by the pure stitchers: the one way a session's files are made, at the POST and after. */
  private render(id: string, protocol: Protocol, plan: SessionPlan, source: (ref: SourceRef) => Source): Rendered {
    const content = source({ u: plan.content });
    const pods = plan.pods.map(([pid, offsetSec, ads]) => ({
      id: pid,
      offsetSec,
      ads: ads.map(([adId, i]) => ({ id: adId, source: source(plan.srcs[i]!) })),
    }));
    if (protocol === 'dash') {
      const c = content as { url: string; mpd: string };
      const inputs: DashPodInput[] = pods.map((p) => ({
        ...p,
        ads: p.ads.map((a) => ({ id: a.id, ...(a.source as { url: string; mpd: string }) })),
      }));
      const result = guard(() => stitchDash(c, inputs));
      return {
        files: { 'manifest.mpd': result.mpd },
        pods: result.pods,
        contentDuration: result.contentDuration,
        skipped: result.skipped,
      };
    }
    const hls = content as HlsSource;
    const inputs = pods as Array<{ id: string; offsetSec: number; ads: Array<{ id: string; source: HlsSource }> }>;
    const result =
      plan.epochMs !== undefined
        ? guard(() =>
            interstitialHls(hls, inputs, {
              epochMs: plan.epochMs!,
              assetListUrl: (n) => `${this.cacheBase(id, plan.base)}/${assetListFile(n)}`,
              assetListFile,
            }),
          )
        : guard(() =>
            stitchHls(hls, inputs, {
              fillerUri: `${plan.base.replace(/\/+$/, '')}/${this.deps.stitchPath}/filler.vtt`,
            }),
          );
    const files = {
      'master.m3u8': result.master,
      ...Object.fromEntries(result.playlists),
      ...Object.fromEntries((result as { assetLists?: Map<string, string> }).assetLists ?? []),
    };
    return { files, pods: result.pods, contentDuration: result.contentDuration, skipped: result.skipped };
  }

  /** The ad request and its answer as placed pods; any ad-server failure is a warning and no pods. */
  private async decide(
    req: StitchRequest,
    asset: AssetRecord,
    durationSec: number,
    warnings: string[],
  ): Promise<PlannedPod[]> {
    const adTag = await this.deps.adTag(req.brand).catch((err: Error) => {
      this.deps.log.warn(
        { err: err.message, brand: req.brand },
        'stitch: brand ad-tag settings unavailable; ad request without them',
      );
      return { params: {} };
    });
    const url = buildAdRequestUrl({
      adServerUrl: this.deps.adServerUrl,
      adTag,
      assetId: asset.guid,
      breakId: req.streamId,
      durationSec,
      targeting: { ...req.targeting, stream_id: req.streamId },
      vod: { durationSec, cuePoints: asset.cue_points },
    });
    if (!url) {
      warnings.push('no ad server configured (AD_SERVER_URL): the content is served without ads');
      return [];
    }
    const decided = await this.deps.resolve(url);
    if (!decided.ads.length) {
      warnings.push(`no ads: ${decided.reason ?? 'the ad server returned none'}`);
      return [];
    }
    if (decided.reason) warnings.push(`some ads were not resolved: ${decided.reason}`);
    const planned = planPods(decided.ads, durationSec, asset.cue_points);
    warnings.push(...planned.warnings);
    return planned.pods;
  }

  /** The content's ladder profile when ads may be conditioned to it; a content we cannot condition to is a warning. */
  private profileOf(read: () => LadderProfile | undefined, warnings: string[]): LadderProfile | undefined {
    if (!this.deps.conditioned) return undefined;
    try {
      const p = read();
      if (!p)
        warnings.push(
          "the content's video codec cannot be conditioned to (H.264 and HEVC can): ads without its streaming media are left out",
        );
      return p;
    } catch (err) {
      warnings.push(`the content's ladder cannot be read for conditioning ads: ${(err as Error).message}`);
      return undefined;
    }
  }

  /**
   * Fetches each ad's streaming manifests (once per URL); an ad without them is conditioned from
   * its MP4 to the content's profile when that is ready, else reported (naming the job) and left out.
   */
  private async adSources(
    pods: PlannedPod[],
    protocol: Protocol,
    warnings: string[],
    profile?: LadderProfile,
    waitUntil = 0,
  ): Promise<PodMedia[]> {
    const lookups = new Map<string, Promise<ConditionedAd>>();
    const condition = (ad: DecidedAd): Promise<ConditionedAd> => {
      let p = lookups.get(ad.uri);
      if (!p) {
        p = this.deps.conditioned!(ad, profile!, waitUntil).catch((err: Error) => {
          this.deps.log.warn({ err: err.message, ad: ad.adId }, 'stitch: ad conditioning lookup failed');
          return { state: 'refused' as const, detail: `conditioning is unavailable now (${err.message})` };
        });
        lookups.set(ad.uri, p);
      }
      return p;
    };
    const cache = new Map<string, Promise<HlsSource | string | undefined>>();
    const load = (url: string) => {
      let p = cache.get(url);
      if (!p) {
        p = (protocol === 'hls' ? this.adHls(url) : this.fetch(url, 'ad')).catch((err: Error) => {
          // The answer is public: the reason (which may name an internal address) goes to the log only.
          this.deps.log.warn({ url: url.slice(0, 500), reason: err.message }, 'stitch: an ad manifest is unavailable');
          warnings.push(
            `an ad manifest is unavailable${err instanceof StitchError ? `: ${withoutUrls(err.message)}` : ''}`,
          );
          return undefined;
        });
        cache.set(url, p);
      }
      return p;
    };
    return Promise.all(
      pods.map(async (pod) => ({
        ...pod,
        ads: await Promise.all(
          pod.ads.map(async (ad) => {
            const url = protocol === 'hls' ? ad.streams?.hls : ad.streams?.dash;
            if (!url) {
              const progressive = ad.uri !== ad.streams?.hls && ad.uri !== ad.streams?.dash;
              if (!profile || !progressive) {
                warnings.push(
                  `ad ${adKey(ad)} of break ${pod.id} has no ${protocol === 'hls' ? 'HLS (application/x-mpegURL)' : 'DASH (application/dash+xml)'} media file: left out`,
                );
                return { ad };
              }
              const c = await condition(ad);
              if (c.state !== 'ready') {
                warnings.push(`ad ${adKey(ad)} of break ${pod.id} left out this time: ${c.detail}`);
                return { ad };
              }
              return { ad, source: protocol === 'hls' ? c.hls! : c.mpd!, url: c.url, ref: { c: c.key } };
            }
            const source = await load(url);
            return source === undefined ? { ad } : { ad, source, url, ref: { u: url } };
          }),
        ),
      })),
    );
  }

  /**
   * When the brand asks for it, a pod whose playing ads are shorter than planned (ads not ready,
   * left out, or shorter than their VAST duration) gets the brand's slate, conditioned like any ad
   * and cut to the gap, after its ads; without it the pod is just shorter.
   */
  private async fillWithSlate(
    brand: string,
    pods: PodMedia[],
    profile: LadderProfile | undefined,
    warnings: string[],
    waitUntil = 0,
  ): Promise<void> {
    if (!profile || !this.deps.slate || !this.deps.conditioned || !pods.length) return;
    const slate = await this.deps.slate(brand).catch((err: Error) => {
      this.deps.log.warn({ err: err.message, brand }, 'stitch: brand slate settings unavailable');
      return undefined;
    });
    if (!slate?.fill) return;
    const ad: DecidedAd = { adId: 'slate', uri: slate.uri, durationSec: 0, tracking: {}, title: 'slate' };
    SLATES.add(ad);
    let conditioned: ConditionedAd | undefined;
    for (const pod of pods) {
      const planned = pod.ads.reduce((s, a) => s + a.ad.durationSec, 0);
      const gap = planned - pod.ads.reduce((s, a) => s + (a.source === undefined ? 0 : sourceSeconds(a.source)), 0);
      if (gap < MIN_FILL_SEC) continue;
      conditioned ??= await this.deps.conditioned(ad, profile, waitUntil).catch((err: Error) => ({
        state: 'refused' as const,
        detail: `conditioning is unavailable now (${err.message})`,
      }));
      if (conditioned.state !== 'ready') {
        warnings.push(`break ${pod.id}: ${round(gap)} s not filled with slate this time: ${conditioned.detail}`);
        continue;
      }
      const cut = conditioned.hls
        ? slateHls(conditioned.hls, gap)
        : slateMpd(conditioned.mpd!, gap, profile.segmentSec);
      if (cut.seconds < gap - MIN_FILL_SEC - profile.segmentSec / 2)
        warnings.push(
          `break ${pod.id}: the slate (${round(cut.seconds)} s) is shorter than the ${round(gap)} s to fill`,
        );
      pod.ads.push({
        ad,
        source: 'source' in cut ? cut.source : cut.mpd,
        url: conditioned.url,
        ref: { s: conditioned.key, gap, seg: profile.segmentSec },
      });
    }
  }

  private async contentHls(url: string): Promise<HlsSource> {
    const master = await this.fetch(url, 'content');
    const uris = guard(() => mediaPlaylistUris(parseMaster(url, master))).filter((u) => u !== url);
    if (uris.length > MAX_PLAYLISTS)
      throw unprocessable(`the content names more than ${MAX_PLAYLISTS} media playlists`);
    const texts = await Promise.all(uris.map((u) => this.fetch(u, 'content')));
    return { url, master, playlists: new Map(uris.map((u, i) => [u, texts[i]!])) };
  }

  private async adHls(url: string): Promise<HlsSource> {
    const master = await this.fetch(url, 'ad');
    const uris = mediaPlaylistUris(parseMaster(url, master)).filter((u) => u !== url);
    if (uris.length > MAX_PLAYLISTS) throw new StitchError('too-large', `more than ${MAX_PLAYLISTS} media playlists`);
    const texts = await Promise.all(uris.map((u) => this.fetch(u, 'ad')));
    return { url, master, playlists: new Map(uris.map((u, i) => [u, texts[i]!])) };
  }

  /** A content fetch failure is the origin's (502) or the manifest's size (422); an ad's is rethrown for a warning. */
  private async fetch(url: string, whose: 'content' | 'ad'): Promise<string> {
    try {
      return await this.deps.fetchText(url, AbortSignal.timeout(FETCH_MS));
    } catch (err) {
      if (whose === 'ad') throw err;
      // Public answers name neither the content URL nor the reason (issue 24): both go to the log.
      this.deps.log.warn(
        { url: url.slice(0, 500), reason: (err as Error).message },
        'stitch: the content manifest could not be fetched',
      );
      if (err instanceof OutboundError && err.code === 'too-large')
        throw unprocessable('the content manifest is larger than the cap');
      if (err instanceof OutboundError && err.code === 'refused')
        throw upstreamFailed('the content URL is not allowed');
      throw upstreamFailed('the content origin failed');
    }
  }

  /** `breaks[]` on the stitched timeline, every tracking URL signed through /beacon. */
  private breaks(
    pods: StitchedPod[],
    planned: PodMedia[],
    contentSec: number,
    streamId: string,
    expiresMs: number,
  ): BreakOut[] {
    const adsByKey = new Map(planned.flatMap((p) => p.ads.map(({ ad }) => [`${p.id}\u0000${adKey(ad)}`, ad] as const)));
    const base = this.deps.publicBaseUrl();
    const expires = Math.floor(expiresMs / 1000) + BEACON_GRACE_SEC;
    return pods.map((pod) => {
      const id = pod.ids.join('+');
      return {
        id,
        type: breakType(pod.contentOffset, contentSec),
        start: round(pod.start),
        duration: round(pod.duration),
        content_offset: round(pod.contentOffset),
        ads: pod.ads.map((a, i) => {
          const ad = pod.ids.map((pid) => adsByKey.get(`${pid}\u0000${a.id}`)).find((x) => x !== undefined)!;
          const out: BreakOut['ads'][number] = {
            id: ad.adId,
            creative_id: ad.creativeId ?? null,
            sequence: i + 1,
            start: round(a.start),
            duration: round(a.duration),
            tracking: [],
          };
          if (ad.title) out.title = ad.title;
          if (ad.adSystem) out.ad_system = ad.adSystem;
          if (SLATES.has(ad)) out.slate = true;
          const at: Record<string, number> = {
            impression: 0,
            start: 0,
            firstQuartile: 0.25,
            midpoint: 0.5,
            thirdQuartile: 0.75,
            complete: 1,
          };
          for (const event of TRACKING_EVENTS) {
            const urls = ad.tracking[event];
            if (!urls?.length) continue;
            out.tracking.push({
              event,
              offset: round(a.start + at[event]! * a.duration),
              urls: urls.map((url) =>
                beaconUrl(base, this.deps.beaconSecret, { url, streamId, event, breakId: id, expires }),
              ),
            });
          }
          return out;
        }),
      };
    });
  }
}

/**
 * The session's plan from the stitch's placed pods, and the sources it names by source key (the
 * content first). An ad whose source is the same (one creative in several pods) is one entry.
 */
function planOf(
  base: string,
  content: Source,
  pods: PodMedia[],
  epochMs: number | undefined,
): { plan: SessionPlan; sources: Map<string, Source> } {
  const sources = new Map<string, Source>([[sourceKey({ u: content.url }, base), content]]);
  const index = new Map<string, number>();
  const srcs: SourceRef[] = [];
  const plan: SessionPlan = { base, content: content.url, srcs, pods: [] };
  if (epochMs !== undefined) plan.epochMs = epochMs;
  for (const pod of pods) {
    const ads: Array<[string, number]> = [];
    for (const { ad, source, url, ref } of pod.ads) {
      if (source === undefined || !ref) continue;
      const k = sourceKey(ref, base);
      let i = index.get(k);
      if (i === undefined) {
        index.set(k, (i = srcs.push(ref) - 1));
        sources.set(k, typeof source === 'string' ? { url: url!, mpd: source } : source);
      }
      ads.push([adKey(ad), i]);
    }
    plan.pods.push([pod.id, pod.offsetSec, ads]);
  }
  return { plan, sources };
}

/** Where the n-th pod's asset list lives in a session (and under its cache prefix). */
const assetListFile = (n: number) => `assets/${n}.json`;

/** An ad's identity within a pod (ad id and creative: one VAST ad may carry several linear creatives). */
function adKey(ad: DecidedAd): string {
  return ad.creativeId ? `${ad.adId}/${ad.creativeId}` : ad.adId;
}

function pickRendition(renditions: Rendition[], protocol: Protocol, contentUri: string | undefined): Rendition {
  const candidates = renditions.filter((r) => r.kind === protocol);
  if (contentUri !== undefined) {
    const chosen = candidates.find((r) => r.url === contentUri);
    if (!chosen) throw invalid(`content_uri is not one of the asset's ${protocol.toUpperCase()} renditions`);
    return chosen;
  }
  if (!candidates[0]) throw unprocessable(`the asset has no ${protocol.toUpperCase()} rendition`);
  return candidates[0];
}

/** The video duration of the content (first variant), the catalog's when the playlist cannot say. */
function contentDuration(content: HlsSource, asset: AssetRecord): number {
  const master = guard(() => parseMaster(content.url, content.master));
  const text = content.playlists.get(master.variants[0]!.uri) ?? content.master;
  let d = 0;
  for (const s of readMedia(text).segments) d += s.duration;
  return d > 0 ? d : (asset.duration ?? 0);
}

/** Every absolute URL of a text replaced: public answers name no upstream URL (issue 24); the log keeps them. */
export function withoutUrls(text: string): string {
  return text.replace(/\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"']+/g, '(a URL)');
}

/** Stitcher errors about the content are the asset's fault: 422. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof StitchError) throw unprocessable(`the content cannot be stitched: ${withoutUrls(err.message)}`);
    throw err;
  }
}
