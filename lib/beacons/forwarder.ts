/**
 * Fires tracking beacons at ad servers, asynchronously and at most once (docs/design.md §3, §6).
 *
 * - enqueue() never blocks or throws: a bounded queue, full → dropped and counted.
 * - De-duplication has two guards. A local, time-bounded LRU stops repeats within this instance
 *   before they take a queue slot; the shared `claim` (SET NX in the state store) stops repeats
 *   across instances. When the claim fails (store down or slow) the beacon is forwarded anyway:
 *   an outage then costs at most one extra hit per instance, instead of losing impressions.
 * - Targets come from ad responses (data), so every one goes through the outbound policy
 *   (lib/outbound): its agent checks each connection. No redirects; bodies are always dumped;
 *   5xx and network errors are retried with backoff (off the worker slots), 4xx and refusals
 *   are not.
 */
import { createHash } from 'node:crypto';
import { request, type Agent } from 'undici';
import type { Logger } from '../log/index.js';
import type { Counter, Registry } from '../metrics/index.js';
import type { OutboundPolicy } from '../outbound/index.js';
import type { Beacon } from '../ads/beacon.js';
import { keys } from '../store/state.js';
import { deadline } from '../errors/deadline.js';

export type { Beacon } from '../ads/beacon.js';

export interface BeaconForwarderOptions {
  /** True the first time a key is claimed, across instances (e.g. state.setIfAbsent(key, '1', ttl)). */
  claim: (key: string) => Promise<boolean>;
  /** Decides which targets may be reached (private addresses, configured collaborators). */
  policy: OutboundPolicy;
  maxQueue?: number;
  concurrency?: number;
  /** Tries per beacon, the first included. */
  attempts?: number;
  timeoutMs?: number;
  /** First retry delay; doubled per retry, with jitter. */
  backoffMs?: number;
  /** How long the local guard remembers a beacon; match the claim's TTL. */
  dedupTtlMs?: number;
  /** Entries kept by the local guard. */
  dedupSize?: number;
  metrics?: Registry;
  log?: Logger;
}

export interface BeaconStats {
  /** Waiting, in flight or waiting for a retry, right now. */
  queued: number;
  sent: number;
  /** Gave up: 4xx, retries exhausted, refused target, or dropped in flight at close. */
  failed: number;
  /** Refused at enqueue (queue full or closed) or still queued when close() gave up. */
  dropped: number;
  duplicates: number;
}

type Result = 'sent' | 'failed' | 'refused' | 'dropped' | 'duplicate';

interface Job {
  b: Beacon;
  key: string;
  attempt: number;
}

/** The de-dup key: a hash of (streamId, event, url), under the store's key prefix, no hash tag (spreads over a cluster). */
export function beaconKey(b: Beacon): string {
  const fields = b.breakId ? [b.streamId, b.event, b.url, b.breakId] : [b.streamId, b.event, b.url];
  return `${keys.prefix}beacon:${createHash('sha256').update(JSON.stringify(fields)).digest('base64url')}`;
}

export class BeaconForwarder {
  private readonly o: Required<Omit<BeaconForwarderOptions, 'metrics' | 'log' | 'policy'>> &
    Pick<BeaconForwarderOptions, 'metrics' | 'log' | 'policy'>;
  private readonly agent: Agent;
  /** key → time first seen; Map order is insertion order, so the oldest go first. */
  private readonly seen = new Map<string, number>();
  private queue: Job[] = [];
  private head = 0;
  private active = 0;
  private readonly retryJobs = new Map<NodeJS.Timeout, Job>();
  private readonly stop = new AbortController();
  private closed = false;
  private closing: Promise<void> | undefined;
  private idleWaiters: Array<() => void> = [];
  private lastClaimWarn = 0;
  private readonly counts = { sent: 0, failed: 0, dropped: 0, duplicates: 0 };
  private readonly counters: Partial<Record<Result, Counter>> = {};

  constructor(opts: BeaconForwarderOptions) {
    this.o = {
      ...opts,
      maxQueue: opts.maxQueue ?? 10_000,
      concurrency: Math.max(1, opts.concurrency ?? 8),
      attempts: Math.max(1, opts.attempts ?? 3),
      timeoutMs: opts.timeoutMs ?? 3000,
      backoffMs: opts.backoffMs ?? 250,
      dedupTtlMs: opts.dedupTtlMs ?? 10 * 60_000,
      dedupSize: opts.dedupSize ?? 50_000,
    };
    this.agent = opts.policy.agent({ timeoutMs: this.o.timeoutMs, maxResponseSize: 1024 * 1024 });
    if (opts.metrics) {
      const family = opts.metrics.counter(
        'beacons_forwarded_total',
        'Beacons by outcome (sent, failed, refused, dropped, duplicate)',
      );
      for (const r of ['sent', 'failed', 'refused', 'dropped', 'duplicate'] as const)
        this.counters[r] = family.with({ result: r });
      opts.metrics.gauge('beacons_queued', 'Beacons waiting, in flight or waiting for a retry', () => this.pending);
    }
  }

  get stats(): BeaconStats {
    return { queued: this.pending, ...this.counts };
  }

