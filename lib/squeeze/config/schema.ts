/**
 * Squeeze brand and event configuration (spec "SqueezeEventConfig, brand config, configured ad";
 * docs/design.md §3). The spec names the fields; types, bounds and defaults are ours (docs/decisions.md).
 */
const ratio = { type: 'number', minimum: 0.1, maximum: 1 };
const fraction = { type: 'number', minimum: 0, maximum: 1 };
const box = { type: 'object', additionalProperties: false, properties: { x: fraction, y: fraction } };
const frame = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    thickness_px: { type: 'integer', minimum: 0, maximum: 64 },
    // ffmpeg-style colour: a name or hex, with an optional @alpha
    color: {
      type: 'string',
      maxLength: 32,
      pattern: '^(?:[A-Za-z]+|(?:0x|#)?[0-9A-Fa-f]{6}(?:[0-9A-Fa-f]{2})?)(?:@(?:0(?:\\.\\d+)?|1(?:\\.0+)?))?$',
    },
  },
};
const httpUri = { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s/?#@]+(?:[/?#][^\\s]*)?$' };
const id = {
  anyOf: [
    { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' },
    { type: 'integer', minimum: 0, maximum: 2147483647 },
  ],
};

/** Fields a brand sets and an event may override. */
export const brandFields = {
  sqz_ratios: { type: 'object', additionalProperties: false, properties: { content_box: ratio, ad_box: ratio } },
  positions: { type: 'object', additionalProperties: false, properties: { content_box: box, ad_box: box } },
  animations: {
    type: 'object',
    additionalProperties: false,
    properties: {
      in_sec: { type: 'number', minimum: 0, maximum: 10 },
      out_sec: { type: 'number', minimum: 0, maximum: 10 },
    },
  },
  frames: { type: 'object', additionalProperties: false, properties: { content_box: frame, ad_box: frame } },
  layout: { enum: ['dualbox', 'lbar'] },
  max_concurrent_streams: { type: 'integer', minimum: 0, maximum: 1000000 },
  ad_tag: {
    type: 'object',
    additionalProperties: false,
    properties: {
      template: {
        type: 'string',
        maxLength: 4096,
        description: 'ad request URL or query template; {name} placeholders are filled from the stream targeting',
      },
      params: { type: 'object', maxProperties: 100, additionalProperties: { type: ['string', 'number', 'boolean'] } },
    },
  },
  background_uri: httpUri,
  stitch_slate: {
    type: 'object',
    additionalProperties: false,
    required: ['uri'],
    description:
      'server-side stitching: the slate (an MP4, conditioned like any ad) and whether a pod shorter than planned is filled with it (default false: the pod is shortened)',
    properties: { uri: httpUri, fill: { type: 'boolean' } },
  },
  squeeze_fill: {
    type: 'object',
    additionalProperties: false,
    required: ['mode'],
    description:
      'squeeze breaks whose ads sum to less than the break: loop (default) plays the ads again, slate fills the rest with slate_uri (else stitch_slate.uri) in pieces of slate_duration_sec played from the start, content ends the break with its ads',
    properties: {
      mode: { enum: ['loop', 'slate', 'content'] },
      slate_uri: httpUri,
      slate_duration_sec: { type: 'number', minimum: 1, maximum: 600 },
    },
  },
  stitch_wait_for_ads_ms: {
    type: 'integer',
    minimum: 0,
    maximum: 600000,
    description:
      'server-side stitching: how long a stitch POST may wait for its ads (and slate) being conditioned before it stitches what is ready (capped by STITCH_MAX_WAIT_MS; default 0: ads not ready are left out this time)',
  },
  manifest_polling: {
    type: 'number',
    minimum: 0.5,
    maximum: 60,
    description: 'seconds between two reads of the source playlist by the cue monitor (default: its target duration)',
  },
} as const;

export const brandDefaults = {
  sqz_ratios: { content_box: 0.6, ad_box: 0.5 },
  positions: { content_box: { x: 0.02, y: 0.05 }, ad_box: { x: 0.5, y: 0.25 } },
  animations: { in_sec: 2, out_sec: 2 },
  frames: {
    content_box: { enabled: false, thickness_px: 4, color: 'white@0.8' },
    ad_box: { enabled: false, thickness_px: 4, color: 'white@0.8' },
  },
  layout: 'dualbox',
  max_concurrent_streams: 0,
  ad_tag: { params: {} },
};

export const brandConfigInput = {
  type: 'object',
  additionalProperties: false,
  required: ['brand_id'],
  properties: { brand_id: id, id, ...brandFields },
} as const;

const windowsSegs = { type: 'integer', minimum: 0, maximum: 10000 } as const;
const liveEdgeDelaySegments = { type: 'integer', minimum: 0, maximum: 100 } as const;

/** Field names as the spec writes them → the snake_case names stored and answered. */
export const SPEC_SPELLINGS = {
  WindowsSegs: 'windows_segs',
  LiveEdgeDelaySegments: 'live_edge_delay_segments',
} as const;

export const eventConfigInput = {
  type: 'object',
  additionalProperties: false,
  required: ['asset_id', 'source_uri', 'brand_config_id'],
  properties: {
    id: { type: 'integer', description: 'ignored: events are keyed by asset_id' },
    asset_id: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9._:~-]+$' },
    source_uri: httpUri,
    source_dash_uri: httpUri,
    caid: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9._:~-]+$' },
    brand_config_id: id,
    windows_segs: windowsSegs,
    live_edge_delay_segments: liveEdgeDelaySegments,
    // The spec's own spellings, accepted in bodies (routes.ts folds them into the snake_case fields).
    WindowsSegs: windowsSegs,
    LiveEdgeDelaySegments: liveEdgeDelaySegments,
    content_origin: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s/?#@]+(/[^\\s?#]*)?$' },
    ad_tag_override: { type: 'object', maxProperties: 100 },
    trigger: {
      enum: ['api', 'scte35'],
      default: 'api',
      description:
        'scte35: the cue monitor starts and ends breaks from the cues of source_uri (never for DAI streams: spec Limits 4)',
    },
    ...brandFields,
  },
} as const;

export const eventConfigQuery = {
  type: 'object',
  required: ['asset_id'],
  properties: { asset_id: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

export const eventListQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;
