/**
 * Stream registration from the hot path (spec "the service (stream state)", rule 1 of the
 * manifest proxy). `touch` only records in memory; a timer flushes all touches since the last
 * flush in one pipelined batch, so no manifest response ever waits on the state store, and a
 * stream seen a thousand times a second costs one write a second.
 */
import { keys, type StateStore } from '../store/index.js';
import type { Logger } from '../log/index.js';

export interface StreamTouch {
  streamId: string;
  eventId?: number;
  assetKey?: string;
  flow: 'dai' | 'squeezeback';
  /** Ad-decision targeting (FWParams), VPRN/PVRN and the client IP, from the preroll ad tag. */
  targeting?: Record<string, string>;
  vprn?: string;
  pvrn?: string;
  clientIp?: string;
}

export class StreamRegistry {
  private pending = new Map<string, StreamTouch & { lastSeen: number }>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  flushFailures = 0;

  constructor(
    private readonly state: StateStore,
    private readonly log: Logger,
    private readonly idleMs: number,
    flushEveryMs = 1000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushEveryMs).unref();
  }

  /** Fire-and-forget: synchronous, allocation-light, never throws. */
  touch(t: StreamTouch): void {
    const prev = this.pending.get(t.streamId);
    if (prev) {
      prev.lastSeen = Date.now();
      if (t.eventId !== undefined) prev.eventId = t.eventId;
      if (t.assetKey !== undefined) prev.assetKey = t.assetKey;
      if (t.targeting !== undefined) Object.assign(prev, { targeting: t.targeting, vprn: t.vprn, pvrn: t.pvrn, clientIp: t.clientIp });
      return;
    }
    this.pending.set(t.streamId, { ...t, lastSeen: Date.now() });
  }

  /** Writes every pending touch in one pipeline; a failed flush is retried with the next one. */
  flush(): Promise<void> {
    if (this.flushing || this.pending.size === 0) return this.flushing ?? Promise.resolve();
    const batch = this.pending;
    this.pending = new Map();
    const b = this.state.batch();
    for (const s of batch.values()) {
      const key = keys.stream(s.streamId);
      const fields: Record<string, string> = { stream_id: s.streamId, last_seen: String(s.lastSeen), flow: s.flow };
      if (s.eventId !== undefined) fields['event_id'] = String(s.eventId);
      if (s.assetKey !== undefined) fields['asset_key'] = s.assetKey;
      if (s.targeting !== undefined) fields['fw_params'] = JSON.stringify(s.targeting);
      if (s.vprn !== undefined) fields['vprn'] = s.vprn;
      if (s.pvrn !== undefined) fields['pvrn'] = s.pvrn;
      if (s.clientIp !== undefined) fields['client_ip'] = s.clientIp;
      b.hset(key, fields).expire(key, this.idleMs);
      if (s.eventId !== undefined) {
        const reg = keys.event(s.eventId, 'streams');
        b.sadd(reg, s.streamId).expire(reg, this.idleMs);
      }
    }
    this.flushing = b
      .exec()
      .catch((err: Error) => {
        this.flushFailures++;
        this.log.warn({ err: err.message, streams: batch.size }, 'stream registry flush failed; retrying with the next flush');
        for (const [id, s] of batch) if (!this.pending.has(id)) this.pending.set(id, s);
      })
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
