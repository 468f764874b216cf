/** `/api/v1/squeeze-configured-ad`: PUT creates, GET lists, POST updates by id, DELETE removes by id (spec, docs/design.md §3). */
import { listOf } from '../../http/envelope.js';
import type { Route } from '../../http/router.js';
import { bodyValidator, queryValidator } from '../../http/validate.js';
import { adCreateInput, adDeleteInput, adListQuery, adUpdateInput } from './schema.js';
import type { AdFields, ConfiguredAdRepo } from './repo.js';

const PATH = '/api/v1/squeeze-configured-ad';

const nullableText = { type: ['string', 'null'] };
/** A configured ad as answered (`ad_duration` is accepted in and answered as `duration`). */
const configuredAd = {
  type: 'object',
  required: ['id', 'event_id', 'abid', 'ad_uri', 'duration', 'is_curated'],
  properties: {
    id: { type: 'integer' },
    event_id: { type: 'integer' },
    abid: { type: 'string' },
    ad_uri: { type: 'string' },
    duration: { type: 'number' },
    aiid: nullableText,
    slau: nullableText,
    geo_lang_loc: nullableText,
    is_curated: { type: 'boolean' },
    layout: nullableText,
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
};

export function configuredAdRoutes(repo: ConfiguredAdRepo): Route[] {
  const validateCreate = bodyValidator<AdFields>(adCreateInput);
  const validateUpdate = bodyValidator<AdFields & { id: number }>(adUpdateInput);
  const validateDelete = bodyValidator<{ id: number }>(adDeleteInput);
  const validateList = queryValidator<Parameters<ConfiguredAdRepo['list']>[0]>(adListQuery);
  return [
    {
      method: 'PUT',
      pattern: PATH,
      body: 'json',
      summary: 'Create a configured ad (409 on a duplicate (event_id, abid))',
      errors: [404, 409],
      schema: { body: adCreateInput, response: configuredAd },
      handler: async (_r, body) => ({ json: await repo.create(validateCreate(body)) }),
    },
    {
      method: 'GET',
      pattern: PATH,
      summary: 'List configured ads: {results, total_results}',
      schema: { query: adListQuery, response: listOf(configuredAd) },
      handler: async (req) => ({ json: await repo.list(validateList(req.query)) }),
    },
    {
      method: 'POST',
      pattern: PATH,
      body: 'json',
      summary: 'Update a configured ad by id (ad_duration is accepted for duration)',
      errors: [404, 409],
      schema: { body: adUpdateInput, response: configuredAd },
      handler: async (_r, body) => {
        const { id, ...fields } = validateUpdate(body);
        return { json: await repo.update(id, fields) };
      },
    },
    {
      method: 'DELETE',
      pattern: PATH,
      body: 'json',
      summary: 'Delete a configured ad; body {id}',
      errors: [404],
      schema: { body: adDeleteInput, response: configuredAd },
      handler: async (_r, body) => ({ json: await repo.remove(validateDelete(body).id) }),
    },
  ];
}
