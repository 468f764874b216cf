/** In-process state store for a single instance (the embedded default). Expiry is lazy, plus a periodic sweep. */
import { EventEmitter } from 'node:events';
import type { Batch, StateStore } from './state.js';

/** A sorted set is a Map member → score, sorted when read. */
class ZSet extends Map<string, number> {}

type Value = string | Map<string, string> | Set<string> | ZSet;

interface Entry {
  value: Value;
  expiresAt: number; // 0 = never
}

class WrongTypeError extends Error {
  code = 'WRONGTYPE';
  constructor() {
    super('WRONGTYPE Operation against a key holding the wrong kind of value');
  }
}

export class MemoryStateStore implements StateStore {
  readonly kind = 'memory' as const;
  private readonly data = new Map<string, Entry>();
  private readonly bus = new EventEmitter().setMaxListeners(0);
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 10_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepEveryMs).unref();
  }

  private entry(key: string): Entry | undefined {
    const e = this.data.get(key);
    if (e && e.expiresAt && e.expiresAt <= Date.now()) {
      this.data.delete(key);
      return undefined;
    }
    return e;
  }

  private typed<T extends Value>(key: string, make: () => T, is: (v: Value) => v is T): T {
    const e = this.entry(key);
    if (!e) {
      const value = make();
      this.data.set(key, { value, expiresAt: 0 });
      return value;
    }
    if (!is(e.value)) throw new WrongTypeError();
    return e.value;
  }

  private readTyped<T extends Value>(key: string, is: (v: Value) => v is T): T | undefined {
    const e = this.entry(key);
    if (!e) return undefined;
    if (!is(e.value)) throw new WrongTypeError();
    return e.value;
  }

  private dropIfEmpty(key: string, v: Map<string, string> | Set<string> | ZSet): void {
    if (v.size === 0) this.data.delete(key);
  }

  setSync(key: string, value: string, ttlMs?: number): void {
    this.data.set(key, { value, expiresAt: ttlMs ? Date.now() + ttlMs : 0 });
  }
  delSync(key: string): boolean {
    return this.entry(key) !== undefined && this.data.delete(key);
  }
  expireSync(key: string, ttlMs: number): boolean {
    const e = this.entry(key);
    if (!e) return false;
    e.expiresAt = Date.now() + ttlMs;
    return true;
  }
  hsetSync(key: string, fields: Record<string, string>): void {
    const h = this.typed(key, () => new Map<string, string>(), isMap);
    // An equal value keeps the string already stored: rewriting a stream's hash every second then
    // leaves its unchanged fields' new strings to die young instead of replacing old ones.
    for (const f in fields) if (h.get(f) !== fields[f]) h.set(f, fields[f]!);
  }
  hdelSync(key: string, field: string): boolean {
    const h = this.readTyped(key, isMap);
    if (!h) return false;
    const had = h.delete(field);
    this.dropIfEmpty(key, h);
    return had;
  }
  saddSync(key: string, members: string[]): number {
    const s = this.typed(key, () => new Set<string>(), isSet);
    let added = 0;
    for (const m of members) if (!s.has(m) && s.add(m)) added++;
    return added;
  }
  sremSync(key: string, members: string[]): number {
    const s = this.readTyped(key, isSet);
    if (!s) return 0;
    let removed = 0;
    for (const m of members) if (s.delete(m)) removed++;
    this.dropIfEmpty(key, s);
    return removed;
  }

  zaddSync(key: string, score: number, member: string): void {
    this.typed(key, () => new ZSet(), isZSet).set(member, score);
  }
  zremRangeByScoreSync(key: string, min: number, max: number): number {
    const z = this.readTyped(key, isZSet);
    if (!z) return 0;
    let removed = 0;
    for (const [m, score] of z) if (score >= min && score <= max && z.delete(m)) removed++;
    this.dropIfEmpty(key, z);
    return removed;
  }

  async get(key: string): Promise<string | null> {
    const e = this.entry(key);
    if (!e) return null;
    if (typeof e.value !== 'string') throw new WrongTypeError();
    return e.value;
  }
  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.setSync(key, value, ttlMs);
  }
  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.entry(key)) return false;
    this.setSync(key, value, ttlMs);
    return true;
  }
  async del(key: string): Promise<boolean> {
    return this.delSync(key);
  }
  async ttl(key: string): Promise<number> {
    const e = this.entry(key);
    if (!e) return -2;
    return e.expiresAt ? Math.max(0, e.expiresAt - Date.now()) : -1;
  }
  async expire(key: string, ttlMs: number): Promise<boolean> {
    return this.expireSync(key, ttlMs);
  }
  async hset(key: string, fields: Record<string, string>): Promise<void> {
    this.hsetSync(key, fields);
  }
  async hget(key: string, field: string): Promise<string | null> {
    return this.readTyped(key, isMap)?.get(field) ?? null;
  }
  async hgetall(key: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.readTyped(key, isMap) ?? []);
  }
  async hdel(key: string, field: string): Promise<boolean> {
    return this.hdelSync(key, field);
  }
  async sadd(key: string, ...members: string[]): Promise<number> {
    return this.saddSync(key, members);
  }
  async srem(key: string, ...members: string[]): Promise<number> {
    return this.sremSync(key, members);
  }
  async smembers(key: string): Promise<string[]> {
    return [...(this.readTyped(key, isSet) ?? [])];
  }
  async zrangeByScore(key: string, min: number, max: number): Promise<string[]> {
    const z = this.readTyped(key, isZSet);
    if (!z) return [];
    return [...z]
      .filter(([, score]) => score >= min && score <= max)
      .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
      .map(([m]) => m);
  }
  async zaddCapped(
    key: string,
    score: number,
    member: string,
    opts: { minScore: number; cap: number; ttlMs: number },
  ): Promise<boolean> {
    this.zremRangeByScoreSync(key, -Infinity, opts.minScore - 1e-9);
    const z = this.readTyped(key, isZSet);
    if (opts.cap > 0 && !z?.has(member) && (z?.size ?? 0) >= opts.cap) return false;
    this.zaddSync(key, score, member);
    this.data.get(key)!.expiresAt = Date.now() + opts.ttlMs;
    return true;
  }
  async zcard(key: string): Promise<number> {
    return this.readTyped(key, isZSet)?.size ?? 0;
  }
  async incrMany(increments: Array<{ key: string; by: number; ttlMs: number }>): Promise<number[]> {
    return increments.map(({ key, by, ttlMs }) => {
      const current = this.entry(key);
      const value = Number(current?.value ?? 0) + by;
      if (current) current.value = String(value);
      else this.setSync(key, String(value), ttlMs);
      return value;
    });
  }
  async hgetallMany(keys: string[]): Promise<Array<Record<string, string>>> {
    return keys.map((k) => Object.fromEntries(this.readTyped(k, isMap) ?? []));
  }
  async publish(channel: string, message: string): Promise<void> {
    // Delivered asynchronously, as Redis would.
    setImmediate(() => this.bus.emit(channel, message));
  }
  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    this.bus.on(channel, handler);
    return async () => {
      this.bus.off(channel, handler);
    };
  }
  /** In process there is no round trip to save: each command applies at once, exec() only settles. */
  batch(): Batch {
    const b: Batch = {
      set: (k, v, ttl) => (this.setSync(k, v, ttl), b),
      del: (k) => (this.delSync(k), b),
      expire: (k, ttl) => (this.expireSync(k, ttl), b),
      hset: (k, f) => (this.hsetSync(k, f), b),
      hsetnx: (k, f, v) => {
        const h = this.typed(k, () => new Map<string, string>(), isMap);
        if (!h.has(f)) h.set(f, v);
        return b;
      },
      hdel: (k, f) => (this.hdelSync(k, f), b),
      sadd: (k, m) => (this.saddSync(k, [m]), b),
      srem: (k, m) => (this.sremSync(k, [m]), b),
      zadd: (k, score, m) => (this.zaddSync(k, score, m), b),
      zremRangeByScore: (k, min, max) => (this.zremRangeByScoreSync(k, min, max), b),
      exec: async () => {},
    };
    return b;
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.bus.removeAllListeners();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, e] of this.data) if (e.expiresAt && e.expiresAt <= now) this.data.delete(k);
  }
}

function isMap(v: Value): v is Map<string, string> {
  return v instanceof Map && !(v instanceof ZSet);
}
function isZSet(v: Value): v is ZSet {
  return v instanceof ZSet;
}
function isSet(v: Value): v is Set<string> {
  return v instanceof Set;
}
