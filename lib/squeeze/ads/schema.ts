/** Squeeze configured ads (spec: id, event_id, ad_uri, duration, abid, slau, geo_lang_loc, is_curated; docs/design.md §3). */
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });
const fields = {
  event_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
  ad_uri: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s/?#@]+(?:[/?#][^\\s]*)?$' },
  duration: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
  ad_duration: { type: 'number', exclusiveMinimum: 0, maximum: 3600, description: 'alias of duration' },
  abid: text(128),
  aiid: text(128),
  slau: text(256),
  geo_lang_loc: text(128),
  is_curated: { type: 'boolean' },
  layout: { enum: ['dualbox', 'lbar'] },
};

export const adCreateInput = {
  type: 'object',
  additionalProperties: false,
  required: ['event_id', 'ad_uri', 'abid'],
  anyOf: [{ required: ['duration'] }, { required: ['ad_duration'] }],
  properties: fields,
} as const;

export const adUpdateInput = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2147483647 }, ...fields },
} as const;

export const adDeleteInput = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2147483647 } },
} as const;

export const adListQuery = {
  type: 'object',
  properties: {
    event_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
    abid: { type: 'string', maxLength: 128 },
    geo_lang_loc: { type: 'string', maxLength: 128 },
    is_curated: { type: 'boolean' },
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;
