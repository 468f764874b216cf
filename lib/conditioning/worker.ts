/**
 * The conditioning worker (docs/design.md §1: workers in the same process, work leased through
 * Postgres), on the shared lease loop (lib/store/lease.ts) like the ID3 inspection worker: every
 * tick it claims due jobs up to `maxJobs` (ffmpeg is CPU-bound: one or two per instance), runs each
 * under a job deadline while the loop renews every lease this owner holds on its own clock, and
 * writes the outcome fenced on the lease. A job whose lease a renewal no longer finds was taken
 * over: it is aborted and its outcome dropped. A lapsed lease is taken over by another instance;
 * after `maxAttempts` claims the job fails, so a creative that kills its instance cannot go round
 * forever. A graceful stop aborts the jobs and hands their leases back at once.
 */
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import { LeaseLoop, LeasedJobs } from '../store/lease.js';
import type { CreativeRepo, CreativeRow, Finish } from './repo.js';
import { deadline } from '../errors/deadline.js';

export interface ConditioningWorkerOptions {
  owner: string;
  leaseMs: number;
  tickMs: number;
  maxJobs: number;
  jobTimeoutMs: number;
  maxAttempts: number;
}

export interface ConditioningWorkerDeps {
  repo: CreativeRepo;
  /** Conditions one creative; throws with the reason it cannot. */
  condition(job: CreativeRow, signal: AbortSignal): Promise<Extract<Finish, { state: 'ready' }>['renditions']>;
  log: Logger;
  metrics: Registry;
}

export class ConditioningWorker {
  private readonly lease: LeaseLoop;
  /** Jobs running here, by job id (a new id per queuing, so a re-queued creative is another job). */
  private readonly running: LeasedJobs<CreativeRow, Finish>;
  private readonly results;
  private readonly toReady;
  /** Jobs this instance ran to an outcome (tests: two instances never condition one creative twice). */
  ran = 0;

  constructor(
    private readonly deps: ConditioningWorkerDeps,
    private readonly opts: ConditioningWorkerOptions,
  ) {
    const c = deps.metrics.counter(
      'ad_conditioning_jobs_total',
      'Ad creative conditioning jobs finished here, by result',
    );
    this.results = {
      ready: c.with({ result: 'ready' }),
      failed: c.with({ result: 'failed' }),
      lost: c.with({ result: 'lease_lost' }),
    };
    this.toReady = deps.metrics
      .histogram(
        'ad_conditioning_seconds_to_ready',
        'Seconds from queuing a creative to its renditions being ready',
        [1, 2, 5, 10, 20, 30, 60, 120, 300],
      )
      .with({});
    deps.metrics.gauge(
      'ad_conditioning_jobs_running',
      'Ad creative conditioning jobs running here',
      () => this.running.size,
    );
    const { owner, leaseMs } = opts;
    this.running = new LeasedJobs<CreativeRow, Finish>({
      execute: (job, signal) => this.execute(job, signal),
      finish: (job, outcome) => deps.repo.finish(job, owner, outcome),
      finished: (job, outcome) => {
        this.ran++;
        this.results[outcome.state].inc();
        if (outcome.state === 'ready') this.toReady.observe(outcome.renditions.seconds_to_ready);
        deps.log.info(
          {
            key: job.key,
            job: job.job_id,
            state: outcome.state,
            error: outcome.state === 'failed' ? outcome.error : undefined,
          },
          'ad conditioning finished',
        );
      },
      discarded: () => this.results.lost.inc(),
      failed: (job, err) => deps.log.warn({ err: err.message, key: job.key }, 'ad conditioning bookkeeping failed'),
      // A slot is free: take the next due job now rather than at the next tick.
      freed: () => void this.tick(),
      stopped: () => this.stopped,
    });
    this.lease = new LeaseLoop(
      { name: 'ad conditioning', ttlMs: leaseMs, tickMs: opts.tickMs },
      {
        tick: () => this.claim(),
        renew: () => deps.repo.renew(owner, leaseMs),
        release: () => deps.repo.release(owner),
        ...this.running.steps(),
      },
      deps.log,
    );
  }

  private get stopped(): boolean {
    return this.lease.isStopped;
  }

  start(): void {
    this.lease.start();
  }

  /** Stops claiming and aborts the jobs running here; `release` hands their leases back at once, else they lapse. */
  stop(release = true): Promise<void> {
    return this.lease.stop(release);
  }

  /** Claims what is due now (also called right after this instance queued a job, so it starts without waiting for the tick). */
  tick(): Promise<void> {
    return this.lease.tick();
  }

  private claim(): Promise<void> {
    return this.running.fill(this.opts.maxJobs, () => this.deps.repo.claim(this.opts.owner, this.opts.leaseMs));
  }

  private async execute(job: CreativeRow, lease: AbortSignal): Promise<Finish> {
    if (job.attempts > this.opts.maxAttempts)
      return {
        state: 'failed',
        error: `given up after ${job.attempts - 1} attempts: the instances running it stopped before it finished`,
      };
    // lib/errors/deadline.ts: not AbortSignal.timeout inside AbortSignal.any, which a GC on Node 20
    // can collect before it fires (test/conditioning/deadline-size.test.ts saw a 2 s deadline not fire).
    const limit = deadline(this.opts.jobTimeoutMs, lease);
    try {
      return { state: 'ready', renditions: await this.deps.condition(job, limit.signal) };
    } catch (err) {
      const reason =
        limit.expired && !lease.aborted
          ? `the job reached its time limit (${this.opts.jobTimeoutMs / 1000} s)`
          : (err as Error).message;
      return { state: 'failed', error: reason.slice(0, 500) };
    } finally {
      limit.clear();
    }
  }
}
