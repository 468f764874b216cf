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
