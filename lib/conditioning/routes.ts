/** `GET /api/v1/ad-creatives`: the conditioned creatives with their state, profile and renditions (operators). */
import type { Route } from '../http/router.js';
import { validationFailed } from '../http/problem.js';
import type { ConditioningService } from './service.js';

const STATES = ['pending', 'ready', 'failed'] as const;

export const adCreativesQuery = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: [...STATES] },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
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

/** The answer's shape (OpenAPI): one item per (creative, ladder profile). */
export const adCreativesResponse = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: [
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
      },
    },
  },
};

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
        const limitText = req.query.get('limit') ?? '100';
        const limit = Number(limitText);
        const errors = [];
        if (state !== undefined && !(STATES as readonly string[]).includes(state))
          errors.push({ path: '/state', message: `must be one of ${STATES.join(', ')}` });
        if (!/^[0-9]{1,3}$/.test(limitText) || limit < 1 || limit > 500)
          errors.push({ path: '/limit', message: 'must be an integer from 1 to 500' });
        for (const k of req.query.keys())
          if (k !== 'state' && k !== 'limit') errors.push({ path: `/${k}`, message: 'unknown query parameter' });
        if (errors.length) throw validationFailed(errors);
        return { json: { items: await service.list(limit, state as (typeof STATES)[number] | undefined) } };
      },
    },
  ];
}
