/** Brand-recognition rules in Postgres. */
import type { Sql } from '../store/index.js';
import { notFound } from '../errors/index.js';
import { rethrowViolation } from '../store/pg-errors.js';
import type { BrandRule, MatchType } from './matcher.js';

export interface BrandRuleInput {
  brand_name: string;
  match_type: MatchType;
  match_name?: string;
  match_value: string;
}

const columns = ['id', 'brand_name', 'match_type', 'match_name', 'match_value'] as const;

function normalize(input: BrandRuleInput) {
  return {
    brand_name: input.brand_name,
    match_type: input.match_type,
    match_name: input.match_type === 'hostname' ? '' : (input.match_name ?? ''),
    match_value: input.match_value,
  };
}

const mapUnique = (err: unknown): never =>
  rethrowViolation(err, { unique: 'an identical rule (brand, type, name, value) already exists' });

export class BrandRepo {
  constructor(private readonly sql: Sql) {}

  async create(input: BrandRuleInput): Promise<BrandRule> {
    const row = normalize(input);
    const [created] = await this.sql<
      BrandRule[]
    >`insert into brand_recognition ${this.sql(row)} returning ${this.sql(columns)}`.catch(mapUnique);
    return created!;
  }

  async update(id: number, input: BrandRuleInput): Promise<BrandRule> {
    const row = { ...normalize(input), updated_at: new Date() };
    const [updated] = await this.sql<
      BrandRule[]
    >`update brand_recognition set ${this.sql(row)} where id = ${id} returning ${this.sql(columns)}`.catch(mapUnique);
    if (!updated) throw notFound(`brand-recognition rule ${id} does not exist`);
    return updated;
  }

  async remove(id: number): Promise<BrandRule> {
    const [deleted] = await this.sql<
      BrandRule[]
    >`delete from brand_recognition where id = ${id} returning ${this.sql(columns)}`;
    if (!deleted) throw notFound(`brand-recognition rule ${id} does not exist`);
    return deleted;
  }

  async get(id: number): Promise<BrandRule> {
    const [row] = await this.sql<BrandRule[]>`select ${this.sql(columns)} from brand_recognition where id = ${id}`;
    if (!row) throw notFound(`brand-recognition rule ${id} does not exist`);
    return row;
  }

  /** One page ordered by id; `namePrefix` is a case-sensitive prefix of brand_name. */
  async list(opts: {
    namePrefix?: string;
    page: number;
    pageSize: number;
  }): Promise<{ rows: BrandRule[]; total: number }> {
    const where = opts.namePrefix ? this.sql`where starts_with(brand_name, ${opts.namePrefix})` : this.sql``;
    const [rows, [count]] = await Promise.all([
      this.sql<
        BrandRule[]
      >`select ${this.sql(columns)} from brand_recognition ${where} order by id limit ${opts.pageSize} offset ${opts.page * opts.pageSize}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from brand_recognition ${where}`,
    ]);
    return { rows, total: count?.total ?? 0 };
  }

  async all(): Promise<BrandRule[]> {
    return this.sql<BrandRule[]>`select ${this.sql(columns)} from brand_recognition order by id`;
  }
}
