/**
 * ID3 inspection jobs in Postgres (migration 010): one row per stream. Starting is one
 * `insert … on conflict` so concurrent first requests on any instance make one job; a finished row
 * older than the TTL is reset to a new job by the same statement. Workers claim due jobs with
 * `FOR UPDATE SKIP LOCKED` under a lease; renewing and finishing are fenced on (job, owner), so an
 * owner that lost its lease can never overwrite the job another instance took over.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../store/index.js';
import type { AdPod } from '../id3/index.js';

export type InspectionStatus = 'pending' | 'complete' | 'failed';

export interface InspectionRow {
  stream_id: string;
  job_id: string;
  source_url: string;
  whole_pod: boolean;
  status: InspectionStatus;
  ad_pods: AdPod[] | null;
  error: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** The API's view (spec "ID3 inspection result", plus `updated` and, when failed or cut short, `error`). */
export interface InspectionView {
  stream_id: string;
  status: InspectionStatus;
  ad_pods: AdPod[] | null;
  created: string;
  updated: string;
  error?: string;
}

export function toView(r: InspectionRow): InspectionView {
  const v: InspectionView = {
    stream_id: r.stream_id,
    status: r.status,
    ad_pods: r.status === 'pending' ? null : r.ad_pods,
    created: r.created_at.toISOString(),
    updated: r.updated_at.toISOString(),
  };
  if (r.error) v.error = r.error;
  return v;
}

export interface Outcome {
  status: 'complete' | 'failed';
  ad_pods: AdPod[] | null;
  error?: string | undefined;
}

export class InspectionRepo {
  constructor(
    private readonly sql: Sql,
    private readonly ttlSec: number,
  ) {}

  /** The stream's job unless it finished more than the TTL ago. */
  async get(streamId: string): Promise<InspectionRow | undefined> {
    const [row] = await this.sql<InspectionRow[]>`
      select * from id3_inspection
      where stream_id = ${streamId} and (status = 'pending' or finished_at > now() - make_interval(secs => ${this.ttlSec}))`;
    return row;
  }

  /** Starts a job for the stream, or returns the one it has (pending, or finished within the TTL). */
  async start(streamId: string, sourceUrl: string, wholePod: boolean): Promise<InspectionRow> {
    const [created] = await this.sql<InspectionRow[]>`
      insert into id3_inspection (stream_id, job_id, source_url, whole_pod, status)
      values (${streamId}, ${randomUUID()}, ${sourceUrl}, ${wholePod}, 'pending')
      on conflict (stream_id) do update set
        job_id = excluded.job_id, source_url = excluded.source_url, whole_pod = excluded.whole_pod,
        status = 'pending', ad_pods = null, error = null, attempts = 0, lease_owner = null, lease_until = null,
        created_at = now(), updated_at = now(), finished_at = null
      where id3_inspection.status <> 'pending' and id3_inspection.finished_at <= now() - make_interval(secs => ${this.ttlSec})
      returning *`;
    if (created) return created;
    // The row exists and is live: a concurrent start, or the job already running or finished.
    const [row] = await this.sql<InspectionRow[]>`select * from id3_inspection where stream_id = ${streamId}`;
    return row!;
  }

  /** Leases one pending job nobody holds (never leased, or its lease lapsed); counts the attempt. */
  async claim(owner: string, leaseMs: number): Promise<InspectionRow | undefined> {
    const [row] = await this.sql<InspectionRow[]>`
      with due as (
        select stream_id from id3_inspection
        where status = 'pending' and (lease_until is null or lease_until < now())
        order by lease_until nulls first, created_at
        limit 1
        for update skip locked
      )
      update id3_inspection j set lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = j.attempts + 1, updated_at = now()
      from due where j.stream_id = due.stream_id
      returning j.*`;
    return row;
  }

  /** Extends this owner's leases; answers the jobs still held (one missing was lapsed and taken, or replaced). */
  async renew(owner: string, leaseMs: number): Promise<string[]> {
    const rows = await this.sql<{ job_id: string }[]>`
      update id3_inspection set lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      where lease_owner = ${owner} and status = 'pending' returning job_id`;
    return rows.map((r) => r.job_id);
  }

  /** Writes the outcome if the job is still ours; false otherwise (nothing written). */
  async finish(job: InspectionRow, owner: string, outcome: Outcome): Promise<boolean> {
    const rows = await this.sql`
      update id3_inspection set status = ${outcome.status}, ad_pods = ${outcome.ad_pods === null ? null : this.sql.json(outcome.ad_pods as never)},
        error = ${outcome.error ?? null}, lease_owner = null, lease_until = null, updated_at = now(), finished_at = now()
      where stream_id = ${job.stream_id} and job_id = ${job.job_id} and lease_owner = ${owner} and status = 'pending'`;
    return rows.count === 1;
  }

  /** Hands this owner's leases back at once (a graceful stop): another instance resumes them. */
  async release(owner: string): Promise<void> {
    await this
      .sql`update id3_inspection set lease_owner = null, lease_until = null where lease_owner = ${owner} and status = 'pending'`;
  }

  /** Deletes finished jobs older than the TTL. */
  async purge(): Promise<number> {
    const rows = await this
      .sql`delete from id3_inspection where status <> 'pending' and finished_at <= now() - make_interval(secs => ${this.ttlSec})`;
    return rows.count;
  }
}
