/**
 * The stream model and the event registry (spec "the service (stream state)"; docs/design.md §3).
 * A stream is a hash `sqz:{st:<id>}:stream`; an event's registry is a sorted set
 * `sqz:{ev:<id>}:streams` scored by LastSeen, so idle streams drop out by score and a break finds
 * the live streams of its event with one range read plus one pipelined read of their hashes.
 * `touch` (the hot path) only records in memory; a timer flushes every touch since the last flush
 * in one pipeline, so no response waits on the state store and a stream seen a thousand times a
 * second costs one write a second.
 */
import { keys, type Batch, type StateStore } from '../store/index.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';

/**
 * Streams per pipeline. Building a pipeline is synchronous work on the event loop (≈ 3 µs a stream
 * in memory, more for ioredis commands): 250 keeps each slice under a millisecond, so a flush of
 * thousands of streams never shows in the manifest path's tail latency.
 */
const FLUSH_CHUNK = 250;
/** Time another instance's flush pipeline may take after its timer fires (a Redis round trip or a few). */
const SETTLE_MARGIN_MS = 250;

/**
 * Bounds of what one stream record may hold (issue 24 item 4; docs/decisions.md). Every field of a
 * record comes from outside; none may make a record grow with the request.
 */
export const STREAM_LIMITS = Object.freeze({
  /** A longer id is not a stream id (the DAI provider's are `UUID:LOC`, ≈ 45 characters): not recorded. */
  streamIdChars: 256,
  assetKeyChars: 256,
  /** A master path longer than this is recorded without its query (the path itself is at most 2,048). */
  masterPathChars: 1024,
  /** fw_params as stored (JSON): parameters are kept in order while they fit, the rest left out. */
  targetingChars: 4096,
  clientIpChars: 64,
  brandChars: 256,
});

/** Streams one instance keeps by default; the oldest idle ones are evicted beyond it. */
export const DEFAULT_MAX_STREAMS = 100_000;
/** How often one stream's proof is looked up in the state store at most (a stream registered on another instance). */
const PROOF_RECHECK_MS = 2000;
const PROOF_LOOKUPS_MAX = 32;
const PROOF_CHECKED_MAX = 10_000;
/**
 * A stream's score in its event registry is rewritten when it is this fraction of the idle time old
 * (docs/capacity.md): the registry only tells streams seen within the idle time from the others,
 * and one ZADD per refresh on the event's one shard is the first Redis hot spot of a big event.
 */
const REGISTRY_SCORE_EVERY = 0.25;

export interface StreamRegistryOptions {
  /** Streams this instance keeps (and writes); the oldest idle first are evicted beyond it. */
  maxStreams?: number;
  flushEveryMs?: number;
  metrics?: Registry;
}

/**
 * What this instance knows of a stream between flushes. `mark` is when it was last placed at the
 * back of the eviction order (admitted, or passed over); a stream seen since then gets a second
 * chance, one not seen since is evicted (CLOCK).
 */
interface Known {
  lastSeen: number;
  mark: number;
  /** Registered through the preroll ad tag (here or, as its record says, on another instance). */
  proven: boolean;
  /** The brand recognised for it (a beacon metric's label). */
  brand?: string | undefined;
  /** Its record was written by this instance (so `created` is set: no HSETNX on a refresh). */
  written?: boolean;
  /** The event registry score last written for it: a refresh moves the score only every REGISTRY_SCORE_EVERY of the idle time. */
  scored?: { event: number; at: number };
}

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

/**
 * Other write-behind state that rides on the registry's flush (one timer, one pipeline more per
 * flush, and `flush()`/`settled()` include it): `write` queues what is pending into the batch and
 * answers how to put it back should the batch fail, or undefined when nothing is pending.
 */
export interface FlushContributor {
  write(batch: Batch): (() => void) | undefined;
}

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

/** fw_params as stored: whole parameters in order while the JSON fits STREAM_LIMITS.targetingChars. */
export function boundedTargeting(targeting: ReadonlyMap<string, string>): string {
  const whole = JSON.stringify(Object.fromEntries(targeting));
  if (whole.length <= STREAM_LIMITS.targetingChars) return whole;
  // Entries, not assignments: a name like `__proto__` stays a name.
  const kept: Array<[string, string]> = [];
  let size = 2;
  for (const [k, v] of targeting) {
    const add = JSON.stringify(k).length + JSON.stringify(v).length + 2;
    if (size + add > STREAM_LIMITS.targetingChars) continue;
    kept.push([k, v]);
    size += add;
  }
  return JSON.stringify(Object.fromEntries(kept));
}

