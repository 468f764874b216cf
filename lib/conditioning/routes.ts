/** `GET /api/v1/ad-creatives`: the conditioned creatives with their state, profile and renditions (operators). */
import type { Route } from '../http/router.js';
import { validationFailed } from '../http/problem.js';
import { listOf } from '../http/envelope.js';
import type { ConditioningService } from './service.js';

const STATES = ['pending', 'ready', 'failed'] as const;

export const adCreativesQuery = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: [...STATES] },
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 500,
      deprecated: true,
      description: 'the name this list used before the one list envelope: the same as page_size',
    },
  },
  additionalProperties: false,
};

const rung = {
  type: 'object',
  properties: {
    width: { type: 'integer' },
    height: { type: 'integer' },
    bandwidth: { type: 'integer' },
    codecs: { type: 'string' },
  },
};

/** The answer's shape (OpenAPI): one item per (creative, ladder profile), in the one list envelope. */
export const adCreativesResponse = listOf({
  type: 'object',
  required: [
    'id',
    'key',
    'creative_key',
    'media_url',
    'protocol',
    'state',
    'job_id',
    'attempts',
    'failures',
    'profile',
    'renditions',
    'created',
    'queued',
    'updated',
  ],
  properties: {
    id: { type: 'string', description: 'the same value as key' },
    key: { type: 'string', description: 'SHA-256 of creative key + profile key; the object store folder' },
    creative_key: { type: 'string', description: "SHA-256 of the creative's MP4 URL" },
    media_url: { type: 'string' },
    duration_sec: { type: 'number' },
    protocol: { enum: ['hls', 'dash'] },
    state: { enum: [...STATES] },
    job_id: { type: 'string', description: 'the job the stitch warnings name' },
    attempts: { type: 'integer' },
    failures: { type: 'integer' },
    error: { type: 'string' },
    retry_at: {
      type: 'string',
      format: 'date-time',
      description: 'a failed creative is not queued again before this',
    },
    profile: {
      type: 'object',
      properties: {
        key: { type: 'string' },
        protocol: { enum: ['hls', 'dash'] },
        container: { enum: ['ts', 'fmp4'] },
        video: { enum: ['avc', 'hevc'] },
        fps: { type: 'number' },
        rungs: { type: 'array', items: rung },
        segmentSec: { type: 'number' },
        audio: { type: ['object', 'null'] },
      },
    },
    renditions: {
      type: ['object', 'null'],
      properties: {
        manifest: { type: 'string' },
        files: { type: 'array', items: { type: 'string' } },
        rungs: { type: 'array', items: rung },
        seconds_to_ready: { type: 'number' },
      },
    },
    url: { type: 'string', description: "the renditions' manifest, served by the service" },
    created: { type: 'string', format: 'date-time' },
    queued: { type: 'string', format: 'date-time' },
    updated: { type: 'string', format: 'date-time' },
    ready: { type: 'string', format: 'date-time' },
  },
});

export function conditioningRoutes(service: ConditioningService): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/api/v1/ad-creatives',
      summary:
        'Ad creatives conditioned to content ladders (issue 26): state (pending, ready, failed), ladder profile, renditions, failures and back-off; newest first',
      schema: { query: adCreativesQuery, response: adCreativesResponse },
      handler: async (req) => {
        const state = req.query.get('state') ?? undefined;
        const errors = [];
        /** A non-negative integer of at most `max` (the query is text). */
        const int = (name: string, fallback: number, min: number, max: number) => {
          const text = req.query.get(name);
          if (text === null) return fallback;
          const n = Number(text);
          if (!/^[0-9]{1,7}$/.test(text) || n < min || n > max)
            errors.push({ path: `/${name}`, message: `must be an integer from ${min} to ${max}` });
          return n;
        };
        const page = int('page', 0, 0, 1000000);
        // `limit` is the name this list took before the one envelope (issue 25 item 7); page_size wins.
        const pageSize = int('page_size', int('limit', 50, 1, 500), 1, 500);
        if (state !== undefined && !(STATES as readonly string[]).includes(state))
          errors.push({ path: '/state', message: `must be one of ${STATES.join(', ')}` });
        for (const k of req.query.keys())
          if (!['state', 'page', 'page_size', 'limit'].includes(k))
            errors.push({ path: `/${k}`, message: 'unknown query parameter' });
        if (errors.length) throw validationFailed(errors);
        return { json: await service.list(page, pageSize, state as (typeof STATES)[number] | undefined) };
      },
    },
  ];
}
