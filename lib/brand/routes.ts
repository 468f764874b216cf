/** Brand-recognition management endpoints (spec "Brand recognition"; docs/design.md §3). */
import type { Route } from '../http/router.js';
import { notFound } from '../http/problem.js';
import { bodyValidator, idParam, queryValidator } from '../http/validate.js';
import { brandListQuery, brandRule, brandRuleInput, resolveInput } from './schema.js';
import type { BrandRepo, BrandRuleInput } from './repo.js';
import type { BrandCache } from './cache.js';
import type { MatchInput } from './matcher.js';

const BASE = '/api/v1/brand-recognition';

export function brandRoutes(repo: BrandRepo, cache: BrandCache): Route[] {
  const validateInput = bodyValidator<BrandRuleInput>(brandRuleInput);
  const validateQuery = queryValidator<{ name_prefix?: string; page: number; page_size: number }>(brandListQuery);
  const validateResolve = bodyValidator<MatchInput>(resolveInput);
  const arrayOfRules = { type: 'array', items: brandRule };
  return [
    {
      method: 'POST',
      pattern: BASE,
      body: 'json',
      summary: 'Create a brand-recognition rule',
      errors: [409],
      schema: {
        body: brandRuleInput,
        response: brandRule,
        status: 201,
        responseHeaders: { Location: { required: true, schema: { type: 'string' } } },
      },
      handler: async (_req, body) => {
        const rule = await repo.create(validateInput(body));
        await cache.changed();
        return { status: 201, json: rule, headers: { Location: `${BASE}/${rule.id}` } };
      },
    },
    {
      method: 'GET',
      pattern: BASE,
      summary: 'List brand-recognition rules (bare array; X-Total-Count has the total)',
      schema: {
        query: brandListQuery,
        response: arrayOfRules,
        responseHeaders: {
          'X-Total-Count': { required: true, description: 'the number of matching rules', schema: { type: 'string' } },
        },
      },
      handler: async (req) => {
        const q = validateQuery(req.query);
        const opts: { namePrefix?: string; page: number; pageSize: number } = { page: q.page, pageSize: q.page_size };
        if (q.name_prefix) opts.namePrefix = q.name_prefix;
        const { rows, total } = await repo.list(opts);
        return { json: rows, headers: { 'X-Total-Count': String(total) } };
      },
    },
    {
      method: 'GET',
      pattern: `${BASE}/:id`,
      summary: 'Show one brand-recognition rule',
      schema: { response: brandRule },
      handler: async (req) => ({ json: await repo.get(idParam(req.params['id'])) }),
    },
    {
      method: 'PUT',
      pattern: `${BASE}/:id`,
      body: 'json',
      summary: 'Replace a brand-recognition rule',
      errors: [409],
      schema: { body: brandRuleInput, response: brandRule },
      handler: async (req, body) => {
        const id = idParam(req.params['id']);
        const input = validateInput(body);
        const rule = await repo.update(id, input);
        await cache.changed();
        return { json: rule };
      },
    },
    {
      method: 'DELETE',
      pattern: `${BASE}/:id`,
      summary: 'Delete a brand-recognition rule; answers the deleted rule',
      schema: { response: brandRule },
      handler: async (req) => {
        const rule = await repo.remove(idParam(req.params['id']));
        await cache.changed();
        return { json: rule };
      },
    },
    {
      method: 'POST',
      pattern: `${BASE}/resolve`,
      body: 'json',
      summary: 'Resolve a request (headers, query, hostname) to the winning rule, or 404',
      errors: [404],
      schema: { body: resolveInput, response: brandRule },
      handler: async (_req, body) => {
        const rule = cache.current.resolve(validateResolve(body));
        if (!rule) throw notFound('no brand-recognition rule matches');
        return { json: rule };
      },
    },
  ];
}
