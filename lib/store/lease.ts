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
