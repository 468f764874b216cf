/** Configured ads in Postgres: unique per (event_id, abid). */
import type { Sql } from '../../store/index.js';
import { notFound } from '../../errors/index.js';
import { rethrowViolation } from '../../store/pg-errors.js';

export interface ConfiguredAd {
  id: number;
  event_id: number;
  abid: string;
  ad_uri: string;
  duration: number;
  aiid: string | null;
  slau: string | null;
  geo_lang_loc: string | null;
  is_curated: boolean;
  layout: string | null;
  created_at: Date;
  updated_at: Date;
}

export type AdFields = Partial<Omit<ConfiguredAd, 'id' | 'created_at' | 'updated_at'>> & { ad_duration?: number };

const COLUMNS = [
  'event_id',
  'abid',
  'ad_uri',
  'duration',
  'aiid',
  'slau',
  'geo_lang_loc',
  'is_curated',
  'layout',
] as const;

/** `ad_duration` is an alias of `duration` (the spec's update example uses it). */
function row(fields: AdFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const merged = { ...fields, duration: fields.duration ?? fields.ad_duration };
  for (const c of COLUMNS) if (merged[c] !== undefined) out[c] = merged[c];
  return out;
}

const mapErrors = (err: unknown): never =>
  rethrowViolation(err, {
    unique: 'a configured ad with this (event_id, abid) already exists',
    foreignKey: 'the event does not exist',
  });

export class ConfiguredAdRepo {
  constructor(private readonly sql: Sql) {}

  async create(fields: AdFields): Promise<ConfiguredAd> {
    const [ad] = await this.sql<
      ConfiguredAd[]
    >`insert into squeeze_configured_ad ${this.sql(row(fields))} returning *`.catch(mapErrors);
    return ad!;
  }

  async update(id: number, fields: AdFields): Promise<ConfiguredAd> {
    const changes = row(fields);
    const [ad] = Object.keys(changes).length
      ? await this.sql<
          ConfiguredAd[]
        >`update squeeze_configured_ad set ${this.sql({ ...changes, updated_at: new Date() })} where id = ${id} returning *`.catch(
          mapErrors,
        )
      : await this.sql<ConfiguredAd[]>`select * from squeeze_configured_ad where id = ${id}`;
    if (!ad) throw notFound(`configured ad ${id} does not exist`);
    return ad;
  }

  async remove(id: number): Promise<ConfiguredAd> {
    const [ad] = await this.sql<ConfiguredAd[]>`delete from squeeze_configured_ad where id = ${id} returning *`;
    if (!ad) throw notFound(`configured ad ${id} does not exist`);
    return ad;
  }

  async list(f: {
    event_id?: number;
    abid?: string;
    geo_lang_loc?: string;
    is_curated?: boolean;
    page: number;
    page_size: number;
  }): Promise<{ results: ConfiguredAd[]; total_results: number }> {
    const conds = [
      f.event_id !== undefined ? this.sql`event_id = ${f.event_id}` : undefined,
      f.abid !== undefined ? this.sql`abid = ${f.abid}` : undefined,
      f.geo_lang_loc !== undefined ? this.sql`geo_lang_loc = ${f.geo_lang_loc}` : undefined,
      f.is_curated !== undefined ? this.sql`is_curated = ${f.is_curated}` : undefined,
    ].filter((c) => c !== undefined);
    const where = conds.length ? this.sql`where ${conds.reduce((a, c) => this.sql`${a} and ${c}`)}` : this.sql``;
    const [results, [count]] = await Promise.all([
      this.sql<
        ConfiguredAd[]
      >`select * from squeeze_configured_ad ${where} order by id limit ${f.page_size} offset ${f.page * f.page_size}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from squeeze_configured_ad ${where}`,
    ]);
    return { results, total_results: count?.total ?? 0 };
  }
}
