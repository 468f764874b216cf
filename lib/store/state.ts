/**
 * The state store: short-lived shared state (streams, registries, snapshots) and pub/sub between
 * instances. Redis when REDIS_URL is set, in-process memory otherwise; both pass one contract suite
 * (test/store/state-contract.ts). TTLs are in milliseconds.
 */
export interface Batch {
  set(key: string, value: string, ttlMs?: number): Batch;
  del(key: string): Batch;
  expire(key: string, ttlMs: number): Batch;
  hset(key: string, fields: Record<string, string>): Batch;
  hsetnx(key: string, field: string, value: string): Batch;
  hdel(key: string, field: string): Batch;
  sadd(key: string, member: string): Batch;
  srem(key: string, member: string): Batch;
  zadd(key: string, score: number, member: string): Batch;
  zremRangeByScore(key: string, min: number, max: number): Batch;
  /** Sends every queued command in one round trip. */
  exec(): Promise<void>;
}

export interface StateStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** SET NX: true when this call created the key (leases, de-duplication). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(key: string): Promise<boolean>;
  /** Remaining time to live in ms; -1 without expiry, -2 when the key is absent. */
  ttl(key: string): Promise<number>;
  expire(key: string, ttlMs: number): Promise<boolean>;
  hset(key: string, fields: Record<string, string>): Promise<void>;
  hget(key: string, field: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, field: string): Promise<boolean>;
  sadd(key: string, ...members: string[]): Promise<number>;
  srem(key: string, ...members: string[]): Promise<number>;
  smembers(key: string): Promise<string[]>;
  /** Sorted sets: members with scores in [min, max] (Infinity allowed), ascending by score. */
  zrangeByScore(key: string, min: number, max: number): Promise<string[]>;
  zcard(key: string): Promise<number>;
  /**
   * INCRBY on several counters in one round trip; a counter created here expires after its ttlMs
   * (an existing one keeps its expiry). Answers the new values in order.
   */
  incrMany(increments: Array<{ key: string; by: number; ttlMs: number }>): Promise<number[]>;
  /**
   * Admission to a capped sorted set, atomically: members scored below `minScore` are dropped, then
   * `member` is added with `score` when it is already there or fewer than `cap` members remain
   * (cap 0 = no cap); the key's TTL is set to `ttlMs`. True when member is in the set afterwards.
   */
  zaddCapped(
    key: string,
    score: number,
    member: string,
    opts: { minScore: number; cap: number; ttlMs: number },
  ): Promise<boolean>;
  /** Several hashes in one round trip (a pipeline); {} for a missing key. */
  hgetallMany(keys: string[]): Promise<Array<Record<string, string>>>;
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  batch(): Batch;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Key names. Everything about one event shares the hash tag `{ev:<id>}`, so multi-key operations
 * on one event stay on one Redis Cluster slot.
 */
export const keys = {
  prefix: 'sqz:',
  event: (eventId: string | number, part: string) => `sqz:{ev:${eventId}}:${part}`,
  stream: (streamId: string) => `sqz:{st:${streamId}}:stream`,
  /** A generated stream id's claim (value: its event id), kept alive with the stream. */
  streamClaim: (streamId: string) => `sqz:{st:${streamId}}:claim`,
  global: (part: string) => `sqz:{g}:${part}`,
  /** What one squeeze break's renderings reached (issue 30.2), under the break's own hash tag. */
  squeezeBreak: (breakId: string, part: string) => `sqz:{br:${breakId}}:${part}`,
  channel: (name: string) => `sqz:ch:${name}`,
};
