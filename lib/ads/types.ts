/**
 * What ad decisioning hands to the break: linear creatives the transcoder can place in the ad box,
 * with the tracking a player (or, for DAI streams, the service) must fire. Shared by the VAST/VMAP
 * parsers, the curated-ad path and the VAST writer.
 */
export type TrackingEvent = 'impression' | 'start' | 'firstQuartile' | 'midpoint' | 'thirdQuartile' | 'complete';

export const TRACKING_EVENTS: readonly TrackingEvent[] = [
  'impression',
  'start',
  'firstQuartile',
  'midpoint',
  'thirdQuartile',
  'complete',
];

export interface DecidedAd {
  /** Ad id from VAST `<Ad id>` or the configured ad's id. */
  adId: string;
  /** Creative id when VAST gives one. */
  creativeId?: string;
  /** The creative's registered id (VAST 4 `<UniversalAdId>`, "unknown" left out) when VAST gives one. */
  universalAdId?: { idRegistry: string; idValue: string };
  adSystem?: string;
  title?: string;
  /** The progressive MP4 media file the transcoder composes from. */
  uri: string;
  durationSec: number;
  /** Impression URLs and tracking URLs by event, wrapper URLs merged in (VAST 4.1 §2.4.3.4). */
  tracking: Partial<Record<TrackingEvent, string[]>>;
  clickThrough?: string;
  /** The chosen media file's size and bitrate (kbit/s) when VAST gives them; written back by the VAST writer. */
  width?: number;
  height?: number;
  bitrate?: number;
  /** Streaming renditions (`application/x-mpegURL`, `application/dash+xml`) when resolved with `streaming: true` (server-side stitching). */
  streams?: { hls?: string; dash?: string };
  /** Not an ad: the brand's slate filling a squeeze break's shortfall (issue 30.5); no VAST, no tracking. */
  slate?: true;
  /** The VMAP break the ad came from (its position in the document, `timeOffset`, `breakId`); absent for a plain VAST answer. */
  adBreak?: { index: number; timeOffset: string; breakId?: string };
}

export interface AdDecision {
  ads: DecidedAd[];
  source: 'curated' | 'vmap' | 'fallback' | 'none';
  /** Why the decision is what it is (ad server failure, no curated match, …), for the break status. */
  reason?: string;
}
