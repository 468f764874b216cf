/**
 * The one lease loop of the workers that share work through Postgres (break worker, ID3
 * inspection, cue monitor, feed puller). Each keeps its own claim statement — what may be claimed
 * is domain knowledge — and hands this loop four steps:
 *
 * - `tick`: claim what is free or lapsed and work on what is held (one tick at a time);
 * - `renew`: extend every lease this owner holds, on a clock of its own (a third of the lease),
 *   so a slow source, page or transcoder never lets a lease lapse while its owner lives; it
 *   answers the keys still held, and work whose key is missing was lost to another instance;
 * - `drain`: on stop, abort and await the work in flight;
 * - `release`: on a graceful stop, hand every lease back at once (a killed instance's leases lapse
 *   instead, and another instance's tick takes them over).
 *
 * Every write of a worker's outcome stays fenced on `lease_owner = owner` in its own statement, so
 * an owner that lost its lease can never overwrite the work of the one that took it over.
 */
import type { Logger } from '../log/index.js';

export interface LeaseSteps {
  tick(): Promise<void>;
  /** Extends this owner's leases; answers the keys still held (undefined: nothing to check). */
  renew(): Promise<Iterable<string> | void>;
  release(): Promise<void>;
  drain?(): Promise<void>;
  /** Keys of work in flight, checked against what `renew` answers. */
  inFlight?(): Iterable<string>;
  /** Called for work whose lease `renew` no longer finds (lapsed and taken over). */
  lost?(key: string): void;
}

export interface LeaseLoopOptions {
  /** Names the loop in logs. */
  name: string;
  ttlMs: number;
  tickMs: number;
}

export class LeaseLoop {
  private tickTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly opts: LeaseLoopOptions,
    private readonly steps: LeaseSteps,
    private readonly log: Logger,
  ) {}

  /** How often leases are renewed: three chances before one lapses. */
  get renewEveryMs(): number {
    return Math.max(100, Math.floor(this.opts.ttlMs / 3));
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    this.tickTimer = setInterval(() => void this.tick(), this.opts.tickMs).unref();
    this.renewTimer = setInterval(() => void this.renew(), this.renewEveryMs).unref();
    void this.tick();
  }

  /** One tick at a time: a tick asked for while one runs joins it. */
  tick(): Promise<void> {
    if (this.ticking || this.stopped) return this.ticking ?? Promise.resolve();
    this.ticking = this.steps
      .tick()
      .catch((err: Error) => this.log.warn({ err: err.message }, `${this.opts.name} tick failed`))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  async renew(): Promise<void> {
    if (this.stopped) return;
    // Only work that was in flight before the statement ran can be judged by its answer.
    const before = [...(this.steps.inFlight?.() ?? [])];
    try {
      const held = await this.steps.renew();
      if (!held || !this.steps.lost) return;
      const still = new Set(held);
      for (const key of before) if (!still.has(key)) this.steps.lost(key);
    } catch (err) {
      // Retried on the next beat: the lease may still hold until its time runs out.
      this.log.warn({ err: (err as Error).message }, `${this.opts.name} lease renewal failed`);
    }
  }

  /** Stops ticking and renewing, waits for the tick in flight and drains; `release` hands the leases back, else they lapse. */
  async stop(release = true): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.tickTimer);
    clearInterval(this.renewTimer);
    await this.ticking;
    await this.steps.drain?.();
    if (release)
      await this.steps
        .release()
        .catch((err: Error) => this.log.warn({ err: err.message }, `${this.opts.name} lease release failed`));
  }
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
  lost: boolean;
}

export interface LeasedJobsSteps<J, O> {
  /** The job's work; the signal trips when its lease is lost or the worker stops. */
  execute(job: J, signal: AbortSignal): Promise<O>;
  /** Writes the outcome fenced on the lease; false when the lease was no longer ours. */
  finish(job: J, outcome: O): Promise<boolean>;
  /** The outcome was written (metrics, a log line). */
  finished(job: J, outcome: O): void;
  /** The outcome was thrown away: the lease was lost, or the worker stopped. */
  discarded(job: J): void;
  /** The bookkeeping itself failed (the store was down). */
  failed(job: J, err: Error): void;
  /** A slot is free again. */
  freed?(): void;
  /** The worker is stopping: outcomes are thrown away from then on. */
  stopped?(): boolean;
}

/**
 * Jobs that each run under a lease of their own (ID3 inspection, ad conditioning), keyed by job
 * id: a job is aborted when a renewal no longer finds its lease or the worker stops, and its
 * outcome is written only while the lease is still ours. `steps()` hands the loop its drain,
 * inFlight and lost steps.
 */
export class LeasedJobs<J extends { job_id: string }, O> {
  private readonly running = new Map<string, Running>();
  private stopping = false;

  constructor(private readonly steps_: LeasedJobsSteps<J, O>) {}

  get size(): number {
    return this.running.size;
  }

  /** Claims and starts jobs while fewer than `max` run (and the worker is not stopping). */
  async fill(max: number, claim: () => Promise<J | undefined>): Promise<void> {
    while (!this.stopping && !this.steps_.stopped?.() && this.running.size < max) {
      const job = await claim();
      if (!job) return;
      this.run(job);
    }
  }

  run(job: J): void {
    const entry: Running = { abort: new AbortController(), done: Promise.resolve(), lost: false };
    entry.done = this.steps_
      .execute(job, entry.abort.signal)
      .then(async (outcome) => {
        const discard = entry.lost || this.stopping || this.steps_.stopped?.();
        if (discard || !(await this.steps_.finish(job, outcome))) return this.steps_.discarded(job);
        this.steps_.finished(job, outcome);
      })
      .catch((err: Error) => this.steps_.failed(job, err))
      .finally(() => {
        this.running.delete(job.job_id);
        if (!this.stopping) this.steps_.freed?.();
      });
    this.running.set(job.job_id, entry);
  }

  steps(): Required<Pick<LeaseSteps, 'drain' | 'inFlight' | 'lost'>> {
    return {
      drain: async () => {
        this.stopping = true;
        for (const r of this.running.values()) r.abort.abort(new Error('the worker stopped'));
        await Promise.all([...this.running.values()].map((r) => r.done));
      },
      inFlight: () => this.running.keys(),
      lost: (jobId) => {
        const r = this.running.get(jobId);
        if (!r) return;
        r.lost = true;
        r.abort.abort(new Error('the lease was lost'));
      },
    };
  }
}
