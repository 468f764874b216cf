/** Squeeze ad-break requests (spec "Squeeze configuration and ad-break operations"; docs/design.md §3). */
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });

export const MAX_BREAK_SEC = 600;
export const MAX_TOTAL_BREAK_SEC = 3600;

const common = {
  event_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
  asset_id: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9._:~-]+$' },
  break_duration: { type: 'number', exclusiveMinimum: 0, maximum: MAX_BREAK_SEC, description: 'seconds, at most 600' },
  abid: text(128),
  geo_lang_loc: text(128),
  layout: { enum: ['dualbox', 'lbar'] },
};

export const breakInput = {
  type: 'object',
  additionalProperties: false,
  required: ['break_duration'],
  anyOf: [{ required: ['event_id'] }, { required: ['asset_id'] }],
  properties: common,
} as const;

export const daiBreakInput = {
  type: 'object',
  additionalProperties: false,
  required: ['break_duration'],
  anyOf: [{ required: ['event_id'] }, { required: ['asset_id'] }],
  properties: {
    ...common,
    stream_ids: { type: 'array', minItems: 1, maxItems: 10000, uniqueItems: true, items: text(256) },
  },
} as const;

export const extendInput = {
  type: 'object',
  additionalProperties: false,
  required: ['additional_sec'],
  properties: { additional_sec: { type: 'number', exclusiveMinimum: 0, maximum: MAX_BREAK_SEC } },
} as const;

export const breakListQuery = {
  type: 'object',
  required: ['event_id'],
  properties: {
    event_id: common.event_id,
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
  },
} as const;

export interface BreakInput {
  event_id?: number;
  asset_id?: string;
  break_duration: number;
  abid?: string;
  geo_lang_loc?: string;
  layout?: 'dualbox' | 'lbar';
  stream_ids?: string[];
}

/**
 * A break as GET answers it (OpenAPI only: the service writes it). Only the fields with more to
 * say than their name are spelled out; the reach fields are summed over every instance (issue 30.2).
 */
export const breakView = {
  type: 'object',
  properties: {
    break_id: { type: 'string', format: 'uuid' },
    status: { enum: ['scheduled', 'active', 'completed', 'failed'] },
    segments: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          status: { enum: ['pending', 'ready', 'failed'] },
          outputs: { type: 'integer' },
          planned_outputs: { type: 'integer' },
        },
      },
    },
    matched_streams: {
      type: 'integer',
      minimum: 0,
      description:
        "streams whose playlist carried at least one of the break's squeezed segments, on any instance (written behind the stream registry's flush: up to about a second late)",
    },
    unmatched_streams: {
      type: 'integer',
      minimum: 0,
      description:
        'streams served content for break segments whose squeezed outputs were ready but matched no URI of their playlist',
    },
    warnings: {
      type: 'array',
      items: { type: 'string' },
      description:
        "e.g. no viewer playlist matched the break's segments (matched_streams 0 while unmatched_streams > 0, or a completed break no playlist carried), or the event has no live-edge delay (its viewers are listed every break segment before it is composed, and get content)",
    },
  },
} as const;

/** An event's breaks as GET answers them. */
export const breakListView = {
  type: 'object',
  properties: { results: { type: 'array', items: breakView }, total_results: { type: 'integer' } },
} as const;