/** A master path as stored: whole up to STREAM_LIMITS.masterPathChars, else without its query (a cut query would be a wrong URL). */
export function boundedMasterPath(path: string): string {
  if (path.length <= STREAM_LIMITS.masterPathChars) return path;
  const q = path.indexOf('?');
  return (q === -1 ? path : path.slice(0, q)).slice(0, 2048);
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
  /**
   * Every stream this instance keeps, in CLOCK order (issue 24 item 4): at `maxStreams` the first
   * one not seen since eviction last passed over it goes, its record deleted with the next flush.
   * That is oldest idle first, to the resolution of one flush interval.
   */
  private readonly known = new Map<string, Known>();
  private evictedIds: string[] = [];
  private readonly maxStreams: number;
  private readonly flushEveryMs: number;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private lastSweep = Date.now();
  /** Proof look-ups (stream → when) for streams not proven here, so each is asked at most every PROOF_RECHECK_MS. */
  private readonly proofChecked = new Map<string, number>();
  private proofLookups = 0;
  flushFailures = 0;
  evictions = 0;
  private readonly contributors: FlushContributor[] = [];
  private readonly evictedCounter;

  constructor(
    private readonly state: StateStore,
    private readonly log: Logger,
    private readonly idleMs: number,
    flushEveryMsOrOptions: number | StreamRegistryOptions = 1000,
  ) {
    const opts =
      typeof flushEveryMsOrOptions === 'number' ? { flushEveryMs: flushEveryMsOrOptions } : flushEveryMsOrOptions;
    this.maxStreams = opts.maxStreams ?? DEFAULT_MAX_STREAMS;
    this.flushEveryMs = opts.flushEveryMs ?? 1000;
    this.timer = setInterval(() => void this.flush(), this.flushEveryMs).unref();
    this.evictedCounter = opts.metrics
      ?.counter('streams_evicted_total', 'Streams evicted (oldest idle first) because the instance held MAX_STREAMS')
      .with();
    opts.metrics?.gauge('streams_known', 'Streams this instance keeps (at most MAX_STREAMS)', () => this.known.size);
  }

  /** Adds write-behind state to every flush (the break reach records, lib/squeeze/breaks/reach.ts). */
  alsoFlush(c: FlushContributor): void {
    this.contributors.push(c);
  }

  /** Streams this instance keeps now. */
  get size(): number {
    return this.known.size;
  }

  /** A stream this instance has registered and not yet forgotten (idle or evicted). One map lookup. */
  isKnown(streamId: string): boolean {
    return this.known.has(streamId);
  }

  /**
   * Whether a DAI stream has earned server-side beacons: registered through the preroll ad tag
   * (docs/decisions.md, issue 24). Synchronous, from memory. A stream registered on another
   * instance is looked up in the state store behind the caller (at most every PROOF_RECHECK_MS per
   * stream, PROOF_LOOKUPS_MAX at once), so a later call answers true.
   */
  isProven(streamId: string): boolean {
    const k = this.known.get(streamId);
    if (k?.proven) return true;
    if (streamId.length > STREAM_LIMITS.streamIdChars || this.proofLookups >= PROOF_LOOKUPS_MAX) return false;
    const now = Date.now();
    const at = this.proofChecked.get(streamId);
    if (at !== undefined && now - at < PROOF_RECHECK_MS) return false;
    if (this.proofChecked.size >= PROOF_CHECKED_MAX) this.proofChecked.clear();
    this.proofChecked.set(streamId, now);
    this.proofLookups++;
    this.state
      .hget(keys.stream(streamId), 'proven')
      .then(
        (v) => {
          const again = this.known.get(streamId);
          if (v !== '1' || !again) return;
          again.proven = true;
          this.proofChecked.delete(streamId);
        },
        () => undefined, // the store is down: the stream stays unproven here, and is asked again later
      )
      .finally(() => this.proofLookups--);
    return false;
  }

  /** The brand recognised for a stream this instance keeps. */
  brandOf(streamId: string): string | undefined {
    return this.known.get(streamId)?.brand;
  }

  /** The stream's entry, created (evicting the oldest idle one at the cap) when new. */
  private admit(streamId: string, now: number): Known {
    let k = this.known.get(streamId);
    if (!k) {
      if (this.known.size >= this.maxStreams) this.evictOne(now);
      k = { lastSeen: now, mark: now, proven: false };
      this.known.set(streamId, k);
    }
    return k;
  }

  /**
   * CLOCK: a stream seen since it was placed at the back goes to the back again; the first one not
   * seen since is evicted. After one full pass every stream is unseen, so this ends.
   */
  private evictOne(now: number): void {
    for (let passes = 0; passes <= this.known.size; passes++) {
      const first = this.known.entries().next().value as [string, Known] | undefined;
      if (!first) return;
      const [id, k] = first;
      this.known.delete(id);
      if (k.lastSeen > k.mark && passes < this.known.size) {
        k.mark = now;
        this.known.set(id, k);
        continue;
      }
      this.forget(id);
      this.evictions++;
      this.evictedCounter?.inc();
      return;
    }
  }

  /** Drops an evicted stream here; its record goes with the next flush. */
  private forget(streamId: string): void {
    this.pending.delete(streamId);
    this.evictedIds.push(streamId);
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
   * `now`: the caller's clock reading, when it has one (a clock read is ~60 ns on a paravirtualised
   * machine, a visible share of a micro-cached answer).
   */
  refresh(
    streamId: string,
    eventId: number | undefined,
    assetKey: string | undefined,
    masterPath?: string,
    now = Date.now(),
  ): boolean {
    const prev = this.pending.get(streamId);
    if (!prev) return false;
    prev.lastSeen = now;
    // Equal values are not stored again: the new string (a slice of this request's URL, which it
    // keeps alive) would be held until the next visit, surviving scavenges into the old generation.
    if (eventId !== undefined && prev.eventId !== eventId) prev.eventId = eventId;
    if (assetKey !== undefined && prev.assetKey !== assetKey) prev.assetKey = assetKey;
    if (masterPath !== undefined && prev.masterPath !== masterPath) prev.masterPath = masterPath;
    return true;
  }

  /**
   * Fire-and-forget: synchronous, allocation-light, never throws. The registry keeps t. A touch
   * with targeting on the DAI flow (the preroll ad tag) proves the stream; an id longer than
   * STREAM_LIMITS.streamIdChars is not a stream id and is not recorded.
   */
  touch(t: StreamTouch): void {
    if (t.streamId.length > STREAM_LIMITS.streamIdChars) return;
    const now = Date.now();
    const k = this.admit(t.streamId, now);
    if (t.targeting !== undefined && t.flow === 'dai') k.proven = true;
    if (t.brand !== undefined && k.brand !== t.brand) k.brand = t.brand.slice(0, STREAM_LIMITS.brandChars);
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
    entry.lastSeen = now;
    this.pending.set(t.streamId, entry);
  }

  /** Forgets streams idle past idleMs (their records expire in the store by themselves). At most once per half idle time. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweep < this.idleMs / 2) return;
    this.lastSweep = now;
    const cutoff = now - this.idleMs;
    for (const [id, k] of this.known) if (k.lastSeen < cutoff && !this.pending.has(id)) this.known.delete(id);
  }

  /**
   * Writes every pending touch in pipelines of at most FLUSH_CHUNK streams (so neither a Redis
   * pipeline nor the in-memory store blocks the event loop for long); a failed chunk is retried
   * with the next flush.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    this.sweep();
    const extra = this.contributors.length ? this.state.batch() : undefined;
    const putBack = extra ? this.contributors.map((c) => c.write(extra)).filter((u) => u !== undefined) : [];
    if (this.pending.size === 0 && this.evictedIds.length === 0 && putBack.length === 0) return Promise.resolve();
    const all = [...this.pending.values()];
    this.pending = new Map();
    for (const s of all) {
      const k = this.known.get(s.streamId);
      if (k) k.lastSeen = s.lastSeen;
    }
    const evicted = this.evictedIds;
    this.evictedIds = [];
    this.flushing = (async () => {
      const registries = new Set<string>();
      if (evicted.length) await this.deleteEvicted(evicted);
      for (let i = 0; i < all.length; i += FLUSH_CHUNK) {
        const chunk = all.slice(i, i + FLUSH_CHUNK);
        try {
          const written = await this.write(chunk, registries);
          for (const w of written) w();
        } catch (err) {
          this.flushFailures++;
          this.log.warn(
            { err: (err as Error).message, streams: chunk.length },
            'stream registry flush failed; retrying with the next flush',
          );
          for (const s of chunk) if (!this.pending.has(s.streamId)) this.pending.set(s.streamId, s);
        }
        await new Promise((r) => setImmediate(r));
      }
      if (putBack.length) {
        try {
          await extra!.exec();
        } catch (err) {
          this.flushFailures++;
          this.log.warn({ err: (err as Error).message }, 'write-behind records failed; retrying with the next flush');
          for (const undo of putBack) undo();
        }
      }
      try {
        await this.prune(registries);
      } catch (err) {
        this.log.warn(
          { err: (err as Error).message },
          'stream registry prune failed; it runs again with the next flush',
        );
      }
    })().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /**
   * One chunk of touches; the event registries it wrote to are added to registries. Resolves to
   * what to remember once the chunk is stored (a failed chunk is written whole again).
   */
  private async write(touches: PendingTouch[], registries: Set<string>): Promise<Array<() => void>> {
    const b = this.state.batch();
    const done: Array<() => void> = [];
    for (const s of touches) {
      const k = this.known.get(s.streamId);
      const key = keys.stream(s.streamId);
      const fields: Record<string, string> = { stream_id: s.streamId, last_seen: String(s.lastSeen), flow: s.flow };
      if (s.eventId !== undefined) fields['event_id'] = String(s.eventId);
      if (s.assetKey !== undefined) fields['asset_key'] = s.assetKey.slice(0, STREAM_LIMITS.assetKeyChars);
      if (s.targeting !== undefined) {
        fields['fw_params'] = boundedTargeting(s.targeting);
        // The preroll ad tag registered it: the proof other instances look up before they fire its beacons.
        if (s.flow === 'dai') fields['proven'] = '1';
      }
      if (s.vprn !== undefined) fields['vprn'] = s.vprn.slice(0, 32);
      if (s.pvrn !== undefined) fields['pvrn'] = s.pvrn.slice(0, 32);
      if (s.clientIp !== undefined) fields['client_ip'] = s.clientIp.slice(0, STREAM_LIMITS.clientIpChars);
      if (s.masterPath !== undefined) fields['master_path'] = boundedMasterPath(s.masterPath);
      if (s.brand !== undefined) fields['brand'] = s.brand.slice(0, STREAM_LIMITS.brandChars);
      b.hset(key, fields);
      if (!k?.written) {
        b.hsetnx(key, 'created', String(s.lastSeen));
        if (k) done.push(() => (k.written = true));
      }
      b.expire(key, this.idleMs);
      // A generated id stays claimed while its stream lives, so no instance hands it out again.
      if (s.flow === 'squeezeback') b.expire(keys.streamClaim(s.streamId), this.idleMs);
      if (s.targeting !== undefined) {
        if (s.vprn === undefined) b.hsetnx(key, 'vprn', randomTenDigits());
        if (s.pvrn === undefined) b.hsetnx(key, 'pvrn', randomTenDigits());
      }
      if (s.eventId !== undefined) {
        const reg = keys.event(s.eventId, 'streams');
        const event = s.eventId;
        if (!k?.scored || k.scored.event !== event || s.lastSeen - k.scored.at >= this.idleMs * REGISTRY_SCORE_EVERY) {
          b.zadd(reg, s.lastSeen, s.streamId);
          if (k) done.push(() => (k.scored = { event, at: s.lastSeen }));
        }
        registries.add(reg);
      }
    }
    await b.exec();
    return done;
  }

  /** Deletes the records of evicted streams (an event registry drops their ids by score, and readers skip missing records). */
  private async deleteEvicted(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += FLUSH_CHUNK) {
      const b = this.state.batch();
      for (const id of ids.slice(i, i + FLUSH_CHUNK)) b.del(keys.stream(id));
      try {
        await b.exec();
      } catch (err) {
        // Not retried: the records expire after the idle time anyway.
        this.log.warn(
          { err: (err as Error).message, streams: ids.length },
          'deleting evicted stream records failed; they expire by themselves',
        );
        return;
      }
    }
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
