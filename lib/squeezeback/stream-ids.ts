/**
 * Generated stream ids of the squeezeback flow (docs/design.md §3): 9 random digits, claimed with one
 * SET NX in the state store (value: the event id; TTL: the stream idle time, renewed by the stream
 * registry's flush while the stream is seen), so no two live streams share an id on any instance.
 * With `max_concurrent_streams` the stream must also be admitted to the event's registry, atomically
 * capped (StateStore.zaddCapped): the count is shared by instances and streams already playing
 * stay. Variant requests check ids from memory; an id this instance has not seen (another
 * instance created it) costs one read of its claim, then it is known here too.
 */
import { randomInt } from 'node:crypto';
import { keys, type StateStore } from '../store/index.js';
import { unavailable } from '../errors/index.js';

const ATTEMPTS = 8;
const KNOWN_MAX = 500_000;
const MISS_MS = 2000;

export type Claim = { streamId: string } | { overCap: true };

export class StreamIds {
  private known = new Map<string, { eventId: number; seenAt: number }>();
  private misses = new Map<string, number>();

  constructor(
    private readonly state: StateStore,
    private readonly idleMs: number,
  ) {}

  async claim(eventId: number, cap: number): Promise<Claim> {
    let streamId: string | undefined;
    for (let i = 0; i < ATTEMPTS && !streamId; i++) {
      const id = String(randomInt(100_000_000, 1_000_000_000));
      if (await this.state.setIfAbsent(keys.streamClaim(id), String(eventId), this.idleMs)) streamId = id;
    }
    if (!streamId) throw unavailable('no free stream id was found; retry');
    if (cap > 0) {
      const now = Date.now();
      const admitted = await this.state.zaddCapped(keys.event(eventId, 'streams'), now, streamId, {
        minScore: now - this.idleMs,
        cap,
        ttlMs: this.idleMs,
      });
      if (!admitted) {
        void this.state.del(keys.streamClaim(streamId)).catch(() => undefined);
        return { overCap: true };
      }
    }
    this.remember(streamId, eventId);
    return { streamId };
  }

  /** Whether the stream is live on this event: from memory when known here, else one read of its claim. */
  check(streamId: string, eventId: number): boolean | Promise<boolean> {
    if (!streamId) return false;
    const now = Date.now();
    const k = this.known.get(streamId);
    if (k && now - k.seenAt < this.idleMs) {
      k.seenAt = now;
      return k.eventId === eventId;
    }
    const missed = this.misses.get(streamId);
    if (missed !== undefined && now - missed < MISS_MS) return false;
    return this.state.get(keys.streamClaim(streamId)).then((v) => {
      if (v === null) {
        if (this.misses.size >= KNOWN_MAX) this.misses.clear();
        this.misses.set(streamId, Date.now());
        return false;
      }
      this.remember(streamId, Number(v));
      return Number(v) === eventId;
    });
  }

  private remember(streamId: string, eventId: number): void {
    if (this.known.size >= KNOWN_MAX) this.known = new Map();
    this.known.set(streamId, { eventId, seenAt: Date.now() });
    this.misses.delete(streamId);
  }
}
