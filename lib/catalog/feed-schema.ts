/**
 * The feed configuration's JSON schemas (spec "Feed Configuration (catalog pull)"): flat, or
 * wrapped as `{name, jsonb_value}`.
 */
const paginationParams = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      anyOf: [
        { type: 'integer', minimum: 1, maximum: 10000 },
        { type: 'string', minLength: 1, maxLength: 64 },
      ],
    },
    limit_param: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.\\-\\[\\]]+$' },
    offset_base: { type: 'integer', minimum: 0, maximum: 1000000000 },
    offset_multiplier: { type: 'integer', minimum: 0, maximum: 1000000 },
    offset_param: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.\\-\\[\\]]+$' },
    stop_when_caughtup: { type: 'boolean' },
    update_offset_base: { type: 'boolean' },
    next_from_feed: { type: 'string', maxLength: 4096 },
  },
} as const;

export const feedConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['brand_name', 'feed_name', 'feed_uri', 'pagination_params'],
  properties: {
    ID: { type: 'integer', description: 'ignored: server-generated' },
    id: { type: 'integer', description: 'ignored: server-generated' },
    brand_name: { type: 'string', minLength: 1, maxLength: 256 },
    feed_name: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9._~:-]+$' },
    feed_uri: { type: 'string', maxLength: 4096, pattern: '^https?://[^\\s/?#@]+(?:[/?#][^\\s]*)?$' },
    pagination_supported: { type: 'boolean', default: false },
    pull_frequency_sec: { type: 'integer', minimum: 0, maximum: 604800, default: 0 },
    pagination_params: paginationParams,
  },
} as const;

export const wrappedFeedConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'jsonb_value'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, jsonb_value: { type: 'object' } },
} as const;

export type FeedConfig = Record<string, unknown> & { brand_name: string; feed_name: string; feed_uri: string };

/** A POST or PUT body as OpenAPI describes it: flat, or wrapped (the wrapper's `name` is kept as `name`). */
export const feedConfigInput = { anyOf: [feedConfigSchema, wrappedFeedConfigSchema] } as const;

const { ID: _spellingOfId, ...answerFields } = feedConfigSchema.properties;

/** A feed configuration as answered: `id` (the spec's `ID`), the flat fields, and `name` when it was posted wrapped under another name. */
export const feedConfigAnswer = {
  type: 'object',
  required: [
    'id',
    'brand_name',
    'feed_name',
    'feed_uri',
    'pagination_supported',
    'pull_frequency_sec',
    'pagination_params',
  ],
  properties: {
    ...answerFields,
    id: { type: 'integer', description: 'server-generated (the spec writes ID)' },
    name: {
      type: 'string',
      description: 'the name of the {name, jsonb_value} wrapper it was posted in, when that differs from feed_name',
    },
  },
} as const;

/** The state of a feed's pulls (GET …/{name}). */
export const feedStatusAnswer = {
  type: ['object', 'null'],
  properties: {
    state: { type: 'string', enum: ['idle', 'running'] },
    mode: { type: ['string', 'null'] },
    pages: { type: ['integer', 'null'] },
    inserted: { type: ['integer', 'null'] },
    updated: { type: ['integer', 'null'] },
    unchanged: { type: ['integer', 'null'] },
    page_index: { type: ['integer', 'null'] },
    cursor: { type: ['string', 'null'] },
    started_at: { type: ['string', 'null'] },
    last_run_at: { type: ['string', 'null'] },
    last_error: { type: ['string', 'null'] },
    next_due_at: { type: ['string', 'null'] },
  },
} as const;
