/**
 * Pure planning of a squeeze break (docs/design.md §6): the planned segments of a window, where a content
 * segment falls on the ads' timeline (which ad, the offset into it, the animation phase), the
 * tracking points it carries, and the curated-ad choice of the spec's rule 2.
 */
import { createHash } from 'node:crypto';
import type { DecidedAd, TrackingEvent } from '../../ads/types.js';

export interface PlannedSegment {
  index: number;
  startMs: number;
  durationSec: number;
}

/** The segments a window of `durationSec` from `startMs` spans at `segmentSec` each. */
export function planSegments(startMs: number, durationSec: number, segmentSec: number): PlannedSegment[] {
  // In whole milliseconds, so a remainder below 1 ms never makes a zero-length segment.
  const totalMs = Math.round(durationSec * 1000);
  const segMs = Math.max(1, Math.round(segmentSec * 1000));
  // A break terminated before it began plans nothing.
  if (totalMs <= 0) return [];
  const count = Math.ceil(totalMs / segMs);
  return Array.from({ length: count }, (_, i) => ({
    index: i,
    startMs: startMs + i * segMs,
    durationSec: Math.min(segMs, totalMs - i * segMs) / 1000,
  }));
}

/**
 * The span a break of `durationSec` actually squeezes: every content segment whose start falls in
 * the window is replaced whole, so the span is whole segments (issue 25: `CUE-OUT:30` was
 * advertised while 8 × 4 s = 32 s were squeezed, and the last planned segment said 2 s while its
 * transcoder job said 4 s). The break's end and duration are this span, in milliseconds.
 */
export function squeezedSpanSec(durationSec: number, segmentSec: number): number {
  if (!(segmentSec > 0)) return durationSec;
  return Math.round(Math.ceil(durationSec / segmentSec - 1e-6) * segmentSec * 1000) / 1000;
}

export interface TrackingPoint {
  ad: number;
  event: TrackingEvent;
}

export interface Placement {
  adIndex: number;
  adOffsetSec: number;
  /** Tracking points whose time falls inside this segment: impression and start at an ad's first, quartiles, complete at its last. */
  events: TrackingPoint[];
}

const QUARTILES: Array<[TrackingEvent, number]> = [
  ['impression', 0],
  ['start', 0],
  ['firstQuartile', 0.25],
  ['midpoint', 0.5],
  ['thirdQuartile', 0.75],
];

/**
 * Places a segment that starts `offsetSec` into the break on the ads played back to back. Past the
 * end of the pod the ads loop, so a break longer than its ads still shows an ad in the box.
 */
export function placeOnTimeline(
  ads: Array<Pick<DecidedAd, 'durationSec'>>,
  offsetSec: number,
  segmentSec: number,
): Placement {
  const total = ads.reduce((s, a) => s + a.durationSec, 0);
  if (!ads.length || total <= 0) return { adIndex: 0, adOffsetSec: 0, events: [] };
  const firstPass = offsetSec < total - 1e-6;
  const t = firstPass ? offsetSec : offsetSec % total;
  let start = 0;
  let adIndex = 0;
  while (adIndex < ads.length - 1 && t >= start + ads[adIndex]!.durationSec - 1e-6)
    start += ads[adIndex++]!.durationSec;
  const events: TrackingPoint[] = [];
  if (firstPass) {
    // Only the first pass fires: a looped ad is not a second impression.
    const segEnd = offsetSec + segmentSec;
    let s = 0;
    ads.forEach((ad, i) => {
      const points: Array<[TrackingEvent, number]> = [
        ...QUARTILES.map(([e, f]): [TrackingEvent, number] => [e, s + f * ad.durationSec]),
        ['complete', s + ad.durationSec - 1e-3],
      ];
      for (const [event, at] of points) if (at >= offsetSec - 1e-6 && at < segEnd - 1e-6) events.push({ ad: i, event });
      s += ad.durationSec;
    });
  }
  return { adIndex, adOffsetSec: +(t - start).toFixed(3), events };
}

export function animationPhase(offsetSec: number, segmentSec: number, breakSec: number): 'in' | 'hold' | 'out' {
  if (offsetSec < 1e-6) return 'in';
  return offsetSec + segmentSec >= breakSec - 1e-6 ? 'out' : 'hold';
}

/** Streams given the same creatives share one assignment, so each output is composed once. */
export function assignmentKey(ads: Array<Pick<DecidedAd, 'uri' | 'durationSec'>>): string {
  const h = createHash('sha256');
  for (const a of ads) h.update(`${a.uri}\n${a.durationSec}\n`);
  return h.digest('base64url').slice(0, 16);
}

export interface CuratedCandidate {
  id: number;
  abid: string;
  ad_uri: string;
  duration: number;
  geo_lang_loc: string | null;
  is_curated: boolean;
  /** The ad server's slot ad unit for this abid (FreeWheel `slau`), sent with the break's ad request. */
  slau?: string | null;
}

const geoMatches = (adGeo: string | null, wanted: string | undefined) =>
  wanted === undefined || adGeo === null || adGeo === wanted;

/**
 * Spec rule 2: with an `abid` the break uses that ad when its geo matches; without one it fills
 * the break from the matching ads, longest first, until the duration is covered.
 */
export function chooseConfiguredAds(
  ads: CuratedCandidate[],
  want: { abid?: string | undefined; geo?: string | undefined; durationSec: number },
): CuratedCandidate[] {
  const matching = ads.filter((a) => geoMatches(a.geo_lang_loc, want.geo));
  if (want.abid !== undefined) return matching.filter((a) => a.abid === want.abid).slice(0, 1);
  const sorted = [...matching].sort((a, b) => b.duration - a.duration || a.id - b.id);
  const chosen: CuratedCandidate[] = [];
  let filled = 0;
  for (const ad of sorted) {
    if (filled >= want.durationSec - 1e-6) break;
    chosen.push(ad);
    filled += ad.duration;
  }
  return chosen;
}

export function configuredToDecided(ad: CuratedCandidate): DecidedAd {
  return { adId: String(ad.id), creativeId: ad.abid, uri: ad.ad_uri, durationSec: ad.duration, tracking: {} };
}
