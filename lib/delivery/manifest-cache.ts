/**
 * Request collapsing and a micro-cache for rewritten manifests, keyed on the upstream URL:
 * concurrent requests share one upstream fetch; a result stays fresh for a short time (≤ 1 s,
 * never more than half a target duration); a last-good manifest may be served stale for up to two
 * target durations when the upstream fails, with `Age` telling how old it is. Once the cache is
 * half full, a rendering is kept only when its key was fetched before (SecondSight).
 */
import { SecondSight } from './second-sight.js';

export interface Rendered {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Fresh lifetime in ms (0 = never reused: errors). */
  freshMs: number;
  /** How long after storing the entry may still be served when the upstream fails. */
  staleMs: number;
  /** The body as text, kept only for renderings that are rendered further per request. */
  text?: string;
  /** The answer's negotiated forms (ETag, gzip), made on first use by lib/http/representation.ts. */
  forms?: unknown;
  /** A VOD rendering (an EXT-X-ENDLIST playlist, a static MPD): answered with a Last-Modified (issue 27). */
  vod?: boolean;
  /** The upstream's Last-Modified (ms since the epoch) of a VOD rendering, when it sent a valid one. */
  upstreamLastModified?: number;
  /**
   * A rendering made for one answer from a stale one (served while its upstream fails), never
   * cached itself: how old its source is, sent as `Age` (the cache's own hit age is that of this copy).
   */
  staleAgeSec?: number;
}

interface Entry {
  value: Rendered;
  storedAt: number;
}

export interface CacheHit {
  value: Rendered;
  /** Seconds since the entry was fetched, when served from the cache. */
  ageSec?: number;
  /** The same in milliseconds: a rendering derived from a cached one is fresh only for what is left of it. */
  ageMs?: number;
  /** Served past its fresh lifetime because the upstream failed. */
  stale?: true;
}

export type LoadDone = (err: unknown, value?: Rendered) => void;
export type HitDone = (err: unknown, hit?: CacheHit) => void;

export class ManifestCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * Loads in flight, by key; replaced by a copy every 256 loads. A Map that lives on sits in V8's
   * old generation, and what it points at was promoted there too at the next young-generation GC:
   * each request's waiters, exchange and closures, which live for one upstream round trip. Kept
   * young, the map costs a copy of the ~100 loads in flight now and then instead (measured with a
   * stripped proxy: old-space growth 360 → 72 KB per scavenge).
   */
  private inflight = new Map<string, HitDone[]>();
  private loadsStarted = 0;
  private readonly sweeper: NodeJS.Timeout;
  private readonly recent = new SecondSight();
  hits = 0;
  misses = 0;
  staleServed = 0;
  /** Renderings not kept: seen for the first time while the cache was at least half full. */
  notAdmitted = 0;

  /**
   * Bytes held: each entry's body plus its key (entries are bounded by count and by bytes: DVR
   * windows are ~120 KB each). The key is counted because it is the client's URL: a flood of
   * distinct 4 KiB queries with small renderings held 5,000 keys the body budget never saw
   * (issue 24). A key counts 2 bytes per UTF-16 code unit, what V8 may hold it in at most.
   */
  private bytes = 0;

  /**
   * @param admitAllBelow the share of maxEntries and of maxBytes below which every rendering is
   *   kept; above it, only one whose key was fetched before within the last 15 s. Under load most
   *   URLs are asked for once (per-session playlists polled every few seconds, cache-busting
   *   queries): keeping each of them made every cached entry survive into V8's old generation,
   *   seven times the old-space growth and twice the scavenge pauses of an uncached run.
   */
  constructor(
    private readonly maxEntries = 5000,
    private readonly maxBytes = 64 * 1024 * 1024,
    private readonly admitAllBelow = 0.5,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 1000).unref();
  }

  /** The fresh entry for key, synchronously (the hot path's fast lane), or undefined. */
  fresh(key: string, now = Date.now()): CacheHit | undefined {
    const entry = this.entries.get(key);
    // Never below 0: the caller's clock may read a millisecond behind the one that stored (lib/http/wall-clock.ts).
    const ageMs = entry ? Math.max(0, now - entry.storedAt) : 0;
    if (!entry || ageMs >= entry.value.freshMs) return undefined;
    this.hits++;
    return { value: entry.value, ageSec: Math.floor(ageMs / 1000), ageMs };
  }

  /** The fresh entry for key (done at once), else what load() gives. */
  get(key: string, load: (done: LoadDone) => void, done: HitDone): void {
    const hit = this.fresh(key);
    if (hit) done(undefined, hit);
    else this.load(key, load, done);
  }

  /**
   * Joins the in-flight load for key, else starts one. When the load fails (an error, or an answer
   * ≥ 500) a stale entry within its stale window is served instead. Callbacks, not promises: every
   * manifest request that misses the cache comes through here.
   */
  load(key: string, load: (done: LoadDone) => void, done: HitDone): void {
    const waiting = this.inflight.get(key);
    if (waiting) {
      this.hits++;
      waiting.push(done);
      return;
    }
    this.misses++;
    const waiters = [done];
    if ((++this.loadsStarted & 255) === 0) this.inflight = new Map(this.inflight);
    this.inflight.set(key, waiters);
    let called = false;
    const loaded: LoadDone = (err, value) => {
      if (called) return;
      called = true;
      this.inflight.delete(key);
      if (value) this.store(key, value);
      for (const w of waiters) this.settle(key, err, value, w);
    };
    try {
      load(loaded);
    } catch (err) {
      loaded(err);
    }
  }

  private settle(key: string, err: unknown, value: Rendered | undefined, done: HitDone): void {
    if (value && value.status < 500) return done(undefined, { value });
    const stale = this.stale(key);
    if (stale) return done(undefined, stale);
    if (value) return done(undefined, { value });
    done(err);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes the entries hold, keys included (what maxBytes bounds). */
  get bytesHeld(): number {
    return this.bytes;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.bytes = 0;
  }

  private stale(key: string): CacheHit | undefined {
    const entry = this.entries.get(key);
    const now = Date.now();
    if (!entry || now - entry.storedAt >= entry.value.staleMs) return undefined;
    this.staleServed++;
    return { value: entry.value, ageSec: Math.floor((now - entry.storedAt) / 1000), stale: true };
  }

  private store(key: string, value: Rendered): void {
    if (value.status !== 200 || value.freshMs <= 0) return;
    const now = Date.now(); // one clock read for the admission filter and the entry (a runtime call each)
    const seenBefore = this.recent.seen(key, now);
    if (
      !seenBefore &&
      !this.entries.has(key) &&
      (this.entries.size >= this.maxEntries * this.admitAllBelow || this.bytes >= this.maxBytes * this.admitAllBelow)
    ) {
      this.notAdmitted++;
      return;
    }
    this.drop(key); // re-insert: Map order is our eviction order
    this.entries.set(key, { value, storedAt: now });
    this.bytes += entryBytes(key, value);
    while (this.entries.size > this.maxEntries || (this.bytes > this.maxBytes && this.entries.size > 1))
      this.drop(this.entries.keys().next().value!);
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entryBytes(key, entry.value);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, e] of this.entries) if (now - e.storedAt >= Math.max(e.value.freshMs, e.value.staleMs)) this.drop(k);
  }
}

/** What an entry costs against maxBytes: its body and its key. */
function entryBytes(key: string, value: Rendered): number {
  return value.body.byteLength + key.length * 2;
}
