/**
 * The ID3 inspection worker (docs/design.md §1: workers in the same process, work leased through
 * Postgres). Every tick it claims due jobs up to `maxJobs`, runs each under a lease renewed by the
 * shared lease loop (lib/store/lease.ts) and a job deadline, and writes the outcome fenced on the lease. An instance that dies
 * stops renewing: its lease lapses and another instance's tick takes the job over (after
 * `maxAttempts` claims the job fails instead, so a job that kills its instance cannot go round
 * forever). A graceful stop hands the leases back at once.
 */
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import type { InspectionRepo, InspectionRow, Outcome } from './repo.js';
import type { InspectOutcome, InspectSource } from './inspect.js';
import { LeaseLoop, LeasedJobs } from '../store/lease.js';
import { deadline } from '../errors/deadline.js';

export interface InspectionWorkerOptions {
  owner: string;
  leaseMs: number;
  tickMs: number;
  /** Jobs run at once on this instance. */
  maxJobs: number;
  jobTimeoutMs: number;
  maxAttempts: number;
  /** How often finished jobs past the TTL are deleted. */
  purgeEveryMs?: number;
}

export interface InspectionWorkerDeps {
  repo: InspectionRepo;
  inspect(source: InspectSource, signal: AbortSignal): Promise<InspectOutcome>;
  log: Logger;
  metrics: Registry;
}

export class InspectionWorker {
  private readonly lease: LeaseLoop;
  private readonly running: LeasedJobs<InspectionRow, Outcome>;
  private lastPurge = 0;
  private readonly results;

  constructor(
    private readonly deps: InspectionWorkerDeps,
    private readonly opts: InspectionWorkerOptions,
  ) {
    const c = deps.metrics.counter('id3_inspection_jobs_total', 'ID3 inspection jobs by result');
    this.results = {
      complete: c.with({ result: 'complete' }),
      failed: c.with({ result: 'failed' }),
      lost: c.with({ result: 'lease_lost' }),
    };
    deps.metrics.gauge('id3_inspection_jobs_running', 'ID3 inspection jobs running here', () => this.running.size);
    const { owner, leaseMs } = opts;
    this.running = new LeasedJobs<InspectionRow, Outcome>({
      execute: (job, signal) => this.execute(job, signal),
      finish: (job, outcome) => deps.repo.finish(job, owner, outcome),
      finished: (job, outcome) => {
        this.results[outcome.status].inc();
        deps.log.info(
          { streamId: job.stream_id, status: outcome.status, pods: outcome.ad_pods?.length ?? 0, error: outcome.error },
          'id3 inspection finished',
        );
      },
      discarded: () => this.results.lost.inc(),
      failed: (job, err) =>
        deps.log.warn({ err: err.message, streamId: job.stream_id }, 'id3 inspection bookkeeping failed'),
      stopped: () => this.stopped,
    });
    this.lease = new LeaseLoop(
      { name: 'id3 inspection', ttlMs: leaseMs, tickMs: opts.tickMs },
      {
        tick: () => this.claimAndPurge(),
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

  get owner(): string {
    return this.opts.owner;
  }

  start(): void {
    this.lease.start();
  }

  /** Stops claiming and aborts the jobs running here; `release` hands their leases back at once, else they lapse. */
  stop(release = true): Promise<void> {
    return this.lease.stop(release);
  }

  tick(): Promise<void> {
    return this.lease.tick();
  }

  private async claimAndPurge(): Promise<void> {
    await this.running.fill(this.opts.maxJobs, () => this.deps.repo.claim(this.opts.owner, this.opts.leaseMs));
    if (Date.now() - this.lastPurge >= (this.opts.purgeEveryMs ?? 60_000)) {
      this.lastPurge = Date.now();
      await this.deps.repo.purge();
    }
  }

  /** The job's outcome; limits and errors become a failed or a cut-short result, never a throw. */
  private async execute(job: InspectionRow, lease: AbortSignal): Promise<Outcome> {
    if (job.attempts > this.opts.maxAttempts)
      return {
        status: 'failed',
        ad_pods: null,
        error: `given up after ${job.attempts - 1} attempts: the instances running it stopped before it finished`,
      };
    const limit = deadline(this.opts.jobTimeoutMs, lease);
    try {
      const out = await this.deps.inspect({ url: job.source_url, wholePod: job.whole_pod }, limit.signal);
      return { status: 'complete', ad_pods: out.ad_pods, error: out.error };
    } catch (err) {
      const e = err as Error;
      const reason =
        limit.expired && !lease.aborted
          ? `the job reached its time limit (${this.opts.jobTimeoutMs / 1000} s) while reading the manifests`
          : `the manifest could not be inspected: ${e.message}`;
      return { status: 'failed', ad_pods: null, error: reason.slice(0, 500) };
    } finally {
      limit.clear();
    }
  }
}