  /** Accepts a beacon for forwarding. False only when it is dropped (queue full, closed, not a beacon). */
  enqueue(b: Beacon): boolean {
    try {
      if (
        this.closed ||
        !b ||
        typeof b.url !== 'string' ||
        typeof b.streamId !== 'string' ||
        typeof b.event !== 'string'
      ) {
        this.count('dropped');
        return false;
      }
      const key = beaconKey(b);
      if (this.seenRecently(key)) {
        this.count('duplicate');
        return true;
      }
      if (this.queue.length - this.head >= this.o.maxQueue) {
        this.count('dropped');
        return false;
      }
      this.remember(key);
      this.queue.push({ b: { url: b.url, streamId: b.streamId, event: b.event }, key, attempt: 0 });
      this.pump();
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves when nothing is queued, in flight or waiting for a retry (tests, shutdown). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops accepting; lets the backlog drain for up to `graceMs`, then drops what is left. */
  close(graceMs = 2000): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    for (const t of this.retryJobs.keys()) clearTimeout(t);
    this.count('dropped', this.retryJobs.size + (this.queue.length - this.head));
    this.retryJobs.clear();
    this.queue = [];
    this.head = 0;
    this.stop.abort(); // in-flight requests end as failed
    await this.idle();
    await this.agent.close().catch(() => undefined);
  }

  private get pending(): number {
    return this.queue.length - this.head + this.active + this.retryJobs.size;
  }

  private count(r: Result, n = 1): void {
    if (r === 'sent') this.counts.sent += n;
    else if (r === 'failed' || r === 'refused') this.counts.failed += n;
    else if (r === 'dropped') this.counts.dropped += n;
    else this.counts.duplicates += n;
    if (n) this.counters[r]?.inc(n);
  }

  private seenRecently(key: string): boolean {
    const at = this.seen.get(key);
    if (at === undefined) return false;
    if (Date.now() - at < this.o.dedupTtlMs) return true;
    this.seen.delete(key);
    return false;
  }

  private remember(key: string): void {
    this.seen.set(key, Date.now());
    if (this.seen.size > this.o.dedupSize) this.seen.delete(this.seen.keys().next().value!);
  }

  private pump(): void {
    while (this.active < this.o.concurrency && this.head < this.queue.length) {
      const job = this.queue[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.active++;
      void this.run(job).finally(() => {
        this.active--;
        this.pump();
        this.settle();
      });
    }
    this.settle();
  }

  private settle(): void {
    if (this.pending !== 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private async run(job: Job): Promise<void> {
    try {
      if (job.attempt === 0 && !(await this.claimed(job.key))) return this.count('duplicate');
      const outcome = await this.send(job.b);
      if (outcome === 'sent' || outcome === 'refused' || outcome === 'failed') return this.count(outcome);
      // 'retry'
      if (job.attempt + 1 >= this.o.attempts || this.stop.signal.aborted) return this.count('failed');
      this.scheduleRetry({ ...job, attempt: job.attempt + 1 });
    } catch (err) {
      this.o.log?.debug({ err }, 'beacon forwarding failed unexpectedly');
      this.count('failed');
    }
  }

  /** The shared claim, bounded by timeoutMs; a failing store counts as claimed (see the header). */
  private async claimed(key: string): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('claim timed out')), this.o.timeoutMs);
        onStop = () => reject(new Error('closing'));
        this.stop.signal.addEventListener('abort', onStop, { once: true });
      });
      return await Promise.race([this.o.claim(key), timeout]);
    } catch (err) {
      if (this.stop.signal.aborted) return true; // send() then fails at once
      if (Date.now() - this.lastClaimWarn > 10_000) {
        this.lastClaimWarn = Date.now();
        this.o.log?.warn({ err }, 'beacon de-dup store unavailable; forwarding with the local guard only');
      }
      return true;
    } finally {
      clearTimeout(timer);
      if (onStop) this.stop.signal.removeEventListener('abort', onStop);
    }
  }

  private scheduleRetry(job: Job): void {
    const delay = this.o.backoffMs * 2 ** (job.attempt - 1) * (0.75 + Math.random() * 0.5);
    const t = setTimeout(() => {
      this.retryJobs.delete(t);
      this.queue.push(job);
      this.pump();
    }, delay);
    t.unref();
    this.retryJobs.set(t, job);
  }

  private async send(b: Beacon): Promise<'sent' | 'failed' | 'refused' | 'retry'> {
    try {
      this.o.policy.assertUrl(b.url);
    } catch {
      return 'refused'; // the policy logged it
    }
    const limit = deadline(this.o.timeoutMs, this.stop.signal);
    try {
      const res = await request(b.url, {
        method: 'GET',
        dispatcher: this.agent,
        signal: limit.signal,
        headers: { 'user-agent': 'squeezeback-beacon/1' },
      });
      await res.body.dump().catch(() => undefined);
      if (res.statusCode < 400) return 'sent';
      this.o.log?.debug(
        { event: b.event, status: res.statusCode, host: new URL(b.url).host },
        'beacon target answered an error',
      );
      return res.statusCode >= 500 ? 'retry' : 'failed';
    } catch (err) {
      if (
        (err as { code?: string }).code === 'OUTBOUND_REFUSED' ||
        (err as { cause?: { code?: string } }).cause?.code === 'OUTBOUND_REFUSED'
      )
        return 'refused';
      if (this.stop.signal.aborted) return 'failed';
      this.o.log?.debug(
        { event: b.event, err: (err as Error).message, host: new URL(b.url).host },
        'beacon forwarding error',
      );
      return 'retry';
    } finally {
      limit.clear();
    }
  }
}
