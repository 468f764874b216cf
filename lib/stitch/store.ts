/**
 * Stitched sessions: Postgres (so any instance serves a cache_url another handed out) behind an
 * in-process cache (so a hit costs no database round trip). A session is its splice plan
 * (./session-plan.ts: its files are rendered from it, issue 24) and nothing else per session: the
 * POST answer stays in the memory of the process that stitched it (./service.ts). It expires after
 * STITCH_TTL_SEC, after which its URLs answer 404. Sessions stored before plans have files and the
 * answer.
 */
import type { Sql } from '../store/index.js';
import type { SessionPlan } from './session-plan.js';

export interface StitchSession {
  id: string;
  key: string;
  protocol: 'hls' | 'dash';
  plan?: SessionPlan;
  /** The rendered files of a session stored before plans (migration 016). */
  files?: Record<string, string>;
  /** The POST answer of a session stored before issue 24's rest (migration 017): now held in memory only. */
  response?: unknown;
  expiresAt: number;
}

interface Row {
  id: string;
  key: string;
  protocol: 'hls' | 'dash';
  plan: SessionPlan | null;
  files: Record<string, string> | null;
  response: unknown | null;
  expires_at: Date;
}

function toSession(r: Row): StitchSession {
  const s: StitchSession = {
    id: r.id,
    key: r.key,
    protocol: r.protocol,
    expiresAt: r.expires_at.getTime(),
  };
  if (r.response !== null) s.response = r.response;
  if (r.plan) s.plan = r.plan;
  if (r.files) s.files = r.files;
  return s;
}

/** What a session costs in process: what it stores (the plan; old sessions' files and answer). */
export function storedChars(s: StitchSession): number {
  let n = JSON.stringify(s.plan ?? null).length + (s.response === undefined ? 0 : JSON.stringify(s.response).length);
  for (const name in s.files) n += s.files[name]!.length;
  return n;
}

export class StitchStore {
  private readonly byId = new Map<string, StitchSession>();
  /** The same sessions by request key: a POST finds its session with one lookup, not a scan (issue 24). */
  private readonly byRequestKey = new Map<string, StitchSession>();
  /** Characters held, and each held session's (counted once, when remembered). */
  private bytes = 0;
  private readonly chars = new WeakMap<StitchSession, number>();

  constructor(
    private readonly sql: Sql,
    /** Characters of sessions kept in process (oldest sessions leave first). */
    private readonly maxChars = 64 * 1024 * 1024,
  ) {}

  /** From memory only: the hot path's lookup. */
  cached(id: string): StitchSession | undefined {
    const s = this.byId.get(id);
    if (s && s.expiresAt <= Date.now()) {
      this.forget(s);
      return undefined;
    }
    return s;
  }

  async get(id: string): Promise<StitchSession | undefined> {
    const hit = this.cached(id);
    if (hit) return hit;
    const [row] = await this.sql<
      Row[]
    >`select id, key, protocol, plan, files, response, expires_at from stitch_session where id = ${id} and expires_at > now()`;
    return row ? this.remember(toSession(row)) : undefined;
  }

  /** The live session of a request key, if any. */
  async byKey(key: string): Promise<StitchSession | undefined> {
    const hit = this.byRequestKey.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit;
    const [row] = await this.sql<
      Row[]
    >`select id, key, protocol, plan, files, response, expires_at from stitch_session where key = ${key} and expires_at > now()`;
    return row ? this.remember(toSession(row)) : undefined;
  }

  /**
   * Stores a session unless a live one with the same key exists (two instances stitched the same
   * request at once): the one stored first is returned, so both answer the same cache_url.
   * `supersedes`: a live session of the same key that this one replaces as the key's answer; it is
   * kept under its own id as key (its cache_url still plays until it expires).
   */
  async put(s: StitchSession, supersedes?: string): Promise<StitchSession> {
    if (supersedes !== undefined) {
      await this.sql`update stitch_session set key = id where id = ${supersedes} and key = ${s.key}`;
      const old = this.byId.get(supersedes);
      if (old && this.byRequestKey.get(old.key) === old) this.byRequestKey.delete(old.key);
    }
    const [row] = await this.sql<Row[]>`
      insert into stitch_session (id, key, protocol, plan, files, response, expires_at)
      values (${s.id}, ${s.key}, ${s.protocol}, ${s.plan ? this.sql.json(s.plan as never) : null}, ${s.files ? this.sql.json(s.files) : null}, ${s.response === undefined ? null : this.sql.json(s.response as never)}, ${new Date(s.expiresAt)})
      on conflict (key) do update set id = excluded.id, protocol = excluded.protocol, plan = excluded.plan, files = excluded.files, response = excluded.response,
        created_at = now(), expires_at = excluded.expires_at
      where stitch_session.expires_at <= now()
      returning id, key, protocol, plan, files, response, expires_at`;
    // Expired sessions are deleted a while after expiry, a few at a time, by whoever writes.
    void this
      .sql`delete from stitch_session where id in (select id from stitch_session where expires_at < now() - interval '1 hour' limit 100)`.catch(
      () => undefined,
    );
    if (row) return this.remember(toSession(row));
    const winner = await this.byKey(s.key);
    return winner ?? this.remember(s);
  }

  private remember(s: StitchSession): StitchSession {
    const old = this.byId.get(s.id);
    if (old) this.forget(old);
    this.byId.set(s.id, s);
    const sameKey = this.byRequestKey.get(s.key);
    if (sameKey && sameKey !== s) this.forget(sameKey);
    this.byRequestKey.set(s.key, s);
    const chars = storedChars(s);
    this.chars.set(s, chars);
    this.bytes += chars;
    for (const victim of this.byId.values()) {
      if (this.bytes <= this.maxChars || victim === s) break;
      this.forget(victim);
    }
    return s;
  }

  private forget(s: StitchSession): void {
    if (this.byId.get(s.id) === s) {
      this.byId.delete(s.id);
      this.bytes -= this.chars.get(s) ?? 0;
    }
    if (this.byRequestKey.get(s.key) === s) this.byRequestKey.delete(s.key);
  }
}
