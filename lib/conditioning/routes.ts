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

export function conditioningRoutes(service: ConditioningService): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/api/v1/ad-creatives',
      summary: 'Ad creatives conditioned to content ladders (issue 26): state (pending, ready, failed), ladder profile, renditions, failures and back-off; newest first',
      schema: { query: adCreativesQuery },
      handler: async (req) => {
        const state = req.query.get('state') ?? undefined;
        const limitText = req.query.get('limit') ?? '100';
        const limit = Number(limitText);
        const errors = [];
        if (state !== undefined && !(STATES as readonly string[]).includes(state)) errors.push({ path: '/state', message: `must be one of ${STATES.join(', ')}` });
        if (!/^[0-9]{1,3}$/.test(limitText) || limit < 1 || limit > 500) errors.push({ path: '/limit', message: 'must be an integer from 1 to 500' });
        for (const k of req.query.keys()) if (k !== 'state' && k !== 'limit') errors.push({ path: `/${k}`, message: 'unknown query parameter' });
        if (errors.length) throw validationFailed(errors);
        return { json: { items: await service.list(limit, state as (typeof STATES)[number] | undefined) } };
      },
    },
  ];
}
