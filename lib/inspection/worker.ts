/**
 * The ID3 inspection worker (docs/design.md §1: workers in the same process, work leased through
 * Postgres). Every tick it claims due jobs up to `maxJobs`, runs each under a lease renewed on its
 * own clock and a job deadline, and writes the outcome fenced on the lease. An instance that dies
 * stops renewing: its lease lapses and another instance's tick takes the job over (after
 * `maxAttempts` claims the job fails instead, so a job that kills its instance cannot go round
 * forever). A graceful stop hands the leases back at once.
 */
import type { Logger } from '../log/index.js';
import type { Registry } from '../http/metrics.js';
import type { InspectionRepo, InspectionRow, Outcome } from './repo.js';
import type { InspectOutcome, InspectSource } from './inspect.js';

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
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private stopped = false;
  private lastPurge = 0;
  private readonly results;

  constructor(
    private readonly deps: InspectionWorkerDeps,
    private readonly opts: InspectionWorkerOptions,
  ) {
    const c = deps.metrics.counter('id3_inspection_jobs_total', 'ID3 inspection jobs by result');
    this.results = { complete: c.with({ result: 'complete' }), failed: c.with({ result: 'failed' }), lost: c.with({ result: 'lease_lost' }) };
    deps.metrics.gauge('id3_inspection_jobs_running', 'ID3 inspection jobs running here', () => this.running.size);
  }

  get owner(): string {
    return this.opts.owner;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.opts.tickMs).unref();
    void this.tick();
  }

  /** Stops claiming and aborts the jobs running here; `release` hands their leases back at once, else they lapse. */
  async stop(release = true): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    for (const r of this.running.values()) r.abort.abort(new Error('the worker stopped'));
    await Promise.all([...this.running.values()].map((r) => r.done));
    if (release) await this.deps.repo.release(this.opts.owner).catch(() => undefined);
  }

  tick(): Promise<void> {
    if (this.ticking || this.stopped) return this.ticking ?? Promise.resolve();
    this.ticking = (async () => {
      try {
        while (!this.stopped && this.running.size < this.opts.maxJobs) {
          const job = await this.deps.repo.claim(this.opts.owner, this.opts.leaseMs);
          if (!job) break;
          this.run(job);
        }
        if (Date.now() - this.lastPurge >= (this.opts.purgeEveryMs ?? 60_000)) {
          this.lastPurge = Date.now();
          await this.deps.repo.purge();
        }
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'id3 inspection claim failed');
      }
    })().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private run(job: InspectionRow): void {
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
          () => undefined, // a failed renewal is retried on the next beat; the lease may still hold
        );
      },
      Math.max(100, Math.floor(this.opts.leaseMs / 3)),
    );
    const done = this.execute(job, abort.signal)
      .then(async (outcome) => {
        if (lost || this.stopped) return void this.results.lost.inc();
        const written = await this.deps.repo.finish(job, this.opts.owner, outcome);
        if (!written) return void this.results.lost.inc();
        this.results[outcome.status].inc();
        this.deps.log.info({ streamId: job.stream_id, status: outcome.status, pods: outcome.ad_pods?.length ?? 0, error: outcome.error }, 'id3 inspection finished');
      })
      .catch((err: Error) => this.deps.log.warn({ err: err.message, streamId: job.stream_id }, 'id3 inspection bookkeeping failed'))
      .finally(() => {
        clearInterval(renew);
        this.running.delete(job.job_id);
      });
    this.running.set(job.job_id, { abort, done });
  }

  /** The job's outcome; limits and errors become a failed or a cut-short result, never a throw. */
  private async execute(job: InspectionRow, lease: AbortSignal): Promise<Outcome> {
    if (job.attempts > this.opts.maxAttempts) return { status: 'failed', ad_pods: null, error: `given up after ${job.attempts - 1} attempts: the instances running it stopped before it finished` };
    const signal = AbortSignal.any([lease, AbortSignal.timeout(this.opts.jobTimeoutMs)]);
    try {
      const out = await this.deps.inspect({ url: job.source_url, wholePod: job.whole_pod }, signal);
      return { status: 'complete', ad_pods: out.ad_pods, error: out.error };
    } catch (err) {
      const e = err as Error;
      const reason =
        signal.aborted && !lease.aborted ? `the job reached its time limit (${this.opts.jobTimeoutMs / 1000} s) while reading the manifests` : `the manifest could not be inspected: ${e.message}`;
      return { status: 'failed', ad_pods: null, error: reason.slice(0, 500) };
    }
  }
}
