/** Catalog push (`POST /mrssfeed/{brand_name}`), brand push tokens, and the catalog read API (spec "Catalog push"; issue 6). */
import type { Route } from '../http/router.js';
import { badRequest, unauthorized } from '../http/problem.js';
import { bodyValidator, queryValidator } from '../http/validate.js';
import { listOf } from '../http/envelope.js';
import { MrssError, parseMrss } from './mrss.js';
import type { CatalogRepo } from './repo.js';

export const PUSH_LIMIT_BYTES = 20 * 1024 * 1024;
const XML_TYPES = ['application/xml', 'text/xml', 'application/rss+xml', 'application/atom+xml'];
const TOKEN_HEADER = 'x-service-mrss-token';

const tokenInput = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    mrss_token: {
      type: 'string',
      minLength: 24,
      maxLength: 512,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'the catalog push token (X-Service-Mrss-Token)',
    },
    jwt_key: {
      type: 'string',
      minLength: 32,
      maxLength: 512,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'the HS256 key of player tokens on /squeezeback manifests',
    },
  },
} as const;

const catalogQuery = {
  type: 'object',
  properties: {
    brand_name: { type: 'string', minLength: 1, maxLength: 256 },
    q: { type: 'string', maxLength: 256 },
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;

function brandName(raw: string | undefined): string {
  if (!raw || raw.length > 256 || [...raw].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127) || !raw.trim())
    throw badRequest('invalid brand name');
  return raw;
}

/** An item as answered; its nested fields are JSON (issue 25). */
const catalogItem = {
  type: 'object',
  required: ['id', 'brand_name', 'guid', 'renditions', 'thumbnails', 'cue_points', 'extras'],
  properties: {
    id: {
      type: 'string',
      description: 'The guid: unique within the brand (the path is /api/v1/catalog/{brand_name}/{guid})',
    },
    brand_name: { type: 'string' },
    guid: { type: 'string' },
    content_id: { type: ['string', 'null'] },
    title: { type: ['string', 'null'] },
    description: { type: ['string', 'null'] },
    published_at: { type: ['string', 'null'] },
    duration: { type: ['number', 'null'] },
    renditions: { type: 'array', items: { type: 'object' } },
    thumbnails: { type: 'array', items: { type: 'string' } },
    cue_points: { type: 'array', items: { type: 'number' } },
    extras: { type: 'object' },
    content_hash: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

const pushAnswer = {
  type: 'object',
  required: ['brand_name', 'items_received', 'inserted', 'updated', 'unchanged'],
  properties: {
    brand_name: { type: 'string' },
    items_received: { type: 'integer' },
    skipped: {},
    inserted: { type: 'integer' },
    updated: { type: 'integer' },
    unchanged: { type: 'integer' },
  },
} as const;

const badToken = () => unauthorized('missing or invalid X-Service-Mrss-Token', 'X-Service-Mrss-Token');

/** `onJwtKeyChanged`: a brand's player-token key was set (the player flow's key cache reloads). */
export function catalogRoutes(
  repo: CatalogRepo,
  onJwtKeyChanged: () => Promise<void> = async () => undefined,
): Route[] {
  const validateToken = bodyValidator<{ mrss_token?: string; jwt_key?: string }>(tokenInput);
  const validateQuery = queryValidator<{ brand_name?: string; q?: string; page: number; page_size: number }>(
    catalogQuery,
  );
  return [
    {
      method: 'POST',
      pattern: '/mrssfeed/:brand_name',
      public: true,
      // Checked by the router on the headers, before a byte of the (up to 20 MiB) body is read.
      credential: {
        header: 'X-Service-Mrss-Token',
        check: async (req) => {
          const brand = brandName(req.params['brand_name']);
          const token = req.headers[TOKEN_HEADER];
          if (!token || token.length > 512 || !(await repo.tokenMatches(brand, token))) throw badToken();
          return brand;
        },
      },
      body: 'raw',
      contentTypes: XML_TYPES,
      maxBody: PUSH_LIMIT_BYTES,
      summary: 'Push a Media RSS feed for a brand (header X-Service-Mrss-Token); answers after the upsert committed',
      security: [{ mrssToken: [] }],
      errors: [401],
      schema: {
        headers: [
          {
            name: 'X-Service-Mrss-Token',
            in: 'header',
            required: true,
            description: "the brand's push token (PUT /api/v1/brand-tokens/{brand_name})",
            schema: { type: 'string' },
          },
        ],
        response: pushAnswer,
      },
      handler: async (req, body) => {
        const brand = req.principal as string;
        let parsed;
        try {
          parsed = parseMrss((body as Buffer).toString('utf8'));
        } catch (err) {
          if (err instanceof MrssError) throw badRequest(`the feed was not accepted: ${err.message}`);
          throw err;
        }
        const counts = await repo.upsert(brand, parsed.items);
        return { json: { brand_name: brand, items_received: parsed.items.length, skipped: parsed.skipped, ...counts } };
      },
    },
    {
      method: 'PUT',
      pattern: '/api/v1/brand-tokens/:brand_name',
      body: 'json',
      summary:
        "Set or rotate a brand's MRSS push token and/or player-token key (jwt_key); write-only: no endpoint returns them",
      schema: { body: tokenInput, status: 204 },
      handler: async (req, body) => {
        const tokens = validateToken(body);
        await repo.setTokens(brandName(req.params['brand_name']), tokens);
        if (tokens.jwt_key !== undefined) await onJwtKeyChanged();
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      pattern: '/api/v1/catalog',
      summary: 'Catalog items, newest first: {results, total_results}; q searches titles',
      schema: { query: catalogQuery, response: listOf(catalogItem) },
      handler: async (req) => ({ json: await repo.list(validateQuery(req.query)) }),
    },
    {
      method: 'GET',
      pattern: '/api/v1/catalog/:brand_name/:guid',
      summary: 'One catalog item (the media record stitching looks up)',
      schema: { response: catalogItem },
      handler: async (req) => ({ json: await repo.get(brandName(req.params['brand_name']), req.params['guid']!) }),
    },
  ];
}
