/** Squeeze breaks in Postgres (docs/design.md §6): the durable record, leases for the break worker, planned segments. */
import type { EventConfig } from '../config/types.js';
import type { Sql } from '../../store/index.js';
import { conflict, invalid, notFound } from '../../errors/index.js';
import { rethrowViolation } from '../../store/pg-errors.js';
import type { DecidedAd, TrackingEvent } from '../../ads/types.js';

/** What started a break (migration 011): the API, or a cue the monitor read (its key and the decoded cue). */
export type BreakTrigger = { source: 'api' } | { source: 'scte35'; key: string; cue: Record<string, unknown> };

export type BreakStatus = 'scheduled' | 'active' | 'completed' | 'cancelled' | 'failed';

export interface Assignment {
  key: string;
  source: 'curated' | 'vmap' | 'fallback';
  ads: DecidedAd[];
}

/** A break's id as the service makes it (a lowercase UUID): what a path or a query may name. */
export const BREAK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface BreakRow {
  id: string;
  event_id: number;
  target: 'event' | 'streams';
  status: BreakStatus;
  start_time: Date;
  end_time: Date;
  break_duration: number;
  segment_sec: number;
  layout: string;
  abid: string | null;
  geo_lang_loc: string | null;
  decision_source: string | null;
  reason: string | null;
  assignments: Assignment[];
  stream_assignments: Record<string, string>;
  default_assignment: string | null;
  /** Per-stream tracking, index-aligned with the ads of the stream's assignment. */
  stream_tracking: Record<string, Array<DecidedAd['tracking']>>;
  /** The event's effective configuration when the break started (a later config change does not move a running break). */
  settings: EventConfig;
  trigger: BreakTrigger;
  /** Media sequence of the first break segment in the source (migration 014; bigint, read as a string); null: placed by program date-time only. */
  start_seq?: number | string | null;
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SegmentRow {
  break_id: string;
  assignment: string;
  content_path: string;
  content_uri: string;
  idx: number;
  start_time: Date;
  duration: number;
  ad_index: number;
  ad_offset: number;
  events: Array<{ ad: number; event: TrackingEvent }>;
  output_key: string;
  status: 'pending' | 'ready' | 'failed';
  output_uri: string | null;
  attempts: number;
  error: string | null;
  updated_at?: Date;
}

/** The break's media-sequence anchor (segments without program date-time are placed by it), if it has one. */
export function startSeqOf(b: Pick<BreakRow, 'start_seq'>): number | undefined {
  return b.start_seq === null || b.start_seq === undefined ? undefined : Number(b.start_seq);
}

export type NewBreak = Omit<BreakRow, 'lease_owner' | 'lease_until' | 'created_at' | 'updated_at'>;
export type NewSegment = Omit<SegmentRow, 'status' | 'output_uri' | 'attempts' | 'error' | 'updated_at'>;

/**
 * Breaks a worker still has to drive: not ended, or cancelled with segments left before the moved
 * end (a segment is published after its program date-time, so the last one shows up after the end).
 */
const LIVE = `status in ('scheduled', 'active') or (status = 'cancelled' and end_time > now() - interval '60 seconds')`;

export class BreakRepo {
  constructor(private readonly sql: Sql) {}

  async insert(b: NewBreak): Promise<BreakRow> {
    const row = {
      ...b,
      assignments: this.sql.json(b.assignments as never),
      stream_assignments: this.sql.json(b.stream_assignments as never),
      stream_tracking: this.sql.json(b.stream_tracking as never),
      settings: this.sql.json(b.settings as never),
      trigger: this.sql.json(b.trigger as never),
    };
    try {
      const [r] = await this.sql<BreakRow[]>`insert into squeeze_break ${this.sql(row)} returning *`;
      return r!;
    } catch (err) {
      rethrowViolation(err, {
        unique: `event ${b.event_id} already has a break in progress`,
        foreignKey: `event config ${b.event_id} does not exist`,
      });
    }
  }

  async get(id: string): Promise<BreakRow> {
    const [r] = await this.sql<BreakRow[]>`select * from squeeze_break where id = ${id}`;
    if (!r) throw notFound(`break ${id} does not exist`);
    return r;
  }

  /** A page of an event's breaks, newest first, and how many it has. */
  async listByEvent(eventId: number, page: number, pageSize: number): Promise<{ rows: BreakRow[]; total: number }> {
    const [rows, [count]] = await Promise.all([
      this.sql<
        BreakRow[]
      >`select * from squeeze_break where event_id = ${eventId} order by start_time desc, created_at desc limit ${pageSize} offset ${page * pageSize}`,
      this.sql<{ total: number }[]>`select count(*)::int as total from squeeze_break where event_id = ${eventId}`,
    ]);
    return { rows, total: count?.total ?? 0 };
  }

  /** The break in progress on an event, if any. */
  async liveOnEvent(eventId: number): Promise<BreakRow | undefined> {
    const [r] = await this.sql<
      BreakRow[]
    >`select * from squeeze_break where event_id = ${eventId} and status in ('scheduled', 'active')`;
    return r;
  }

  /** Where the event's latest earlier break ends (a terminated break runs to its next segment boundary). */
  async lastEnd(eventId: number): Promise<Date | undefined> {
    const [r] = await this.sql<
      { end_time: Date | null }[]
    >`select max(end_time) as end_time from squeeze_break where event_id = ${eventId} and status <> 'failed'`;
    return r?.end_time ?? undefined;
  }

  async segments(breakId: string): Promise<SegmentRow[]> {
    return this.sql<
      SegmentRow[]
    >`select * from squeeze_break_segment where break_id = ${breakId} order by idx, assignment, content_path`;
  }

  /** Ends a live break at `end` (cancelled); 409 once it has ended. */
  async terminate(id: string, end: Date): Promise<BreakRow> {
    const [r] = await this.sql<BreakRow[]>`
      update squeeze_break set end_time = least(end_time, ${end}), break_duration = greatest(0, extract(epoch from (least(end_time, ${end}) - start_time))),
        status = 'cancelled', updated_at = now()
      where id = ${id} and status in ('scheduled', 'active') returning *`;
    return r ?? this.ended(id);
  }

  /** Extends a live break in one statement (concurrent extensions add up); 409 once it has ended, 400 past `maxTotalSec`. */
  async extend(id: string, additionalSec: number, maxTotalSec: number): Promise<BreakRow> {
    const [r] = await this.sql<BreakRow[]>`
      update squeeze_break set end_time = end_time + ${additionalSec} * interval '1 second', break_duration = break_duration + ${additionalSec}, updated_at = now()
      where id = ${id} and status in ('scheduled', 'active') and break_duration + ${additionalSec} <= ${maxTotalSec} returning *`;
    if (r) return r;
    const current = await this.get(id);
    if (current.status === 'scheduled' || current.status === 'active')
      throw invalid(`a break lasts at most ${maxTotalSec} s in all`);
    throw conflict(`break ${id} is ${current.status}`);
  }

  private async ended(id: string): Promise<never> {
    const current = await this.get(id);
    throw conflict(`break ${id} is ${current.status}`);
  }

  /** Leases up to `limit` live breaks to `owner` (taking over lapsed leases), renewing its own. */
  async lease(owner: string, ttlMs: number, limit = 100): Promise<BreakRow[]> {
    return this.sql<BreakRow[]>`
      update squeeze_break set lease_owner = ${owner}, lease_until = now() + ${ttlMs} * interval '1 millisecond'
      where id in (
        select id from squeeze_break
        where (${this.sql.unsafe(LIVE)}) and (lease_owner = ${owner} or lease_until is null or lease_until < now())
        order by start_time limit ${limit} for update skip locked)
      returning *`;
  }

  async release(owner: string): Promise<void> {
    await this.sql`update squeeze_break set lease_owner = null, lease_until = null where lease_owner = ${owner}`;
  }

  /**
   * A status change by the worker: only forward (scheduled → active → completed | failed), only by
   * the holder of a lease that has not lapsed, so neither an operator's cancel nor a new owner's
   * work can be overwritten by a worker that lost its lease.
   */
  async setStatus(
    id: string,
    owner: string,
    status: 'active' | 'completed' | 'failed',
    reason?: string,
  ): Promise<boolean> {
    const from = status === 'active' ? ['scheduled'] : ['scheduled', 'active'];
    const rows = await this.sql`
      update squeeze_break set status = ${status}, reason = coalesce(${reason ?? null}, reason), updated_at = now(),
        lease_owner = case when ${status} in ('completed', 'failed') then null else lease_owner end
      where id = ${id} and lease_owner = ${owner} and lease_until > now() and status in ${this.sql(from)} returning id`;
    return rows.length > 0;
  }

  /** Renews every lease `owner` holds on a live break; the leases of a busy tick do not lapse. */
  async renew(owner: string, ttlMs: number): Promise<void> {
    await this
      .sql`update squeeze_break set lease_until = now() + ${ttlMs} * interval '1 millisecond' where lease_owner = ${owner} and lease_until > now()`;
  }

  async addSegments(rows: NewSegment[]): Promise<number> {
    if (!rows.length) return 0;
    const values = rows.map((r) => ({ ...r, events: this.sql.json(r.events as never) }));
    const inserted = await this
      .sql`insert into squeeze_break_segment ${this.sql(values)} on conflict do nothing returning content_path`;
    return inserted.length;
  }

  async pendingSegments(breakId: string, maxAttempts: number): Promise<SegmentRow[]> {
    return this.sql<
      SegmentRow[]
    >`select * from squeeze_break_segment where break_id = ${breakId} and status = 'pending' and attempts < ${maxAttempts} order by start_time`;
  }

  /** A segment's outcome; a ready segment (players may have it) never goes back. */
  async markSegment(
    s: Pick<SegmentRow, 'break_id' | 'assignment' | 'content_path'>,
    change: { status: SegmentRow['status']; output_uri?: string; error?: string; attempts: number },
  ): Promise<void> {
    await this.sql`
      update squeeze_break_segment set status = ${change.status}, output_uri = ${change.output_uri ?? null}, error = ${change.error ?? null}, attempts = ${change.attempts}, updated_at = now()
      where break_id = ${s.break_id} and assignment = ${s.assignment} and content_path = ${s.content_path} and status <> 'ready'`;
  }

  async segmentCounts(breakId: string): Promise<Record<SegmentRow['status'], number>> {
    const rows = await this.sql<
      { status: SegmentRow['status']; n: number }[]
    >`select status, count(*)::int as n from squeeze_break_segment where break_id = ${breakId} group by status`;
    const out = { pending: 0, ready: 0, failed: 0 };
    for (const r of rows) out[r.status] = r.n;
    return out;
  }

  /** What every instance keeps in memory: breaks live or ended within `retentionMs`, with their ready outputs. */
  async board(retentionMs: number): Promise<{ breaks: BreakRow[]; ready: SegmentRow[] }> {
    const breaks = await this.sql<BreakRow[]>`
      select * from squeeze_break
      where status in ('scheduled', 'active') or (status in ('completed', 'cancelled', 'failed') and end_time > now() - ${retentionMs} * interval '1 millisecond')
      order by start_time`;
    if (!breaks.length) return { breaks, ready: [] };
    const ready = await this.sql<
      SegmentRow[]
    >`select * from squeeze_break_segment where status = 'ready' and break_id in ${this.sql(breaks.map((b) => b.id))}`;
    return { breaks, ready };
  }
}
