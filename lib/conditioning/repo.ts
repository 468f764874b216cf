/**
 * Ad creative conditioning jobs in Postgres (migration 015): one row per (creative, ladder profile).
 * Queuing is one `insert … on conflict`, so concurrent stitches on any instance make one job; a
 * failed row is queued again by the same statement only once its back-off (`retry_at`) has passed.
 * Workers claim due jobs with `FOR UPDATE SKIP LOCKED` under a lease; renewing and finishing are
 * fenced on (job, owner), as for the ID3 inspection jobs (lib/inspection/repo.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../store/index.js';
import type { LadderProfile } from '../stitch/profile.js';

export type CreativeState = 'pending' | 'ready' | 'failed';

/** What a finished job wrote to the object store. */
export interface Renditions {
  /** `master.m3u8` or `manifest.mpd`. */
  manifest: string;
  files: string[];
  rungs: Array<{ width: number; height: number; bandwidth: number }>;
  /** Seconds from queuing to ready. */
  seconds_to_ready: number;
}

export interface CreativeRow {
  key: string;
  creative_key: string;
  profile_key: string;
  protocol: 'hls' | 'dash';
  profile: LadderProfile;
  media_url: string;
  duration_sec: number;
  state: CreativeState;
  job_id: string;
  attempts: number;
  failures: number;
  error: string | null;
  renditions: Renditions | null;
  lease_owner: string | null;
  lease_until: Date | null;
  retry_at: Date | null;
  created_at: Date;
  queued_at: Date;
  ready_at: Date | null;
  updated_at: Date;
}

export interface NewCreative {
  key: string;
  creativeKey: string;
  profileKey: string;
  profile: LadderProfile;
  mediaUrl: string;
  durationSec: number;
}

export type Finish = { state: 'ready'; renditions: Renditions } | { state: 'failed'; error: string };

export class CreativeRepo {
  constructor(
    private readonly sql: Sql,
    /** First back-off after a failure; doubled per further failure up to `backoffMaxSec`. */
    private readonly backoffSec: number,
    private readonly backoffMaxSec: number,
  ) {}

  /** The row of a (creative, profile), queued when new or when its back-off has passed; `queued` says whether this call queued it. */
  async ensure(c: NewCreative): Promise<{ row: CreativeRow; queued: boolean }> {
    const [created] = await this.sql<CreativeRow[]>`
      insert into ad_creative (key, creative_key, profile_key, protocol, profile, media_url, duration_sec, state, job_id)
      values (${c.key}, ${c.creativeKey}, ${c.profileKey}, ${c.profile.protocol}, ${this.sql.json(c.profile as never)}, ${c.mediaUrl}, ${c.durationSec}, 'pending', ${randomUUID()})
      on conflict (key) do update set
        state = 'pending', job_id = excluded.job_id, attempts = 0, lease_owner = null, lease_until = null,
        queued_at = now(), updated_at = now(), media_url = excluded.media_url
      where ad_creative.state = 'failed' and ad_creative.retry_at <= now()
      returning *`;
    if (created) return { row: created, queued: true };
    const [row] = await this.sql<CreativeRow[]>`select * from ad_creative where key = ${c.key}`;
    return { row: row!, queued: false };
  }

  async get(key: string): Promise<CreativeRow | undefined> {
    const [row] = await this.sql<CreativeRow[]>`select * from ad_creative where key = ${key}`;
    return row;
  }

  /** One page, newest first, optionally in one state, and the count of every match (the list envelope). */
  async list(page: number, pageSize: number, state?: CreativeState): Promise<{ rows: CreativeRow[]; total: number }> {
    const where = state ? this.sql`where state = ${state}` : this.sql``;
    const [rows, [count]] = await Promise.all([
      this.sql<
        CreativeRow[]
      >`select * from ad_creative ${where} order by updated_at desc, key limit ${pageSize} offset ${page * pageSize}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from ad_creative ${where}`,
    ]);
    return { rows, total: count?.total ?? 0 };
  }

  /** Leases one pending job nobody holds (never leased, or its lease lapsed); counts the attempt. */
  async claim(owner: string, leaseMs: number): Promise<CreativeRow | undefined> {
    const [row] = await this.sql<CreativeRow[]>`
      with due as (
        select key from ad_creative
        where state = 'pending' and (lease_until is null or lease_until < now())
        order by lease_until nulls first, queued_at
        limit 1
        for update skip locked
      )
      update ad_creative c set lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = c.attempts + 1, updated_at = now()
      from due where c.key = due.key
      returning c.*`;
    return row;
  }

  /** Extends this owner's leases; answers the jobs still held (one missing was lapsed and taken over). */
  async renew(owner: string, leaseMs: number): Promise<string[]> {
    const rows = await this.sql<Array<{ job_id: string }>>`
      update ad_creative set lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      where lease_owner = ${owner} and state = 'pending' returning job_id`;
    return rows.map((r) => r.job_id);
  }

  /** Writes the outcome if the job is still ours; a failure sets the back-off (`retry_at`). */
  async finish(job: CreativeRow, owner: string, outcome: Finish): Promise<boolean> {
    const rows =
      outcome.state === 'ready'
        ? await this.sql`
            update ad_creative set state = 'ready', renditions = ${this.sql.json(outcome.renditions as never)}, error = null,
              lease_owner = null, lease_until = null, retry_at = null, ready_at = now(), updated_at = now()
            where key = ${job.key} and job_id = ${job.job_id} and lease_owner = ${owner} and state = 'pending'`
        : await this.sql`
            update ad_creative set state = 'failed', error = ${outcome.error.slice(0, 500)}, failures = failures + 1,
              retry_at = now() + make_interval(secs => least(${this.backoffMaxSec}::float8, ${this.backoffSec}::float8 * power(2, failures))),
              lease_owner = null, lease_until = null, updated_at = now()
            where key = ${job.key} and job_id = ${job.job_id} and lease_owner = ${owner} and state = 'pending'`;
    return rows.count === 1;
  }

  async release(owner: string): Promise<void> {
    await this
      .sql`update ad_creative set lease_owner = null, lease_until = null where lease_owner = ${owner} and state = 'pending'`;
  }
}
