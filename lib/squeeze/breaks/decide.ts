/**
 * Ad decisioning for a break (spec rules 2 and 3; docs/design.md §6): curated configured ads first;
 * otherwise an ad request to the ad decision server (VMAP, wrappers followed); when that yields
 * nothing, the event's other configured ads as a fallback. Per-stream decisions (DAI streams) run
 * with bounded concurrency under one deadline; streams with the same creatives share an assignment.
 */
import type { Logger } from '../../log/index.js';
import type { DecidedAd } from '../../ads/types.js';
import { buildAdRequestUrl, type AdRequestContext } from '../../ads/ad-request.js';
import { assignmentKey, chooseConfiguredAds, configuredToDecided, type CuratedCandidate } from './plan.js';
import type { Assignment } from './repo.js';

export interface DecideInput {
  eventId: number;
  breakId: string;
  durationSec: number;
  abid?: string | undefined;
  geo?: string | undefined;
  /** Everything of the request context but the stream's targeting. */
  adRequest: Omit<AdRequestContext, 'targeting' | 'vprn' | 'pvrn' | 'breakId' | 'durationSec' | 'clientIp' | 'abid'>;
}

export interface StreamTargeting {
  streamId: string;
  targeting: Record<string, string>;
  vprn?: string | undefined;
  pvrn?: string | undefined;
  clientIp?: string | undefined;
}

/** The targeting key whose value picks curated ads per stream when the break names no geo. */
const GEO_KEY = 'geo_lang_loc';

export interface Decision {
  assignments: Assignment[];
  defaultKey: string | undefined;
  streamAssignments: Record<string, string>;
  streamTracking: Record<string, Array<DecidedAd['tracking']>>;
  source: 'curated' | 'vmap' | 'fallback' | 'none';
  reason: string | undefined;
}

/** `want.abid`: the squeeze break's abid, which names the VMAP break to fill from when the answer has several. */
export type ResolveFn = (
  url: string,
  want?: { abid?: string | undefined },
) => Promise<{ ads: DecidedAd[]; reason?: string | undefined }>;

export interface DeciderDeps {
  configuredAds: (eventId: number) => Promise<CuratedCandidate[]>;
  resolve: ResolveFn;
  /** Whether a decided creative may be handed to the transcoder (its host is public, docs/design.md §7). */
  creativeAllowed?: (uri: string) => Promise<boolean>;
  log: Logger;
  concurrency?: number;
  deadlineMs?: number;
}

function assignment(source: Assignment['source'], ads: DecidedAd[]): Assignment {
  return { key: assignmentKey(ads), source, ads };
}

const MAX_ADS = 10;
const MAX_URLS_PER_EVENT = 10;

/** What a sum of ad durations may exceed the break by: the millisecond rounding of VAST durations and break lengths. */
const FIT_TOLERANCE_SEC = 0.05;

/**
 * Only what the break can show (issue 30.5): in the decided order, each ad that still fits in what
 * is left of the break (an ad that would overrun it is skipped, and a shorter one after it may
 * still fit), at most 10, a few URLs per tracking event. The ads never sum to more than the break;
 * a shortfall is left to the composition, which loops the decided ads over the rest of the break
 * (plan.ts placeOnTimeline), firing no tracking for the repeat.
 */
export function fitAds(ads: DecidedAd[], durationSec: number): DecidedAd[] {
  const out: DecidedAd[] = [];
  let filled = 0;
  for (const ad of ads) {
    if (filled >= durationSec - 1e-6 || out.length >= MAX_ADS) break;
    if (!(ad.durationSec > 0) || filled + ad.durationSec > durationSec + FIT_TOLERANCE_SEC) continue;
    const tracking: DecidedAd['tracking'] = {};
    for (const [event, urls] of Object.entries(ad.tracking))
      tracking[event as keyof DecidedAd['tracking']] = urls.slice(0, MAX_URLS_PER_EVENT);
    out.push({ ...ad, tracking });
    filled += ad.durationSec;
  }
  return out;
}

export class AdDecider {
  constructor(private readonly deps: DeciderDeps) {}

