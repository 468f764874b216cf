/**
 * Feed configurations for catalog pulls (spec "Feed Configuration (catalog pull)"). POSTed flat or
 * wrapped as `{name, jsonb_value}`; `name` is the feed name. brand_name and feed_name are unique.
 */
import type { Route } from '../http/router.js';
import type { Sql } from '../store/index.js';
import { badRequest, conflict, notFound, validationFailed } from '../http/problem.js';
import { rethrowViolation } from '../store/pg-errors.js';
import { bodyValidator } from '../http/validate.js';

const paginationParams = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { anyOf: [{ type: 'integer', minimum: 1, maximum: 10000 }, { type: 'string', minLength: 1, maxLength: 64 }] },
    limit_param: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.\\-\\[\\]]+$' },
    offset_base: { type: 'integer', minimum: 0, maximum: 1000000000 },
    offset_multiplier: { type: 'integer', minimum: 0, maximum: 1000000 },
    offset_param: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.\\-\\[\\]]+$' },
    stop_when_caughtup: { type: 'boolean' },
    update_offset_base: { type: 'boolean' },
    next_from_feed: { type: 'string', maxLength: 4096 },
  },
} as const;

export const feedConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['brand_name', 'feed_name', 'feed_uri', 'pagination_params'],
  properties: {
    ID: { type: 'integer', description: 'ignored: server-generated' },
    id: { type: 'integer', description: 'ignored: server-generated' },
    brand_name: { type: 'string', minLength: 1, maxLength: 256 },
    feed_name: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9._~:-]+$' },
    feed_uri: { type: 'string', maxLength: 4096, pattern: '^https?://[^\\s/?#@]+(?:[/?#][^\\s]*)?$' },
    pagination_supported: { type: 'boolean', default: false },
    pull_frequency_sec: { type: 'integer', minimum: 0, maximum: 604800, default: 0 },
    pagination_params: paginationParams,
  },
} as const;

const wrapped = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'jsonb_value'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, jsonb_value: { type: 'object' } },
} as const;

type FeedConfig = Record<string, unknown> & { brand_name: string; feed_name: string; feed_uri: string };

const mapUnique = (err: unknown): never =>
  rethrowViolation(err, { unique: (constraint) => (constraint.includes('brand') ? 'a feed for this brand_name already exists' : 'a feed with this feed_name already exists') });

export class FeedConfigRepo {
  constructor(private readonly sql: Sql) {}

  private view(row: { id: number; config: Record<string, unknown> }) {
    return { ID: row.id, ...row.config };
  }

  /** A new feed is due at once (its first pull runs on creation, whatever its frequency). */
  async create(c: FeedConfig) {
    return this.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      const [row] = await t<{ id: number; config: Record<string, unknown> }[]>`
        insert into feed_config (feed_name, brand_name, config) values (${c.feed_name}, ${c.brand_name}, ${t.json(c as never)}) returning id, config`.catch(mapUnique);
      await t`insert into feed_run (feed_name, next_due_at) values (${c.feed_name}, now())`;
      return this.view(row!);
    });
  }

  /** The state of the feed's pulls. */
  async status(name: string) {
    const [s] = await this.sql`select state, mode, pages, inserted, updated, unchanged, page_index, next_url as cursor, started_at, last_run_at, last_error, next_due_at from feed_run where feed_name = ${name}`;
    return s ?? null;
  }

  /** Makes the feed due now; false while a run is in progress. */
  async requestPull(name: string): Promise<boolean> {
    await this.get(name);
    const rows = await this.sql`update feed_run set next_due_at = now() where feed_name = ${name} and state = 'idle' returning 1`;
    return rows.length > 0;
  }

  async replace(name: string, c: FeedConfig) {
    const [row] = await this.sql<{ id: number; config: Record<string, unknown> }[]>`
      update feed_config set feed_name = ${c.feed_name}, brand_name = ${c.brand_name}, config = ${this.sql.json(c as never)}, updated_at = now()
      where feed_name = ${name} returning id, config`.catch(mapUnique);
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return this.view(row);
  }

  async get(name: string) {
    const [row] = await this.sql<{ id: number; config: Record<string, unknown> }[]>`select id, config from feed_config where feed_name = ${name}`;
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return this.view(row);
  }

  async list() {
    return (await this.sql<{ id: number; config: Record<string, unknown> }[]>`select id, config from feed_config order by id`).map((r) => this.view(r));
  }

  async remove(name: string) {
    const [row] = await this.sql<{ id: number; config: Record<string, unknown> }[]>`delete from feed_config where feed_name = ${name} returning id, config`;
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return this.view(row);
  }
}

export function feedConfigRoutes(repo: FeedConfigRepo, onPullRequested: () => void = () => undefined): Route[] {
  const validateFeed = bodyValidator<FeedConfig>(feedConfigSchema);
  const validateWrapped = bodyValidator<{ name: string; jsonb_value: Record<string, unknown> }>(wrapped);
  /** Flat or `{name, jsonb_value}`; `name` is the feed name. Validated with the spec's defaults applied. */
  const parse = (body: unknown): FeedConfig => {
    let flat = body;
    if (body && typeof body === 'object' && 'jsonb_value' in body) {
      const w = validateWrapped(body);
      const feedName = w.jsonb_value['feed_name'];
      if (feedName !== undefined && feedName !== w.name) throw badRequest('name and jsonb_value.feed_name differ');
      flat = { ...w.jsonb_value, feed_name: w.name };
    }
    const c = validateFeed(structuredClone(flat));
    delete c['ID'];
    delete c['id'];
    const p = c['pagination_params'] as Record<string, unknown>;
    if (p['offset_param'] && p['limit'] === undefined && p['offset_multiplier'] === undefined) {
      throw validationFailed([{ path: '/pagination_params', message: 'offset paging needs limit or offset_multiplier' }]);
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
      { method: 'POST', pattern: base, body: 'json', summary: 'Create a feed configuration (flat or {name, jsonb_value})', schema: { body: feedConfigSchema, status: 201 }, handler: create },
      { method: 'GET', pattern: base, summary: 'All feed configurations', handler: async () => ({ json: await repo.list() }) },
      {
        method: 'GET',
        pattern: `${base}/:name`,
        summary: 'One feed configuration with the status of its pulls',
        handler: async (req) => ({ json: { ...(await repo.get(req.params['name']!)), status: await repo.status(req.params['name']!) } }),
      },
      {
        method: 'POST',
        pattern: `${base}/:name/pull`,
        summary: 'Start a pull now (202); 409 while one is in progress',
        handler: async (req) => {
          if (!(await repo.requestPull(req.params['name']!))) throw conflict('a pull of this feed is in progress');
          onPullRequested();
          return { status: 202, json: { feed_name: req.params['name'], status: 'queued' } };
        },
      },
      { method: 'PUT', pattern: `${base}/:name`, body: 'json', summary: 'Replace a feed configuration', schema: { body: feedConfigSchema }, handler: async (req, body) => ({ json: await repo.replace(req.params['name']!, parse(body)) }) },
      { method: 'DELETE', pattern: `${base}/:name`, summary: 'Delete a feed configuration; answers it', handler: async (req) => ({ json: await repo.remove(req.params['name']!) }) },
    );
  }
  return routes;
}
