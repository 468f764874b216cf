/**
 * `POST /{STITCH_PATH}/{protocol}/stream/{stream_id}/asset/{asset_id}` (spec "Player-facing
 * endpoints"): the brand from the brand-recognition rules applied to this request, then the
 * stitching flow (./service.ts). Authentication of player-facing endpoints is not specified: public.
 * `?interstitials=1` (HLS only) asks for HLS Interstitials: the content untouched, the pods as
 * EXT-X-DATERANGEs with asset lists (./hls/interstitials.ts), cached apart from the inline result.
 */
import type { Route } from '../http/router.js';
import { badRequest, HttpError, notFound } from '../http/problem.js';
import { bodyValidator } from '../http/validate.js';
import type { BrandCache } from '../brand/cache.js';
import type { StitchService, Protocol } from './service.js';

const ID = /^[A-Za-z0-9._:~-]{1,256}$/;
export const STITCH_BODY_LIMIT = 16 * 1024;

const stitchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    targeting: {
      type: 'object',
      maxProperties: 50,
      propertyNames: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    content_uri: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://' },
  },
} as const;

/** One tracking event of an ad: its signed /beacon URLs and when (seconds on the stitched timeline) it fires. */
const trackingOut = {
  type: 'object',
  required: ['event', 'offset', 'urls'],
  properties: {
    event: { type: 'string' },
    offset: { type: 'number' },
    urls: { type: 'array', items: { type: 'string' } },
  },
} as const;
/** A pod as answered (lib/stitch/service.ts `BreakOut`): its place on the stitched and on the content timeline, its ads. */
const breakOut = {
  type: 'object',
  required: ['id', 'type', 'start', 'duration', 'content_offset', 'ads'],
  properties: {
    id: { type: 'string' },
    type: { enum: ['pre', 'mid', 'post'] },
    start: { type: 'number' },
    duration: { type: 'number' },
    content_offset: { type: 'number' },
    ads: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'creative_id', 'sequence', 'start', 'duration', 'tracking'],
        properties: {
          id: { type: 'string' },
          creative_id: { type: ['string', 'null'] },
          sequence: { type: 'integer' },
          start: { type: 'number' },
          duration: { type: 'number' },
          title: { type: 'string' },
          ad_system: { type: 'string' },
          slate: { const: true, description: 'the brand slate filling a short pod (no tracking)' },
          tracking: { type: 'array', items: trackingOut },
        },
      },
    },
  },
} as const;
const stitchAnswer = {
  type: 'object',
  required: ['cache_url', 'breaks'],
  properties: {
    cache_url: { type: 'string' },
    breaks: { type: 'array', items: breakOut },
    warnings: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** For the OpenAPI document; the handler reads the parameter itself (interstitialsParam). */
const stitchQuery = {
  type: 'object',
  properties: {
    interstitials: {
      type: 'string',
      enum: ['1', 'true', '0', 'false'],
      description: 'HLS only: HLS Interstitials (EXT-X-DATERANGE + asset lists) instead of inline stitching',
    },
  },
} as const;

interface StitchBody {
  targeting?: Record<string, string>;
  content_uri?: string;
}

/** `?interstitials=1|true` (or `0|false`, the default): HLS Interstitials instead of inline stitching. */
function interstitialsParam(v: string | null): boolean {
  if (v === null || v === '0' || v === 'false') return false;
  if (v === '1' || v === 'true') return true;
  throw badRequest('interstitials: 1, true, 0 or false');
}

export function stitchRoutes(stitchPath: string, service: StitchService, brands: BrandCache): Route[] {
  const validate = bodyValidator<StitchBody>(stitchBody);
  return [
    {
      method: 'POST',
      rateRule: 'stitch',
      pattern: `/${stitchPath}/:protocol/stream/:stream_id/asset/:asset_id`,
      public: true,
      body: 'json',
      optionalBody: true, // {targeting?, content_uri?}: a POST without a body stitches with none
      maxBody: STITCH_BODY_LIMIT,
      summary:
        'Server-side stitching: stitch ad pods into a VOD asset of the recognised brand (?interstitials=1: HLS Interstitials instead); answers {cache_url, breaks, warnings?}',
      errors: [404, 422, 502, 504],
      schema: { body: stitchBody, query: stitchQuery, response: stitchAnswer },
      handler: async (req, raw) => {
        const protocol = req.params['protocol'];
        if (protocol !== 'hls' && protocol !== 'dash') throw notFound(`protocol must be hls or dash`);
        const streamId = req.params['stream_id']!;
        const assetId = req.params['asset_id']!;
        if (!ID.test(streamId)) throw badRequest('stream_id: 1–256 characters of A-Z a-z 0-9 . _ : ~ -');
        if (!assetId || assetId.length > 512) throw badRequest('asset_id: 1–512 characters');
        const body = raw === undefined ? {} : validate(raw);
        const interstitials = interstitialsParam(req.query.get('interstitials'));
        if (interstitials && protocol !== 'hls')
          throw badRequest('interstitials: HLS Interstitials apply to the hls protocol only');
        const forwarded = req.headers['x-forwarded-host'] ?? req.headers['forwarded'] ?? req.headers['x-forwarded'];
        const rule = brands.current.resolve({
          headers: req.headers,
          query: req.query.toString(),
          ...(forwarded ? {} : { hostname: req.headers['host'] ?? '' }),
        });
        if (!rule) throw new HttpError('bad-request', 'no brand-recognition rule matches this request');
        const answer = await service.stitch({
          protocol: protocol as Protocol,
          brand: rule.brand_name,
          streamId,
          assetId,
          targeting: body.targeting ?? {},
          ...(body.content_uri ? { contentUri: body.content_uri } : {}),
          ...(interstitials ? { interstitials } : {}),
        });
        return { json: answer, headers: { 'Cache-Control': 'no-store' } };
      },
    },
  ];
}
