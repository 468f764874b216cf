/** The catalog in Postgres: items keyed by (brand_name, guid); unchanged content is not rewritten. Brand push tokens, stored hashed. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Sql } from '../store/index.js';
import { notFound } from '../errors/index.js';
import type { CatalogItem, Rendition } from './mrss.js';

/** What the stitching flow reads of an item. */
export interface AssetRecord {
  guid: string;
  content_id: string | null;
  title: string;
  duration: number | null;
  renditions: Rendition[];
  cue_points: number[];
}

export interface UpsertCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

const CHUNK = 500;

function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export class CatalogRepo {
  constructor(private readonly sql: Sql) {}

  /** Sets what is given of a brand's push token (stored hashed) and player-token key; the other stays as it is. */
  async setTokens(
    brandName: string,
    t: { mrss_token?: string | undefined; jwt_key?: string | undefined },
  ): Promise<void> {
    const hash = t.mrss_token === undefined ? null : tokenHash(t.mrss_token);
    const key = t.jwt_key ?? null;
    await this.sql`insert into brand_token (brand_name, token_hash, jwt_key) values (${brandName}, ${hash}, ${key})
      on conflict (brand_name) do update set token_hash = coalesce(excluded.token_hash, brand_token.token_hash),
        jwt_key = coalesce(excluded.jwt_key, brand_token.jwt_key), updated_at = now()`;
  }

  /** Every brand's player-token key (for the in-memory cache the player flow verifies with). */
  async jwtKeys(): Promise<Array<{ brand_name: string; jwt_key: string }>> {
    return this.sql<
      Array<{ brand_name: string; jwt_key: string }>
    >`select brand_name, jwt_key from brand_token where jwt_key is not null`;
  }

  /** Constant-time comparison of hashes; a brand without a token never matches. */
  async tokenMatches(brandName: string, token: string): Promise<boolean> {
    const [row] = await this.sql<
      { token_hash: Buffer }[]
    >`select token_hash from brand_token where brand_name = ${brandName}`;
    const given = tokenHash(token);
    const stored = row?.token_hash ?? Buffer.alloc(given.length);
    return timingSafeEqual(given, stored) && !!row?.token_hash;
  }

  /**
   * Upserts items in one transaction (or the caller's): inserted, updated (content changed), unchanged.
   * A guid repeated in one batch keeps its last occurrence.
   */
  async upsert(brandName: string, items: CatalogItem[], tx: Sql = this.sql): Promise<UpsertCounts> {
    const unique = [...new Map(items.map((i) => [i.guid, i])).values()];
    const run = async (sql: Sql): Promise<UpsertCounts> => {
      let inserted = 0;
      let updated = 0;
      for (let i = 0; i < unique.length; i += CHUNK) {
        const rows = unique.slice(i, i + CHUNK).map((it) => ({
          brand_name: brandName,
          guid: it.guid,
          content_id: it.content_id ?? null,
          title: it.title,
          description: it.description,
          published_at: it.published,
          duration: it.duration,
          renditions: JSON.stringify(it.renditions),
          thumbnails: JSON.stringify(it.thumbnails),
          cue_points: JSON.stringify(it.cue_points),
          extras: JSON.stringify(it.extras),
          content_hash: it.content_hash,
        }));
        const changed = await sql<{ inserted: boolean }[]>`
          insert into catalog_item ${sql(rows)}
          on conflict (brand_name, guid) do update set
            content_id = excluded.content_id, title = excluded.title, description = excluded.description, published_at = excluded.published_at,
            duration = excluded.duration, renditions = excluded.renditions, thumbnails = excluded.thumbnails,
            cue_points = excluded.cue_points, extras = excluded.extras, content_hash = excluded.content_hash, updated_at = now()
          where catalog_item.content_hash is distinct from excluded.content_hash
          returning (xmax = 0) as inserted`;
        for (const c of changed) {
          if (c.inserted) inserted++;
          else updated++;
        }
      }
      return { inserted, updated, unchanged: unique.length - inserted - updated };
    };
    return tx === this.sql ? this.sql.begin((t) => run(t as unknown as Sql)) : run(tx);
  }

  async list(f: {
    brand_name?: string;
    q?: string;
    page: number;
    page_size: number;
  }): Promise<{ results: unknown[]; total_results: number }> {
    const conds = [
      f.brand_name !== undefined ? this.sql`brand_name = ${f.brand_name}` : undefined,
      f.q ? this.sql`title ilike ${'%' + f.q.replace(/[\\%_]/g, (c) => '\\' + c) + '%'}` : undefined,
    ].filter((c) => c !== undefined);
    const where = conds.length ? this.sql`where ${conds.reduce((a, c) => this.sql`${a} and ${c}`)}` : this.sql``;
    const [results, [count]] = await Promise.all([
      this
        .sql`select brand_name, guid, title, description, published_at, duration, renditions, thumbnails, cue_points, extras, content_hash, updated_at
        from catalog_item ${where} order by published_at desc nulls last, guid limit ${f.page_size} offset ${f.page * f.page_size}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from catalog_item ${where}`,
    ]);
    return { results: results.map(nestedAsJson), total_results: count?.total ?? 0 };
  }

  /** The brand's item whose guid or content id is `assetId` (the guid wins when both match different items). */
  async findAsset(brandName: string, assetId: string): Promise<AssetRecord> {
    const [row] = await this.sql<
      AssetRecord[]
    >`select guid, content_id, title, duration, renditions, cue_points from catalog_item
      where brand_name = ${brandName} and (guid = ${assetId} or content_id = ${assetId}) order by (guid = ${assetId}) desc limit 1`;
    if (!row) throw notFound(`no catalog item ${assetId} for brand ${brandName}`);
    // upsert writes these as JSON text into jsonb: they may read back as strings.
    const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
    return { ...row, renditions: json<Rendition[]>(row.renditions), cue_points: json<number[]>(row.cue_points) };
  }

  async get(brandName: string, guid: string): Promise<unknown> {
    const [row] = await this.sql`select * from catalog_item where brand_name = ${brandName} and guid = ${guid}`;
    if (!row) throw notFound(`no catalog item ${guid} for brand ${brandName}`);
    return nestedAsJson(row);
  }
}

const NESTED = ['renditions', 'thumbnails', 'cue_points', 'extras'] as const;

/**
 * An item as answered: its nested fields as JSON, never as JSON-encoded strings (issue 25).
 * upsert() hands them to jsonb as JSON text, so rows written so far read back as strings. `id` is
 * the guid, as every resource answers an `id` (issue 25 item 7): unique within its brand, the last
 * segment of the item's path `/api/v1/catalog/{brand_name}/{guid}`.
 */
function nestedAsJson(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row['guid'], ...row };
  for (const k of NESTED) {
    const v = out[k];
    if (typeof v === 'string') {
      try {
        out[k] = JSON.parse(v) as unknown;
      } catch {
        // not JSON text: left as the string it is
      }
    }
  }
  return out;
}
