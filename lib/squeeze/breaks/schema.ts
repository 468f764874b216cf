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
  properties: { ...common, stream_ids: { type: 'array', minItems: 1, maxItems: 10000, uniqueItems: true, items: text(256) } },
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
