/** Squeeze configuration endpoints (spec "Squeeze configuration and ad-break operations", configuration rows). */
import { listOf } from '../../http/envelope.js';
import type { Route } from '../../http/router.js';
import { badRequest, validationFailed } from '../../http/problem.js';
import { bodyValidator, idParam, queryValidator } from '../../http/validate.js';
import { brandConfigInput, eventConfigInput, eventConfigQuery, eventListQuery, SPEC_SPELLINGS } from './schema.js';
import type { BrandConfigInput, EventConfigInput, SqueezeConfigRepo } from './repo.js';
import type { EventConfigCache } from './event-cache.js';

const BRAND = '/api/v1/squeeze-brand-config';
const EVENT = '/api/v1/squeeze-event-config';

/**
 * A validated event body with the spec's spellings (WindowsSegs, LiveEdgeDelaySegments) folded into
 * the snake_case fields; both spellings with different values are a 400, since neither can win.
 */
/** As answered: the brand config with its defaults, `id` = `brand_id`; the event config effective (brand-merged), snake_case. */
const brandConfigAnswer = { type: 'object', required: ['id', 'brand_id'] };
const eventConfigAnswer = {
  type: 'object',
  required: ['id', 'asset_id', 'source_uri', 'windows_segs', 'live_edge_delay_segments'],
};

export function withSnakeCaseSpellings(input: EventConfigInput): EventConfigInput {
  const out: EventConfigInput = { ...input };
  for (const [spec, canonical] of Object.entries(SPEC_SPELLINGS)) {
    if (!(spec in out)) continue;
    if (canonical in out && out[canonical] !== out[spec])
      throw validationFailed([{ path: `/${spec}`, message: `must equal ${canonical} when both are given` }]);
    out[canonical] = out[spec];
    delete out[spec];
  }
  return out;
}

export function squeezeConfigRoutes(repo: SqueezeConfigRepo, events: EventConfigCache): Route[] {
  const validateBrand = bodyValidator<BrandConfigInput>(brandConfigInput);
  const validateEvent = bodyValidator<EventConfigInput>(eventConfigInput);
  const validateEventQuery = queryValidator<{ asset_id: string }>(eventConfigQuery);
  const validateEventList = queryValidator<{ page: number; page_size: number }>(eventListQuery);
  return [
    {
      method: 'PUT',
      pattern: BRAND,
      body: 'json',
      summary: 'Create or replace a squeeze brand config (keyed by brand_id; the answer carries id = brand_id)',
      schema: { body: brandConfigInput, response: brandConfigAnswer },
      handler: async (_req, body) => {
        const input = validateBrand(body);
        if (input['id'] !== undefined && String(input['id']) !== String(input.brand_id))
          throw badRequest('id, when given, must equal brand_id');
        const stored = await repo.upsertBrand(input);
        await events.changed();
        return { json: stored };
      },
    },
    {
      method: 'GET',
      pattern: `${BRAND}/:brand_id`,
      summary: 'Show a squeeze brand config with defaults applied',
      schema: { response: brandConfigAnswer },
      handler: async (req) => ({ json: await repo.getBrand(req.params['brand_id']!) }),
    },
    {
      method: 'PUT',
      pattern: EVENT,
      body: 'json',
      summary: 'Create or replace a squeeze event config (keyed by asset_id); answers the effective config with its id',
      errors: [404, 409],
      schema: { body: eventConfigInput, response: eventConfigAnswer },
      handler: async (_req, body) => {
        const stored = await repo.upsertEvent(withSnakeCaseSpellings(validateEvent(body)));
        await events.changed();
        return { json: stored };
      },
    },
    {
      method: 'GET',
      pattern: EVENT,
      summary: 'The effective (brand-merged) event config for an asset_id',
      errors: [404],
      schema: { query: eventConfigQuery, response: eventConfigAnswer },
      handler: async (req) => ({ json: await repo.getEventByAsset(validateEventQuery(req.query).asset_id) }),
    },
    {
      method: 'GET',
      pattern: '/api/v1/squeeze-events',
      summary: 'List the events with their effective configs, by id: {results, total_results}',
      schema: { query: eventListQuery, response: listOf(eventConfigAnswer) },
      handler: async (req) => {
        const q = validateEventList(req.query);
        return { json: await repo.listEvents(q.page, q.page_size) };
      },
    },
    {
      method: 'GET',
      pattern: `${EVENT}/:id`,
      summary: 'The effective (brand-merged) event config by id',
      schema: { response: eventConfigAnswer },
      handler: async (req) => ({ json: await repo.getEvent(idParam(req.params['id'])) }),
    },
  ];
}