  /** Curated ads honour the break's abid; the fallback fills from any non-curated ad of the geo. */
  private configured(input: DecideInput, ads: CuratedCandidate[], curated: boolean): DecidedAd[] {
    const all = ads.filter((a) => a.is_curated === curated);
    return chooseConfiguredAds(all, {
      abid: curated ? input.abid : undefined,
      geo: input.geo,
      durationSec: input.durationSec,
    }).map(configuredToDecided);
  }

  /**
   * The slot ad unit of the ad request: the `slau` of the configured ad for the break's abid (and
   * geo); without an abid, the first configured ad of the geo that has one.
   */
  private slau(input: DecideInput, ads: CuratedCandidate[]): string | undefined {
    const geoOk = (a: CuratedCandidate) =>
      input.geo === undefined || a.geo_lang_loc === null || a.geo_lang_loc === input.geo;
    return (
      ads.find((a) => a.slau && geoOk(a) && (input.abid === undefined || a.abid === input.abid))?.slau ?? undefined
    );
  }

  private async ask(
    input: DecideInput,
    slau: string | undefined,
    s?: StreamTargeting,
  ): Promise<{ ads: DecidedAd[]; reason?: string | undefined }> {
    const ctx: AdRequestContext = {
      ...input.adRequest,
      breakId: input.breakId,
      durationSec: input.durationSec,
      targeting: s?.targeting ?? {},
    };
    if (slau) ctx.slau = slau;
    if (s?.vprn) ctx.vprn = s.vprn;
    if (s?.pvrn) ctx.pvrn = s.pvrn;
    if (s?.clientIp) ctx.clientIp = s.clientIp;
    if (input.abid) ctx.abid = input.abid;
    const url = buildAdRequestUrl(ctx);
    if (!url) return { ads: [], reason: 'no ad server configured' };
    try {
      const r = await this.deps.resolve(url, { abid: input.abid });
      const allowed = this.deps.creativeAllowed;
      const ads = allowed
        ? (await Promise.all(r.ads.map(async (ad) => ((await allowed(ad.uri)) ? ad : undefined)))).filter(
            (ad): ad is DecidedAd => ad !== undefined,
          )
        : r.ads;
      const refused = r.ads.length - ads.length;
      const fitted = fitAds(ads, input.durationSec);
      return {
        ads: fitted,
        reason: refused && !fitted.length ? `${refused} creative(s) on private or unusable hosts refused` : r.reason,
      };
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'ad request failed');
      return { ads: [], reason: 'ad request failed' };
    }
  }

  /** One decision for the whole event (POST): curated, else the ad server, else the fallback. */
  async forEvent(input: DecideInput): Promise<Decision> {
    const configured = await this.deps.configuredAds(input.eventId);
    const curated = this.configured(input, configured, true);
    if (curated.length) return this.single('curated', curated, undefined);
    const asked = await this.ask(input, this.slau(input, configured));
    if (asked.ads.length) return this.single('vmap', asked.ads, asked.reason);
    return this.fallback(input, configured, asked.reason ?? 'the ad server returned no ads');
  }

  /**
   * Per-stream decisions from each stream's targeting (PUT on DAI streams). Every assignment is
   * named per stream: a PUT squeezes the streams it chose and no other stream of the event.
   */
  async forStreams(input: DecideInput, allStreams: StreamTargeting[]): Promise<Decision> {
    const configured = await this.deps.configuredAds(input.eventId);
    const curated = this.configured(input, configured, true);
    const slau = this.slau(input, configured);
    if (!allStreams.length || input.geo !== undefined || !allStreams.some((s) => s.targeting[GEO_KEY])) {
      if (curated.length) {
        const a = assignment('curated', curated);
        return {
          assignments: [a],
          defaultKey: undefined,
          streamAssignments: Object.fromEntries(allStreams.map((s) => [s.streamId, a.key])),
          streamTracking: {},
          source: 'curated',
          reason: allStreams.length ? undefined : 'the event has no live streams',
        };
      }
    }
    // Without a geo on the break, a stream's own geo_lang_loc picks its curated ads; the others ask the ad server.
    const curatedByGeo = new Map<string, Assignment | undefined>();
    const curatedFor = (s: StreamTargeting): Assignment | undefined => {
      const geo = input.geo ?? s.targeting[GEO_KEY] ?? '';
      if (!curatedByGeo.has(geo)) {
        const ads = this.configured({ ...input, geo: geo || undefined }, configured, true);
        curatedByGeo.set(geo, ads.length ? assignment('curated', ads) : undefined);
      }
      return curatedByGeo.get(geo);
    };
    const curatedAssignments: Record<string, string> = {};
    const byKey = new Map<string, Assignment>();
    const streams: StreamTargeting[] = [];
    for (const s of allStreams) {
      const a = curatedFor(s);
      if (!a) streams.push(s);
      else {
        byKey.set(a.key, a);
        curatedAssignments[s.streamId] = a.key;
      }
    }
    if (allStreams.length && !streams.length)
      return {
        assignments: [...byKey.values()],
        defaultKey: undefined,
        streamAssignments: curatedAssignments,
        streamTracking: {},
        source: 'curated',
        reason: undefined,
      };
    const results = new Map<string, { ads: DecidedAd[]; reason?: string | undefined }>();
    // One timer for the whole batch; requests still running at the deadline are left to finish unseen.
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>(
      (resolve) => (timer = setTimeout(() => ((expired = true), resolve(undefined)), this.deps.deadlineMs ?? 10_000)),
    );
    let next = 0;
    const worker = async () => {
      while (next < streams.length && !expired) {
        const s = streams[next++]!;
        const r = await Promise.race([this.ask(input, slau, s), deadline]);
        if (r) results.set(s.streamId, r);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.concurrency ?? 16, streams.length) }, worker));
    clearTimeout(timer);

    const streamAssignments: Record<string, string> = { ...curatedAssignments };
    const streamTracking: Record<string, Array<DecidedAd['tracking']>> = {};
    const reasons = new Set<string>();
    for (const s of streams) {
      const r = results.get(s.streamId);
      if (!r) reasons.add('some ad requests missed the deadline');
      else if (!r.ads.length) reasons.add(r.reason ?? 'the ad server returned no ads');
      if (!r?.ads.length) continue;
      // The creatives are shared (composed once); the tracking stays the stream's own.
      const a = assignment(
        'vmap',
        r.ads.map((ad) => ({ ...ad, tracking: {} })),
      );
      byKey.set(a.key, a);
      streamAssignments[s.streamId] = a.key;
      streamTracking[s.streamId] = r.ads.map((ad) => ad.tracking);
    }
    const undecided = allStreams.length - Object.keys(streamAssignments).length;
    const reason = reasons.size ? [...reasons].join('; ') : undefined;
    if (undecided === 0 && byKey.size)
      return {
        assignments: [...byKey.values()],
        defaultKey: undefined,
        streamAssignments,
        streamTracking,
        source: 'vmap',
        reason,
      };
    // Streams without a decision in time get the configured fallback (or no squeeze).
    const fallbackAds = this.configured(input, configured, false);
    const fb = fallbackAds.length ? assignment('fallback', fallbackAds) : undefined;
    if (fb) {
      byKey.set(fb.key, fb);
      for (const s of streams) streamAssignments[s.streamId] ??= fb.key;
    }
    const source = byKey.size === 0 ? 'none' : Object.keys(streamTracking).length ? 'vmap' : 'fallback';
    const why = `${undecided} of ${streams.length} streams without an ad decision (${reason ?? 'no streams'})${fb ? '; configured fallback used' : '; no fallback configured'}`;
    return {
      assignments: [...byKey.values()],
      defaultKey: undefined,
      streamAssignments,
      streamTracking,
      source,
      reason: why,
    };
  }

  private single(source: Assignment['source'], ads: DecidedAd[], reason: string | undefined): Decision {
    const a = assignment(source, ads);
    return { assignments: [a], defaultKey: a.key, streamAssignments: {}, streamTracking: {}, source, reason };
  }

  private fallback(input: DecideInput, configured: CuratedCandidate[], why: string): Decision {
    const ads = this.configured(input, configured, false);
    if (!ads.length)
      return {
        assignments: [],
        defaultKey: undefined,
        streamAssignments: {},
        streamTracking: {},
        source: 'none',
        reason: `${why}; no fallback ads configured`,
      };
    return { ...this.single('fallback', ads, undefined), reason: `${why}; configured fallback used` };
  }
}
