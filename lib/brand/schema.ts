/** JSON schemas of the brand-recognition resource (docs/design.md §3); ajv validates with them and the OpenAPI document shows them. */
export const headerNamePattern = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

export const brandRuleInput = {
  type: 'object',
  additionalProperties: false,
  required: ['brand_name', 'match_type', 'match_value'],
  properties: {
    id: { type: 'integer', description: 'ignored; the id comes from the path' },
    brand_name: { type: 'string', minLength: 1, maxLength: 256, pattern: '\\S' },
    match_type: { enum: ['header', 'query_param', 'hostname'] },
    match_name: {
      type: 'string',
      maxLength: 256,
      description: 'required for header and query_param; ignored (returned as "") for hostname',
    },
    match_value: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description: 'wildcards: * any run, ? one character',
    },
  },
  allOf: [
    {
      if: { properties: { match_type: { enum: ['header', 'query_param'] } }, required: ['match_type'] },
      then: { required: ['match_name'], properties: { match_name: { minLength: 1 } } },
    },
    {
      if: { properties: { match_type: { const: 'header' } }, required: ['match_type'] },
      then: { properties: { match_name: { pattern: headerNamePattern } } },
    },
  ],
} as const;

export const brandRule = {
  type: 'object',
  required: ['id', 'brand_name', 'match_type', 'match_name', 'match_value'],
  properties: {
    id: { type: 'integer' },
    brand_name: { type: 'string' },
    match_type: { enum: ['header', 'query_param', 'hostname'] },
    match_name: { type: 'string' },
    match_value: { type: 'string' },
  },
} as const;

export const brandListQuery = {
  type: 'object',
  properties: {
    name_prefix: { type: 'string', maxLength: 256 },
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;

export const resolveInput = {
  type: 'object',
  additionalProperties: false,
  properties: {
    headers: {
      type: 'object',
      maxProperties: 200,
      additionalProperties: {
        anyOf: [
          { type: 'string', maxLength: 16384 },
          { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 16384 } },
        ],
      },
    },
    query: {
      anyOf: [
        { type: 'string', maxLength: 16384 },
        {
          type: 'object',
          maxProperties: 200,
          additionalProperties: {
            anyOf: [
              { type: 'string', maxLength: 16384 },
              { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 16384 } },
            ],
          },
        },
      ],
    },
    hostname: { type: 'string', maxLength: 1024 },
  },
} as const;
