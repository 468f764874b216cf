/**
 * The stream model and the event registry (spec "the service (stream state)"; docs/design.md §3).
 * A stream is a hash `sqz:{st:<id>}:stream`; an event's registry is a sorted set
 * `sqz:{ev:<id>}:streams` scored by LastSeen, so idle streams drop out by score and a break finds
 * the live streams of its event with one range read plus one pipelined read of their hashes.
 * `touch` (the hot path) only records in memory; a timer flushes every touch since the last flush
 * in one pipeline, so no response waits on the state store and a stream seen a thousand times a
 * second costs one write a second.
 */
import { keys, type StateStore } from '../store/index.js';
import type { Logger } from '../log/index.js';

/**
 * Streams per pipeline. Building a pipeline is synchronous work on the event loop (≈ 3 µs a stream
 * in memory, more for ioredis commands): 250 keeps each slice under a millisecond, so a flush of
 * thousands of streams never shows in the manifest path's tail latency.
 */
const FLUSH_CHUNK = 250;
/** Time another instance's flush pipeline may take after its timer fires (a Redis round trip or a few). */
const SETTLE_MARGIN_MS = 250;

export interface StreamTouch {
  streamId: string;
  eventId?: number;
  assetKey?: string;
  flow: 'dai' | 'squeezeback';
  /** Ad-decision targeting (FWParams), VPRN/PVRN and the client IP, from the preroll ad tag. */
  targeting?: ReadonlyMap<string, string>;
  /** Unset with targeting: a random 10-digit value is stored unless the stream already has one. */
  vprn?: string | undefined;
  pvrn?: string | undefined;
  clientIp?: string;
  /** Upstream path (and query) of the master playlist or MPD last served for the stream (ID3 inspection reads it). */
  masterPath?: string;
  /** The brand the brand-recognition rules resolved from the stream's first request. */
  brand?: string;
}

type PendingTouch = StreamTouch & { lastSeen: number };

/** A 10-digit numeric value, as ad servers expect for vprn/pvrn (a cache-buster, not a secret). */
export function randomTenDigits(): string {
  return String(1_000_000_000 + Math.floor(Math.random() * 9_000_000_000));
}

/** Same entries in the same order (the order reaches the stored fw_params and ad requests). */
function sameEntries(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  const other = a.entries();
  for (const [k, v] of b) {
    const [ka, va] = other.next().value as [string, string];
    if (ka !== k || va !== v) return false;
  }
  return true;
}

export interface Stream {
  stream_id: string;
  event_id: number | null;
  asset_key: string | null;
  flow: string;
  fw_params: Record<string, string>;
  vprn: string | null;
  pvrn: string | null;
  client_ip: string | null;
  master_path: string | null;
  brand: string | null;
  last_seen: string;
  created: string;
}

function toStream(h: Record<string, string>): Stream | undefined {
  if (!h['stream_id']) return undefined;
  let params: Record<string, string> = {};
  try {
    params = h['fw_params'] ? (JSON.parse(h['fw_params']) as Record<string, string>) : {};
  } catch {
    params = {};
  }
  return {
    stream_id: h['stream_id'],
    event_id: h['event_id'] ? Number(h['event_id']) : null,
    asset_key: h['asset_key'] ?? null,
    flow: h['flow'] ?? 'dai',
    fw_params: params,
    vprn: h['vprn'] ?? null,
    pvrn: h['pvrn'] ?? null,
    client_ip: h['client_ip'] ?? null,
    master_path: h['master_path'] ?? null,
    brand: h['brand'] ?? null,
    last_seen: new Date(Number(h['last_seen'])).toISOString(),
    created: new Date(Number(h['created'] ?? h['last_seen'])).toISOString(),
  };
}

export class StreamRegistry {
  private pending = new Map<string, PendingTouch>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  flushFailures = 0;

