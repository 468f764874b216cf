/**
 * The effective configuration of an event, typed: defaults ← brand ← event overrides
 * (./repo.ts `effective`). The shapes follow ./schema.ts, which validates every layer.
 */
/** What fills a squeeze break's shortfall (lib/squeeze/breaks/shortfall.ts). */
export interface SqueezeFill {
  mode: 'loop' | 'slate' | 'content';
  slate_uri?: string;
  slate_duration_sec?: number;
}

export interface Box {
  x: number;
  y: number;
}

export interface Frame {
  enabled: boolean;
  thickness_px: number;
  color: string;
}

/** What a brand sets and an event may override. */
export interface SqueezeSettings {
  sqz_ratios: { content_box: number; ad_box: number };
  positions: { content_box: Box; ad_box: Box };
  animations: { in_sec: number; out_sec: number };
  frames: { content_box: Frame; ad_box: Frame };
  layout: 'dualbox' | 'lbar';
  /** 0 = unlimited. */
  max_concurrent_streams: number;
  ad_tag: { template?: string; params: Record<string, string | number | boolean> };
  background_uri?: string;
  /** Server-side stitching's slate: its MP4 and whether short pods are filled with it (issue 26). */
  stitch_slate?: { uri: string; fill?: boolean };
  /** What fills a squeeze break whose ads are shorter than it (issue 30.5; lib/squeeze/breaks/shortfall.ts); unset: loop. */
  squeeze_fill?: SqueezeFill;
  /** How long a stitch POST waits for its ads' conditioning (issue 26), capped by STITCH_MAX_WAIT_MS; unset: 0. */
  stitch_wait_for_ads_ms?: number;
  /** Seconds between two reads of the source by the cue monitor; unset: the playlist's target duration. */
  manifest_polling?: number;
}

export interface EventConfig extends SqueezeSettings {
  id: number;
  asset_id: string;
  source_uri: string;
  source_dash_uri?: string;
  caid?: string;
  brand_config_id: string | number;
  windows_segs: number;
  live_edge_delay_segments: number;
  content_origin?: string;
  ad_tag_override?: Record<string, unknown>;
  /** What starts breaks: the API only (default), or also the cue monitor reading source_uri's SCTE-35 cues. */
  trigger: 'api' | 'scte35';
}
