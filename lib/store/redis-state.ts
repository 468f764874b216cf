/**
 * Redis state store (ioredis). Commands time out and are not queued while disconnected, so a Redis
 * outage fails fast (callers degrade to their in-memory snapshot) instead of hanging requests;
 * the client reconnects on its own. Pub/sub uses a second connection, re-subscribed on reconnect.
 */
import { Redis, type ChainableCommander } from 'ioredis';
import type { Batch, StateStore } from './state.js';
import type { Logger } from '../log/index.js';

const COMMAND_TIMEOUT_MS = 2000;
/** zaddCapped in one atomic step (one key: safe on Redis Cluster). */
const ZADD_CAPPED = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
local cap = tonumber(ARGV[4])
if cap > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[2]) and redis.call('ZCARD', KEYS[1]) >= cap then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export class RedisStateStore implements StateStore {
  readonly kind = 'redis' as const;
  private readonly handlers = new Map<string, Set<(message: string) => void>>();
  private subscriber: Redis | undefined;

  private constructor(
    private readonly client: Redis,
    private readonly log: Logger,
  ) {}

  /** Connects, retrying until ready or until the timeout passes. */
  static async connect(url: string, log: Logger, connectTimeoutMs = 10_000, keyPrefix = ''): Promise<RedisStateStore> {
    const client = new Redis(url, {
      keyPrefix, // keys only: pub/sub channels are not prefixed
      commandTimeout: COMMAND_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 3000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    let lastError = '';
    client.on('error', (err: Error) => {
      if (err.message !== lastError) log.warn({ err: err.message }, 'redis error');
      lastError = err.message;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.disconnect();
        reject(new Error(`Redis at ${redact(url)} is unreachable: ${lastError || 'timed out'}`));
      }, connectTimeoutMs);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return new RedisStateStore(client, log);
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(key);
  }
  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.client.set(key, value, 'PX', ttlMs);
    else await this.client.set(key, value);
  }
  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.client.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
  }
  async del(key: string): Promise<boolean> {
    return (await this.client.del(key)) > 0;
  }
  async ttl(key: string): Promise<number> {
    return this.client.pttl(key);
  }
  async expire(key: string, ttlMs: number): Promise<boolean> {
    return (await this.client.pexpire(key, ttlMs)) === 1;
  }
  async hset(key: string, fields: Record<string, string>): Promise<void> {
    await this.client.hset(key, fields);
  }
  async hget(key: string, field: string): Promise<string | null> {
    return this.client.hget(key, field);
  }
  async hgetall(key: string): Promise<Record<string, string>> {
    return this.client.hgetall(key);
  }
  async hdel(key: string, field: string): Promise<boolean> {
    return (await this.client.hdel(key, field)) > 0;
  }
  async sadd(key: string, ...members: string[]): Promise<number> {
    return members.length ? this.client.sadd(key, ...members) : 0;
  }
  async srem(key: string, ...members: string[]): Promise<number> {
    return members.length ? this.client.srem(key, ...members) : 0;
  }
  async smembers(key: string): Promise<string[]> {
    return this.client.smembers(key);
  }
  async zrangeByScore(key: string, min: number, max: number): Promise<string[]> {
    return this.client.zrangebyscore(key, score(min), score(max));
  }
  async zaddCapped(key: string, score: number, member: string, opts: { minScore: number; cap: number; ttlMs: number }): Promise<boolean> {
    return (await this.client.eval(ZADD_CAPPED, 1, key, String(score), member, String(opts.minScore), String(opts.cap), String(Math.max(1, Math.round(opts.ttlMs))))) === 1;
  }
  async zcard(key: string): Promise<number> {
    return this.client.zcard(key);
  }
  async incrMany(increments: Array<{ key: string; by: number; ttlMs: number }>): Promise<number[]> {
    if (!increments.length) return [];
    const p = this.client.pipeline();
    // PEXPIRE NX (Redis 7): only a counter that has no expiry yet (just created) gets one.
    for (const { key, by, ttlMs } of increments) p.incrby(key, by).call('PEXPIRE', key, ttlMs, 'NX');
    const results = (await p.exec()) ?? [];
    return increments.map((_, i) => {
      const [err, value] = results[2 * i]!;
      if (err) throw err;
      return Number(value);
    });
  }
  async hgetallMany(keys: string[]): Promise<Array<Record<string, string>>> {
    if (!keys.length) return [];
    const p = this.client.pipeline();
    for (const k of keys) p.hgetall(k);
    const results = (await p.exec()) ?? [];
    return results.map(([err, value]) => {
      if (err) throw err;
      return value as Record<string, string>;
    });
  }
  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(channel, message);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    const sub = this.subscriberConnection();
    let set = this.handlers.get(channel);
    if (!set) {
      this.handlers.set(channel, (set = new Set()));
      await sub.subscribe(channel);
    }
    set.add(handler);
    return async () => {
      const s = this.handlers.get(channel);
      if (!s?.delete(handler) || s.size) return;
      this.handlers.delete(channel);
      await sub.unsubscribe(channel).catch(() => undefined);
    };
  }

  private subscriberConnection(): Redis {
    if (this.subscriber) return this.subscriber;
    // The subscriber keeps its offline queue so subscriptions survive a reconnect.
    const sub = this.client.duplicate({ enableOfflineQueue: true, lazyConnect: false, commandTimeout: undefined });
    sub.on('error', (err: Error) => this.log.debug({ err: err.message }, 'redis subscriber error'));
    sub.on('message', (channel: string, message: string) => {
      for (const h of this.handlers.get(channel) ?? []) {
        try {
          h(message);
        } catch (err) {
          this.log.error({ err, channel }, 'pub/sub handler failed');
        }
      }
    });
    this.subscriber = sub;
    return sub;
  }

  batch(): Batch {
    const p: ChainableCommander = this.client.pipeline();
    const b: Batch = {
      set: (k, v, ttl) => (ttl ? p.set(k, v, 'PX', ttl) : p.set(k, v), b),
      del: (k) => (p.del(k), b),
      expire: (k, ttl) => (p.pexpire(k, ttl), b),
      hset: (k, f) => (p.hset(k, f), b),
      hsetnx: (k, f, v) => (p.hsetnx(k, f, v), b),
      hdel: (k, f) => (p.hdel(k, f), b),
      sadd: (k, m) => (p.sadd(k, m), b),
      srem: (k, m) => (p.srem(k, m), b),
      zadd: (k, sc, m) => (p.zadd(k, sc, m), b),
      zremRangeByScore: (k, min, max) => (p.zremrangebyscore(k, score(min), score(max)), b),
      exec: async () => {
        const results = (await p.exec()) ?? [];
        const failed = results.find(([err]) => err);
        if (failed) throw failed[0];
      },
    };
    return b;
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.client.quit(), this.subscriber?.quit()]);
  }
}

function score(n: number): string {
  return n === Infinity ? '+inf' : n === -Infinity ? '-inf' : String(n);
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
