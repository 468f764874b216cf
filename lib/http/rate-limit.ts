/**
 * Per-client token buckets (docs/design.md §13): the decision is always local and synchronous, so
 * no response waits on a store. When a shared counter is configured (Redis), each instance adds
 * what it let through to per-second counters there, behind the requests (flushed every
 * `flushMs`), and blocks a client locally for the rest of the second once the sum over all
 * instances passes `rate + burst`. Across N instances a client gets at most that per second, plus
 * what slips through in one flush interval.
 */
import { problem, type HttpError } from './problem.js';

export interface RateRule {
  /** Tokens added per second. */
  rate: number;
  /** Bucket size: how many requests may come at once. */
  burst: number;
}

export type RateVerdict = { ok: true } | { ok: false; retryAfterSec: number };

/** Adds to shared counters and answers their new values (one round trip for the batch). */
export type SharedCounters = (increments: Array<{ key: string; by: number; ttlMs: number }>) => Promise<number[]>;

export interface RateLimiterOptions {
  rules: Record<string, RateRule>;
  shared?: SharedCounters | undefined;
  /** Prefix of the shared counters' keys. */
  keyPrefix?: string;
  flushMs?: number;
  /** Clients remembered per rule; the oldest are forgotten beyond it. */
  maxClients?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
  /** Blocked by the shared count until this time (ms). */
  blockedUntil: number;
}

const OK: RateVerdict = Object.freeze({ ok: true });

/** The 429 problem for a refused request. */
export function rateLimited(retryAfterSec: number): HttpError {
  return problem('rate-limited', 'too many requests from this client; retry later', {
    'Retry-After': String(retryAfterSec),
  });
}

export class RateLimiter {
  private readonly buckets = new Map<string, Map<string, Bucket>>();
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly maxClients: number;
  private flushing = false;

  constructor(private readonly opts: RateLimiterOptions) {
    this.now = opts.now ?? Date.now;
    this.maxClients = opts.maxClients ?? 100_000;
    for (const name of Object.keys(opts.rules)) this.buckets.set(name, new Map());
    if (opts.shared) {
      this.timer = setInterval(() => void this.flush(), opts.flushMs ?? 100);
      this.timer.unref();
    }
  }

  /** Takes `cost` tokens of `rule` for `client`; a rule that is not configured never limits. */
  take(rule: string, client: string, cost = 1): RateVerdict {
    const r = this.opts.rules[rule];
    const clients = this.buckets.get(rule);
    if (!r || !clients || r.rate <= 0) return OK;
    const now = this.now();
    let b = clients.get(client);
    if (!b) {
      if (clients.size >= this.maxClients) clients.delete(clients.keys().next().value as string);
      b = { tokens: r.burst, at: now, blockedUntil: 0 };
      clients.set(client, b);
    } else {
      b.tokens = Math.min(r.burst, b.tokens + ((now - b.at) / 1000) * r.rate);
      b.at = now;
    }
    if (now < b.blockedUntil)
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil((b.blockedUntil - now) / 1000)) };
    if (b.tokens < cost) {
      b.tokens = Math.max(b.tokens - cost, -r.burst); // a client that keeps knocking waits longer
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil((cost - b.tokens) / r.rate)) };
    }
    b.tokens -= cost;
    if (this.opts.shared) {
      const key = `${rule}|${client}`;
      this.pending.set(key, (this.pending.get(key) ?? 0) + cost);
    }
    return OK;
  }

  /** Sends what this instance let through since the last flush; learns which clients are over. */
  async flush(): Promise<void> {
    if (!this.opts.shared || this.flushing || this.pending.size === 0) return;
    this.flushing = true;
    const batch = this.pending;
    this.pending = new Map();
    const second = Math.floor(this.now() / 1000);
    const entries = [...batch];
    try {
      const totals = await this.opts.shared(
        entries.map(([key, by]) => ({ key: `${this.opts.keyPrefix ?? ''}rl:${key}:${second}`, by, ttlMs: 2000 })),
      );
      entries.forEach(([key, _by], i) => {
        const bar = key.indexOf('|');
        const rule = this.opts.rules[key.slice(0, bar)];
        const b = this.buckets.get(key.slice(0, bar))?.get(key.slice(bar + 1));
        if (rule && b && (totals[i] ?? 0) > rule.rate + rule.burst) b.blockedUntil = (second + 1) * 1000;
      });
    } catch {
      // The shared store is down: the local buckets still hold every client to its own instance's limit.
    } finally {
      this.flushing = false;
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