  constructor(
    private readonly state: StateStore,
    private readonly log: Logger,
    private readonly idleMs: number,
    private readonly flushEveryMs = 1000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushEveryMs).unref();
  }

  /**
   * Waits until every touch made before the call, on any instance, is in the state store: what a
   * break must do before it reads an event's streams (issue 25: a stream registered less than a
   * second before a PUT was missed, its touch still pending in memory). This instance's touches are
   * flushed now; other instances' (a shared store) are flushed by their own timers within one
   * flush interval, so the call waits out the rest of that interval (plus a margin for the write)
   * from `sinceMs`, the moment the request arrived.
   */
  async settled(sinceMs = Date.now()): Promise<void> {
    await this.flush();
    if (this.state.kind !== 'redis') return; // one process owns the store: nothing else is pending
    const wait = sinceMs + this.flushEveryMs + SETTLE_MARGIN_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  /**
   * The manifest path's touch: updates a stream already pending since the last flush in place, with
   * no object built (the common case: players poll every few seconds). False when it is not pending.
   */
  refresh(streamId: string, eventId: number | undefined, assetKey: string | undefined, masterPath?: string): boolean {
    const prev = this.pending.get(streamId);
    if (!prev) return false;
    prev.lastSeen = Date.now();
    // Equal values are not stored again: the new string (a slice of this request's URL, which it
    // keeps alive) would be held until the next visit, surviving scavenges into the old generation.
    if (eventId !== undefined && prev.eventId !== eventId) prev.eventId = eventId;
    if (assetKey !== undefined && prev.assetKey !== assetKey) prev.assetKey = assetKey;
    if (masterPath !== undefined && prev.masterPath !== masterPath) prev.masterPath = masterPath;
    return true;
  }

  /** Fire-and-forget: synchronous, allocation-light, never throws. The registry keeps t. */
  touch(t: StreamTouch): void {
    if (this.refresh(t.streamId, t.eventId, t.assetKey, t.masterPath)) {
      if (t.targeting !== undefined) {
        // Likewise only what changed is kept: a repeat visit's targeting is usually the same.
        const prev = this.pending.get(t.streamId)!;
        if (!prev.targeting || !sameEntries(prev.targeting, t.targeting)) prev.targeting = t.targeting;
        if (prev.vprn !== t.vprn) prev.vprn = t.vprn;
        if (prev.pvrn !== t.pvrn) prev.pvrn = t.pvrn;
        if (t.clientIp !== undefined && prev.clientIp !== t.clientIp) prev.clientIp = t.clientIp;
      }
      if (t.brand !== undefined) this.pending.get(t.streamId)!.brand = t.brand;
      return;
    }
    const entry = t as PendingTouch;
    entry.lastSeen = Date.now();
    this.pending.set(t.streamId, entry);
  }

  /**
   * Writes every pending touch in pipelines of at most FLUSH_CHUNK streams (so neither a Redis
   * pipeline nor the in-memory store blocks the event loop for long); a failed chunk is retried
   * with the next flush.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.pending.size === 0) return Promise.resolve();
    const all = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = (async () => {
      const registries = new Set<string>();
      for (let i = 0; i < all.length; i += FLUSH_CHUNK) {
        const chunk = all.slice(i, i + FLUSH_CHUNK);
        try {
          await this.write(chunk, registries);
        } catch (err) {
          this.flushFailures++;
          this.log.warn({ err: (err as Error).message, streams: chunk.length }, 'stream registry flush failed; retrying with the next flush');
          for (const s of chunk) if (!this.pending.has(s.streamId)) this.pending.set(s.streamId, s);
        }
        await new Promise((r) => setImmediate(r));
      }
      try {
        await this.prune(registries);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'stream registry prune failed; it runs again with the next flush');
      }
    })().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** One chunk of touches; the event registries it wrote to are added to registries. */
  private write(touches: PendingTouch[], registries: Set<string>): Promise<void> {
    const b = this.state.batch();
    for (const s of touches) {
      const key = keys.stream(s.streamId);
      const fields: Record<string, string> = { stream_id: s.streamId, last_seen: String(s.lastSeen), flow: s.flow };
      if (s.eventId !== undefined) fields['event_id'] = String(s.eventId);
      if (s.assetKey !== undefined) fields['asset_key'] = s.assetKey;
      if (s.targeting !== undefined) fields['fw_params'] = JSON.stringify(Object.fromEntries(s.targeting));
      if (s.vprn !== undefined) fields['vprn'] = s.vprn;
      if (s.pvrn !== undefined) fields['pvrn'] = s.pvrn;
      if (s.clientIp !== undefined) fields['client_ip'] = s.clientIp;
      if (s.masterPath !== undefined) fields['master_path'] = s.masterPath;
      if (s.brand !== undefined) fields['brand'] = s.brand;
      b.hset(key, fields).hsetnx(key, 'created', String(s.lastSeen)).expire(key, this.idleMs);
      // A generated id stays claimed while its stream lives, so no instance hands it out again.
      if (s.flow === 'squeezeback') b.expire(keys.streamClaim(s.streamId), this.idleMs);
      if (s.targeting !== undefined) {
        if (s.vprn === undefined) b.hsetnx(key, 'vprn', randomTenDigits());
        if (s.pvrn === undefined) b.hsetnx(key, 'pvrn', randomTenDigits());
      }
      if (s.eventId !== undefined) {
        const reg = keys.event(s.eventId, 'streams');
        b.zadd(reg, s.lastSeen, s.streamId);
        registries.add(reg);
      }
    }
    return b.exec();
  }

  /** Drops idle streams from the registries a flush wrote to, once per flush (not per chunk). */
  private prune(registries: Set<string>): Promise<void> {
    if (registries.size === 0) return Promise.resolve();
    const b = this.state.batch();
    const cutoff = Date.now() - this.idleMs;
    for (const reg of registries) b.zremRangeByScore(reg, -Infinity, cutoff).expire(reg, this.idleMs);
    return b.exec();
  }

  /** Live stream ids of an event (seen within the idle time), oldest first. */
  async streamIdsOf(eventId: number): Promise<string[]> {
    return this.state.zrangeByScore(keys.event(eventId, 'streams'), Date.now() - this.idleMs, Infinity);
  }

  /** The streams behind ids, in one pipelined read; expired ones are left out. */
  async load(ids: string[]): Promise<Stream[]> {
    const hashes = await this.state.hgetallMany(ids.map((id) => keys.stream(id)));
    return hashes.map(toStream).filter((s): s is Stream => s !== undefined);
  }

  /** Every live stream of an event: one range read and one pipelined read, whatever the count. */
  async streamsOf(eventId: number): Promise<Stream[]> {
    return this.load(await this.streamIdsOf(eventId));
  }

  async get(streamId: string): Promise<Stream | undefined> {
    return toStream(await this.state.hgetall(keys.stream(streamId)));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
