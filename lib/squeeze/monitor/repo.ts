/** The cue monitor's Postgres rows (migration 011): one lease per monitored event, one claim per acted-on cue. */
import type { Sql } from '../../store/index.js';

export class CueMonitorRepo {
  constructor(private readonly sql: Sql) {}

  /**
   * Leases to `owner` every event whose config says `trigger: "scte35"` that nobody else holds
   * (taking over lapsed leases, renewing its own); answers the ids it holds. One statement, so the
   * event list is fresh on every tick and two instances never both win one event: the conflicting
   * update re-checks its condition on the row the other instance just wrote.
   */
  async lease(owner: string, ttlMs: number): Promise<number[]> {
    const rows = await this.sql<{ event_id: number }[]>`
      insert into squeeze_cue_monitor_lease (event_id, owner, lease_until)
      select id, ${owner}, now() + ${ttlMs} * interval '1 millisecond' from squeeze_event_config where config->>'trigger' = 'scte35'
      on conflict (event_id) do update set owner = excluded.owner, lease_until = excluded.lease_until
      where squeeze_cue_monitor_lease.owner = excluded.owner or squeeze_cue_monitor_lease.lease_until < now()
      returning event_id`;
    return rows.map((r) => r.event_id);
  }

  /** Extends this owner's leases between ticks; answers the event ids still held. */
  async renew(owner: string, ttlMs: number): Promise<string[]> {
    const rows = await this.sql<{ event_id: number }[]>`
      update squeeze_cue_monitor_lease set lease_until = now() + ${ttlMs} * interval '1 millisecond' where owner = ${owner} returning event_id`;
    return rows.map((r) => String(r.event_id));
  }

  /** Hands the leases back (a graceful stop), so another instance takes over on its next tick. */
  async release(owner: string): Promise<void> {
    await this.sql`delete from squeeze_cue_monitor_lease where owner = ${owner}`;
  }

  /** Claims a cue for `eventId`; false when it was claimed before (by any instance, before any restart). */
  async claim(eventId: number, key: string, kind: string): Promise<boolean> {
    const rows = await this
      .sql`insert into squeeze_cue_claim (event_id, cue_key, kind) values (${eventId}, ${key}, ${kind}) on conflict do nothing returning cue_key`;
    return rows.length > 0;
  }

  /** Records what the claimed cue did (a started or ended break, or why nothing). */
  async settle(eventId: number, key: string, kind: string, outcome: string, breakId?: string): Promise<void> {
    await this
      .sql`update squeeze_cue_claim set outcome = ${outcome}, break_id = ${breakId ?? null} where event_id = ${eventId} and cue_key = ${key} and kind = ${kind}`;
  }

  /** Gives a claim back after a failure that may pass (the store was down), so the next poll retries the cue. */
  async unclaim(eventId: number, key: string, kind: string): Promise<void> {
    await this.sql`delete from squeeze_cue_claim where event_id = ${eventId} and cue_key = ${key} and kind = ${kind}`;
  }

  /** Forgets claims older than any playlist window keeps a cue. */
  async prune(olderThanMs: number): Promise<void> {
    await this.sql`delete from squeeze_cue_claim where claimed_at < now() - ${olderThanMs} * interval '1 millisecond'`;
  }
}
