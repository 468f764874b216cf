/**
 * Redis state store (ioredis): one server, a Redis Cluster or a Sentinel-managed primary
 * (./redis-url.ts). Commands time out and are not queued while disconnected, so a Redis outage
 * fails fast (callers degrade to their in-memory snapshot) instead of hanging requests; the client
 * reconnects on its own. Pub/sub uses a second connection, re-subscribed on reconnect.
 *
 * On a cluster every single-key command goes to its slot's node; the multi-key round trips
 * (batches, incrMany, hgetallMany) are sent as single commands that ioredis's auto-pipelining
 * groups per node, since a pipeline may not span nodes. Keys that must change together share a
 * hash tag (./state.ts `keys`), and no command here spans two keys.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Batch, StateStore } from './state.js';
import type { Logger } from '../log/index.js';
import { parseRedisUrl, redactRedisUrl } from './redis-url.js';
// Registers this client's "service down" errors with the error kernel (answered 503).
import './dependency.js';

type Client = Redis | Cluster;
type Command = [name: string, ...args: Array<string | number>];
type Reply = [Error | null, unknown];

const COMMAND_TIMEOUT_MS = 2000;
/** Keys per pipeline of a many-key read: a few milliseconds of Redis time, far inside COMMAND_TIMEOUT_MS. */
const READ_CHUNK = 1000;
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
  private subscriber: Client | undefined;

  private constructor(
    private readonly client: Client,
    private readonly log: Logger,
  ) {}

  /** Connects, retrying until ready or until the timeout passes. */
  static async connect(url: string, log: Logger, connectTimeoutMs = 10_000, keyPrefix = ''): Promise<RedisStateStore> {
    const client = createClient(url, keyPrefix);
    let lastError = '';
    client.on('error', (err: Error) => {
      if (err.message !== lastError) log.warn({ err: err.message }, 'redis error');
      lastError = err.message;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.disconnect();
        reject(new Error(`Redis at ${redactRedisUrl(url)} is unreachable: ${lastError || 'timed out'}`));
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
  async zaddCapped(
    key: string,
    score: number,
    member: string,
    opts: { minScore: number; cap: number; ttlMs: number },
  ): Promise<boolean> {
    return (
      (await this.client.eval(
        ZADD_CAPPED,
        1,
        key,
        String(score),
        member,
        String(opts.minScore),
        String(opts.cap),
        String(Math.max(1, Math.round(opts.ttlMs))),
      )) === 1
    );
  }
  async zcard(key: string): Promise<number> {
    return this.client.zcard(key);
  }
  async incrMany(increments: Array<{ key: string; by: number; ttlMs: number }>): Promise<number[]> {
    if (!increments.length) return [];
    // PEXPIRE NX (Redis 7): only a counter that has no expiry yet (just created) gets one.
    const replies = await this.send(
      increments.flatMap(({ key, by, ttlMs }): Command[] => [
        ['INCRBY', key, by],
        ['PEXPIRE', key, ttlMs, 'NX'],
      ]),
    );
    return increments.map((_, i) => Number(valueOf(replies[2 * i]!)));
  }
  /**
   * In pipelines of READ_CHUNK keys, one after another: an event-wide break reads every stream of
   * its event, and 100,000 HGETALLs in one pipeline queue behind each other past
   * COMMAND_TIMEOUT_MS (measured: the break answered 503 after 8.5 s; docs/capacity.md). Between
   * chunks the event loop is free, so the manifest path is not held up by reply parsing.
   */
  async hgetallMany(keys: string[]): Promise<Array<Record<string, string>>> {
    const out: Array<Record<string, string>> = [];
    for (let i = 0; i < keys.length; i += READ_CHUNK) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      const replies = await this.send(keys.slice(i, i + READ_CHUNK).map((k): Command => ['HGETALL', k]));
      for (const r of replies) out.push(hashOf(valueOf(r)));
    }
    return out;
  }

  /** Several commands in one round trip: a pipeline on one server, auto-pipelined per node on a cluster. */
  private async send(commands: Command[]): Promise<Reply[]> {
    if (this.client instanceof Cluster) {
      const client = this.client;
      const settled = await Promise.allSettled(commands.map(([name, ...args]) => client.call(name, ...args)));
      return settled.map((r): Reply => (r.status === 'fulfilled' ? [null, r.value] : [r.reason as Error, undefined]));
    }
    const p = this.client.pipeline();
    for (const [name, ...args] of commands) p.call(name, ...args);
    return ((await p.exec()) ?? []) as Reply[];
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

  private subscriberConnection(): Client {
    if (this.subscriber) return this.subscriber;
    // The subscriber keeps its offline queue so subscriptions survive a reconnect.
    const sub =
      this.client instanceof Cluster
        ? this.client.duplicate(undefined, {
            enableOfflineQueue: true,
            lazyConnect: false,
            redisOptions: { ...this.client.options.redisOptions, commandTimeout: undefined },
          })
        : this.client.duplicate({ enableOfflineQueue: true, lazyConnect: false, commandTimeout: undefined });
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
    const queued: Command[] = [];
    const q = (...c: Command) => (queued.push(c), b);
    const b: Batch = {
      set: (k, v, ttl) => (ttl ? q('SET', k, v, 'PX', ttl) : q('SET', k, v)),
      del: (k) => q('DEL', k),
      expire: (k, ttl) => q('PEXPIRE', k, ttl),
      hset: (k, f) => q('HSET', k, ...Object.entries(f).flat()),
      hsetnx: (k, f, v) => q('HSETNX', k, f, v),
      hdel: (k, f) => q('HDEL', k, f),
      sadd: (k, m) => q('SADD', k, m),
      srem: (k, m) => q('SREM', k, m),
      zadd: (k, sc, m) => q('ZADD', k, sc, m),
      zremRangeByScore: (k, min, max) => q('ZREMRANGEBYSCORE', k, score(min), score(max)),
      exec: async () => {
        if (!queued.length) return;
        const failed = (await this.send(queued)).find(([err]) => err);
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

function valueOf([err, value]: Reply): unknown {
  if (err) throw err;
  return value;
}

/** HGETALL's raw reply (field, value, …) as the object ioredis's own hgetall answers. */
function hashOf(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const a = reply as string[];
  for (let i = 0; i + 1 < a.length; i += 2) out[a[i]!] = a[i + 1]!;
  return out;
}

function createClient(url: string, keyPrefix: string): Client {
  const common: RedisOptions = {
    keyPrefix, // keys only: pub/sub channels are not prefixed
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
  };
  const target = parseRedisUrl(url);
  const creds =
    target.kind === 'single'
      ? {}
      : {
          ...(target.username ? { username: target.username } : {}),
          ...(target.password ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        };
  if (target.kind === 'cluster') {
    return new Cluster(target.nodes, {
      redisOptions: { ...common, ...creds },
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: (times) => Math.min(times * 200, 2000),
      // A failover moves slots: follow MOVED/ASK and retry while the cluster elects a new primary.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 300,
      slotsRefreshTimeout: 2000,
    });
  }
  const opts: RedisOptions = {
    ...common,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  };
  if (target.kind === 'sentinel')
    return new Redis({
      ...opts,
      ...creds,
      sentinels: target.sentinels,
      name: target.name,
      db: target.db,
      sentinelRetryStrategy: (times) => Math.min(times * 200, 2000),
    });
  return new Redis(url, opts);
}
