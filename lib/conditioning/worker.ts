/**
 * The conditioning worker (docs/design.md §1: workers in the same process, work leased through
 * Postgres), shaped like the ID3 inspection worker: every tick it claims due jobs up to `maxJobs`
 * (ffmpeg is CPU-bound: one or two per instance), runs each under a lease renewed on its own clock
 * and a job deadline, and writes the outcome fenced on the lease. A lapsed lease is taken over by
 * another instance; after `maxAttempts` claims the job fails, so a creative that kills its
 * instance cannot go round forever.
 */
import type { Logger } from '../log/index.js';
import type { Registry } from '../http/metrics.js';
import type { CreativeRepo, CreativeRow, Finish } from './repo.js';

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
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private stopped = false;
  private readonly results;
  private readonly toReady;
  /** Jobs this instance ran to an outcome (tests: two instances never condition one creative twice). */
  ran = 0;

  constructor(
    private readonly deps: ConditioningWorkerDeps,
    private readonly opts: ConditioningWorkerOptions,
  ) {
    const c = deps.metrics.counter('ad_conditioning_jobs_total', 'Ad creative conditioning jobs finished here, by result');
    this.results = { ready: c.with({ result: 'ready' }), failed: c.with({ result: 'failed' }), lost: c.with({ result: 'lease_lost' }) };
    this.toReady = deps.metrics.histogram('ad_conditioning_seconds_to_ready', 'Seconds from queuing a creative to its renditions being ready', [1, 2, 5, 10, 20, 30, 60, 120, 300]).with({});
    deps.metrics.gauge('ad_conditioning_jobs_running', 'Ad creative conditioning jobs running here', () => this.running.size);
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.opts.tickMs).unref();
    void this.tick();
  }

  async stop(release = true): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    for (const r of this.running.values()) r.abort.abort(new Error('the worker stopped'));
    await Promise.all([...this.running.values()].map((r) => r.done));
    if (release) await this.deps.repo.release(this.opts.owner).catch(() => undefined);
  }

  /** Claims what is due now (also called right after this instance queued a job, so it starts without waiting for the tick). */
  tick(): Promise<void> {
    if (this.ticking || this.stopped) return this.ticking ?? Promise.resolve();
    this.ticking = (async () => {
      try {
        while (!this.stopped && this.running.size < this.opts.maxJobs) {
          const job = await this.deps.repo.claim(this.opts.owner, this.opts.leaseMs);
          if (!job) break;
          this.run(job);
        }
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'ad conditioning claim failed');
      }
    })().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private run(job: CreativeRow): void {
    const abort = new AbortController();
    let lost = false;
    const renew = setInterval(
      () => {
        this.deps.repo.renew(job, this.opts.owner, this.opts.leaseMs).then(
          (ours) => {
            if (ours) return;
            lost = true;
            abort.abort(new Error('the lease was lost'));
          },
          () => undefined, // retried on the next beat; the lease may still hold
        );
      },
      Math.max(100, Math.floor(this.opts.leaseMs / 3)),
    );
    const done = this.execute(job, abort.signal)
      .then(async (outcome) => {
        if (lost || this.stopped) return void this.results.lost.inc();
        const written = await this.deps.repo.finish(job, this.opts.owner, outcome);
        if (!written) return void this.results.lost.inc();
        this.ran++;
        this.results[outcome.state].inc();
        if (outcome.state === 'ready') this.toReady.observe(outcome.renditions.seconds_to_ready);
        this.deps.log.info({ key: job.key, job: job.job_id, state: outcome.state, error: outcome.state === 'failed' ? outcome.error : undefined }, 'ad conditioning finished');
      })
      .catch((err: Error) => this.deps.log.warn({ err: err.message, key: job.key }, 'ad conditioning bookkeeping failed'))
      .finally(() => {
        clearInterval(renew);
        this.running.delete(job.key);
        // A slot is free: take the next due job now rather than at the next tick.
        if (!this.stopped) void this.tick();
      });
    this.running.set(job.key, { abort, done });
  }

  private async execute(job: CreativeRow, lease: AbortSignal): Promise<Finish> {
    if (job.attempts > this.opts.maxAttempts) return { state: 'failed', error: `given up after ${job.attempts - 1} attempts: the instances running it stopped before it finished` };
    const signal = AbortSignal.any([lease, AbortSignal.timeout(this.opts.jobTimeoutMs)]);
    try {
      return { state: 'ready', renditions: await this.deps.condition(job, signal) };
    } catch (err) {
      const reason = signal.aborted && !lease.aborted ? `the job reached its time limit (${this.opts.jobTimeoutMs / 1000} s)` : (err as Error).message;
      return { state: 'failed', error: reason.slice(0, 500) };
    }
  }
}
