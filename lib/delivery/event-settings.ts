/**
 * What the manifest proxy needs to know about an event, read from memory on the hot path. The
 * squeeze event configuration (docs/design.md §3: `windows_segs`, `live_edge_delay_segments`,
 * `content_origin`) fills it (lib/squeeze/config/event-cache.ts); an event that is not configured gets
 * the defaults: no trimming, no delay, the configured CONTENT_ORIGIN.
 */
export interface EventSettings {
  eventId?: number;
  windowSegs: number;
  liveEdgeDelaySegments: number;
  contentOrigin?: string;
  /** The squeezeback player flow: the event's own asset id, its source playlist and its stream cap (0 = none). */
  assetId?: string;
  sourceUri?: string;
  maxConcurrentStreams?: number;
}

export interface EventSettingsSource {
  /** Settings for a URL asset key; must answer from memory. */
  forAssetKey(assetKey: string | undefined): EventSettings;
  /** Bumped whenever any event's settings change, so cached renderings are not reused. */
  readonly generation: number;
}

export const DEFAULT_EVENT_SETTINGS: EventSettings = Object.freeze({ windowSegs: 0, liveEdgeDelaySegments: 0 });
