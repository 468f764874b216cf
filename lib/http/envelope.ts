/**
 * The one list envelope of the management API (issue 25, docs/decisions.md): `{results,
 * total_results}`, `results` one page, `total_results` the count of every match. Pages are
 * `page` (from 0) and `page_size` (default 50, max 500; docs/design.md §3). The one exception is
 * the brand-recognition list, which the spec answers as a bare array (with `X-Total-Count`).
 */
export interface Page<T> {
  results: T[];
  total_results: number;
}

/** The JSON schema of a page of `items` (OpenAPI). */
export function listOf(items: object): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['results', 'total_results'],
    properties: { results: { type: 'array', items }, total_results: { type: 'integer', minimum: 0 } },
  };
}

/** The query of a list without filters. */
export const pageQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;
