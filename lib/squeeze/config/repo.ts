/** Squeeze brand and event configuration in Postgres; an event's effective config is its brand's, overridden by its own fields. */
import type { Sql } from '../../store/index.js';
import { notFound } from '../../errors/index.js';
import { rethrowViolation } from '../../store/pg-errors.js';
import { brandDefaults, brandFields } from './schema.js';
import type { EventConfig } from './types.js';

type Json = Record<string, unknown>;

export interface BrandConfigInput extends Json {
  brand_id: string | number;
}

export interface EventConfigInput extends Json {
  asset_id: string;
  source_uri: string;
  brand_config_id: string | number;
  caid?: string;
}

export interface EventSettingsRow {
  id: number;
  asset_id: string;
  caid: string | null;
  windows_segs: number;
  live_edge_delay_segments: number;
  content_origin: string | null;
  source_uri: string;
  /** The event's, else its brand's (0 = unlimited). */
  max_concurrent_streams: number;
}

const BRAND_KEYS = Object.keys(brandFields);

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects merge key by key; anything else replaces. */
export function deepMerge(...layers: Json[]): Json {
  const out: Json = {};
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) {
      if (v === undefined) continue;
      out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Json, v) : v;
    }
  }
  return out;
}

function pick(obj: Json, keys: string[]): Json {
  return Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));
}

export class SqueezeConfigRepo {
  constructor(private readonly sql: Sql) {}

  /** PUT semantics: the brand's config is replaced by what was sent; unset fields take the defaults. */
  async upsertBrand(input: BrandConfigInput): Promise<Json> {
    const brandId = String(input.brand_id);
    const config = { brand_id: input.brand_id, ...pick(input, BRAND_KEYS) };
    const [row] = await this.sql<{ config: Json }[]>`
      insert into squeeze_brand_config (brand_id, config) values (${brandId}, ${this.sql.json(config as never)})
      on conflict (brand_id) do update set config = excluded.config, updated_at = now()
      returning config`;
    return this.brandView(row!.config);
  }

  async getBrand(brandId: string): Promise<Json> {
    const [row] = await this.sql<
      { config: Json }[]
    >`select config from squeeze_brand_config where brand_id = ${brandId}`;
    if (!row) throw notFound(`brand config ${brandId} does not exist`);
    return this.brandView(row.config);
  }

  private brandView(config: Json): Json {
    return { id: config['brand_id'], ...deepMerge(brandDefaults, config) };
  }

  /** Upsert by asset_id. 404 when the brand config does not exist, 409 when another event has the caid. */
  async upsertEvent(input: EventConfigInput): Promise<EventConfig> {
    const brandId = String(input.brand_config_id);
    const { id: _ignored, ...config } = input;
    const caid = input.caid ?? null;
    try {
      const [row] = await this.sql<{ id: number }[]>`
        insert into squeeze_event_config (asset_id, caid, brand_config_id, config)
        values (${input.asset_id}, ${caid}, ${brandId}, ${this.sql.json(config as never)})
        on conflict (asset_id) do update set caid = excluded.caid, brand_config_id = excluded.brand_config_id, config = excluded.config, updated_at = now()
        returning id`;
      return this.getEvent(row!.id);
    } catch (err) {
      rethrowViolation(err, {
        foreignKey: `brand config ${brandId} does not exist`,
        unique: `another event already uses caid ${caid}`,
      });
    }
  }

  async getEvent(id: number): Promise<EventConfig> {
    const [row] = await this.sql<{ id: number; config: Json; brand: Json }[]>`
      select e.id, e.config, b.config as brand from squeeze_event_config e join squeeze_brand_config b on b.brand_id = e.brand_config_id where e.id = ${id}`;
    if (!row) throw notFound(`event config ${id} does not exist`);
    return effective(row.id, row.config, row.brand);
  }

  async getEventByAsset(assetId: string): Promise<EventConfig> {
    const [row] = await this.sql<{ id: number }[]>`select id from squeeze_event_config where asset_id = ${assetId}`;
    if (!row) throw notFound(`no event config for asset_id ${assetId}`);
    return this.getEvent(row.id);
  }

  /**
   * The configured source playlist of an event named by id, else by asset id; undefined when there
   * is no such event (ID3 inspection of a stream known only from its ad tag or /squeezeback).
   */
  async sourceOf(
    eventId: number | null,
    assetId: string | null,
  ): Promise<{ eventId: number; sourceUri: string } | undefined> {
    // By id first; an event re-created under the stream's asset id (a new id) is found by the asset.
    const [row] = await this.sql<{ id: number; source_uri: string }[]>`
      select id, config->>'source_uri' as source_uri from squeeze_event_config
      where id = ${eventId ?? -1} or asset_id = ${assetId ?? ''} order by (id = ${eventId ?? -1}) desc limit 1`;
    return row?.source_uri ? { eventId: row.id, sourceUri: row.source_uri } : undefined;
  }

  /** A page of events, each with its effective configuration, by id (the operator page lists them). */
  async listEvents(page: number, pageSize: number): Promise<{ results: EventConfig[]; total_results: number }> {
    const [rows, [count]] = await Promise.all([
      this.sql<{ id: number; config: Json; brand: Json }[]>`
        select e.id, e.config, b.config as brand from squeeze_event_config e join squeeze_brand_config b on b.brand_id = e.brand_config_id
        order by e.id limit ${pageSize} offset ${page * pageSize}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from squeeze_event_config`,
    ]);
    return { results: rows.map((r) => effective(r.id, r.config, r.brand)), total_results: count?.total ?? 0 };
  }

  /** What the hot path needs of every event, for the in-memory cache. */
  async allEventSettings(): Promise<EventSettingsRow[]> {
    return this.sql<EventSettingsRow[]>`
      select e.id, e.asset_id, e.caid,
        coalesce((e.config->>'windows_segs')::int, 0) as windows_segs,
        coalesce((e.config->>'live_edge_delay_segments')::int, 0) as live_edge_delay_segments,
        e.config->>'content_origin' as content_origin,
        e.config->>'source_uri' as source_uri,
        coalesce((e.config->>'max_concurrent_streams')::int, (b.config->>'max_concurrent_streams')::int, 0) as max_concurrent_streams
      from squeeze_event_config e left join squeeze_brand_config b on b.brand_id = e.brand_config_id`;
  }
}

/** The event's effective configuration: defaults ← brand ← event overrides (each layer validated by ./schema.ts). */
export function effective(id: number, event: Json, brand: Json): EventConfig {
  const brandLayer = pick(brand, BRAND_KEYS);
  const overrides = pick(event, BRAND_KEYS);
  const own = Object.fromEntries(Object.entries(event).filter(([k]) => !BRAND_KEYS.includes(k)));
  return {
    id,
    ...own,
    trigger: event['trigger'] ?? 'api',
    windows_segs: event['windows_segs'] ?? 0,
    live_edge_delay_segments: event['live_edge_delay_segments'] ?? 0,
    ...deepMerge(brandDefaults, brandLayer, overrides),
  } as EventConfig;
}
