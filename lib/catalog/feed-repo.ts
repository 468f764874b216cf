/**
 * Feed configurations and the state of their pulls, in Postgres. brand_name and feed_name are
 * unique. A configuration posted wrapped (`{name, jsonb_value}`) keeps the wrapper's `name` in its
 * config and is found by it as well as by its feed_name (issue 25); the feed_name wins when both match.
 */
import type { Sql } from '../store/index.js';
import { notFound } from '../errors/index.js';
import { rethrowViolation } from '../store/pg-errors.js';
import type { FeedConfig } from './feed-schema.js';

const mapUnique = (err: unknown): never =>
  rethrowViolation(err, {
    unique: (constraint) =>
      constraint.includes('brand')
        ? 'a feed for this brand_name already exists'
        : 'a feed with this feed_name already exists',
  });

export class FeedConfigRepo {
  constructor(private readonly sql: Sql) {}

  /** The answer: `id` (the spec's `ID`, one spelling for every resource: docs/decisions.md) and the config as stored. */
  private view(row: { id: number; config: Record<string, unknown> }) {
    return { id: row.id, ...row.config };
  }

  /** The feed_name of the configuration named `name` (its feed_name, else its wrapper's name). */
  private async feedName(name: string): Promise<string> {
    const [row] = await this.sql<{ feed_name: string }[]>`
      select feed_name from feed_config where feed_name = ${name} or config->>'name' = ${name} order by (feed_name = ${name}) desc, id limit 1`;
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return row.feed_name;
  }

  /** A new feed is due at once (its first pull runs on creation, whatever its frequency). */
  async create(c: FeedConfig) {
    return this.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      const [row] = await t<{ id: number; config: Record<string, unknown> }[]>`
        insert into feed_config (feed_name, brand_name, config) values (${c.feed_name}, ${c.brand_name}, ${t.json(c as never)}) returning id, config`.catch(
        mapUnique,
      );
      await t`insert into feed_run (feed_name, next_due_at) values (${c.feed_name}, now())`;
      return this.view(row!);
    });
  }

  /** The state of the feed's pulls. */
  async status(name: string) {
    name = await this.feedName(name);
    const [s] = await this
      .sql`select state, mode, pages, inserted, updated, unchanged, page_index, next_url as cursor, started_at, last_run_at, last_error, next_due_at from feed_run where feed_name = ${name}`;
    return s ?? null;
  }

  /** Makes the feed due now; false while a run is in progress. */
  async requestPull(name: string): Promise<boolean> {
    name = await this.feedName(name);
    const rows = await this
      .sql`update feed_run set next_due_at = now() where feed_name = ${name} and state = 'idle' returning 1`;
    return rows.length > 0;
  }

  async replace(name: string, c: FeedConfig) {
    name = await this.feedName(name);
    const [row] = await this.sql<{ id: number; config: Record<string, unknown> }[]>`
      update feed_config set feed_name = ${c.feed_name}, brand_name = ${c.brand_name}, config = ${this.sql.json(c as never)}, updated_at = now()
      where feed_name = ${name} returning id, config`.catch(mapUnique);
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return this.view(row);
  }

  async get(name: string) {
    name = await this.feedName(name);
    const [row] = await this.sql<
      { id: number; config: Record<string, unknown> }[]
    >`select id, config from feed_config where feed_name = ${name}`;
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return this.view(row);
  }

  /** A page of configurations by id: `{results, total_results}`, the one list envelope. */
  async list(page: number, pageSize: number) {
    const [rows, [count]] = await Promise.all([
      this.sql<
        { id: number; config: Record<string, unknown> }[]
      >`select id, config from feed_config order by id limit ${pageSize} offset ${page * pageSize}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from feed_config`,
    ]);
    return { results: rows.map((r) => this.view(r)), total_results: count?.total ?? 0 };
  }

  async remove(name: string) {
    name = await this.feedName(name);
    const [row] = await this.sql<
      { id: number; config: Record<string, unknown> }[]
    >`delete from feed_config where feed_name = ${name} returning id, config`;
    if (!row) throw notFound(`no feed configuration named ${name}`);
    return this.view(row);
  }
}
