/**
 * The feed configuration API: `/api/v1/global-config` (and `/api/v1/global`, the prose's name),
 * flat or wrapped bodies, validated with the spec's defaults applied, plus on-demand pulls.
 */
import type { Route } from '../http/router.js';
import { conflict, validationFailed } from '../http/problem.js';
import { bodyValidator, queryValidator } from '../http/validate.js';
import { listOf, pageQuery } from '../http/envelope.js';
import {
  feedConfigAnswer,
  feedConfigInput,
  feedConfigSchema,
  feedStatusAnswer,
  wrappedFeedConfigSchema,
  type FeedConfig,
} from './feed-schema.js';
import type { FeedConfigRepo } from './feed-repo.js';

const pullAnswer = {
  type: 'object',
  required: ['feed_name', 'status'],
  properties: { feed_name: { type: 'string' }, status: { const: 'queued' } },
};

export function feedConfigRoutes(repo: FeedConfigRepo, onPullRequested: () => void = () => undefined): Route[] {
  const validateFeed = bodyValidator<FeedConfig>(feedConfigSchema);
  const validateWrapped = bodyValidator<{ name: string; jsonb_value: Record<string, unknown> }>(
    wrappedFeedConfigSchema,
  );
  const validatePage = queryValidator<{ page: number; page_size: number }>(pageQuery);
  /** Flat or `{name, jsonb_value}`; `name` is the feed name. Validated with the spec's defaults applied. */
  const parse = (body: unknown): FeedConfig => {
    let flat = body;
    let wrapperName: string | undefined;
    if (body && typeof body === 'object' && 'jsonb_value' in body) {
      // `name` names the configuration; the feed is jsonb_value.feed_name (the wrapper's name only when it has none).
      const w = validateWrapped(body);
      flat = { feed_name: w.name, ...w.jsonb_value };
      wrapperName = w.name;
    }
    const c = validateFeed(structuredClone(flat));
    delete c['ID'];
    delete c['id'];
    // Kept so that the configuration is reachable by the name it was posted under (feed-repo.ts).
    if (wrapperName !== undefined && wrapperName !== c.feed_name) c['name'] = wrapperName;
    const p = c['pagination_params'] as Record<string, unknown>;
    if (p['offset_param'] && p['limit'] === undefined && p['offset_multiplier'] === undefined) {
      throw validationFailed([
        { path: '/pagination_params', message: 'offset paging needs limit or offset_multiplier' },
      ]);
    }
    p['next_from_feed'] ??= c.feed_uri;
    c['pagination_supported'] ??= false;
    c['pull_frequency_sec'] ??= 0;
    return c;
  };
  const create: Route['handler'] = async (_req, body) => ({ status: 201, json: await repo.create(parse(body)) });
  const routes: Route[] = [];
  for (const base of ['/api/v1/global-config', '/api/v1/global']) {
    routes.push(
      {
        method: 'POST',
        pattern: base,
        body: 'json',
        summary:
          'Create a feed configuration (flat or {name, jsonb_value}; reachable by feed_name and by the wrapper name)',
        errors: [409],
        schema: { body: feedConfigInput, response: feedConfigAnswer, status: 201 },
        handler: create,
      },
      {
        method: 'GET',
        pattern: base,
        summary: 'Feed configurations by id: {results, total_results}',
        schema: { query: pageQuery, response: listOf(feedConfigAnswer) },
        handler: async (req) => {
          const q = validatePage(req.query);
          return { json: await repo.list(q.page, q.page_size) };
        },
      },
      {
        method: 'GET',
        pattern: `${base}/:name`,
        summary: 'One feed configuration (by feed_name or wrapper name) with the status of its pulls',
        schema: {
          response: { ...feedConfigAnswer, properties: { ...feedConfigAnswer.properties, status: feedStatusAnswer } },
        },
        handler: async (req) => ({
          json: { ...(await repo.get(req.params['name']!)), status: await repo.status(req.params['name']!) },
        }),
      },
      {
        method: 'POST',
        pattern: `${base}/:name/pull`,
        summary: 'Start a pull now (202); 409 while one is in progress',
        errors: [409],
        schema: { status: 202, response: pullAnswer },
        handler: async (req) => {
          if (!(await repo.requestPull(req.params['name']!))) throw conflict('a pull of this feed is in progress');
          onPullRequested();
          return { status: 202, json: { feed_name: req.params['name'], status: 'queued' } };
        },
      },
      {
        method: 'PUT',
        pattern: `${base}/:name`,
        body: 'json',
        summary: 'Replace a feed configuration',
        errors: [409],
        schema: { body: feedConfigInput, response: feedConfigAnswer },
        handler: async (req, body) => ({ json: await repo.replace(req.params['name']!, parse(body)) }),
      },
      {
        method: 'DELETE',
        pattern: `${base}/:name`,
        summary: 'Delete a feed configuration; answers it',
        schema: { response: feedConfigAnswer },
        handler: async (req) => ({ json: await repo.remove(req.params['name']!) }),
      },
    );
  }
  return routes;
}
