/**
 * The break worker (docs/design.md §6): each instance leases the live breaks nobody else holds (a lease
 * in Postgres with a TTL, renewed by the shared lease loop, lib/store/lease.ts; when an owner dies
 * its lease lapses and another instance takes over). For an owned break it follows the event's source playlists, plans a
 * squeezeback segment for every content segment inside the window and every ad assignment,
 * submits transcoder jobs, and publishes each ready output to every instance.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../../log/index.js';
import type { Registry } from '../../metrics/index.js';
import type { BreakBoard } from './board.js';
import { startSeqOf, type BreakRepo, type BreakRow, type NewSegment, type SegmentRow } from './repo.js';
import { animationPhase, placeOnTimeline } from './plan.js';
import { readSource, type FetchText } from './source.js';
import type { SqueezeJob, TranscoderClient } from './transcoder.js';
import type { EventConfig } from '../config/types.js';
import { LeaseLoop } from '../../store/lease.js';

export interface BreakWorkerOptions {
  owner: string;
  leaseMs: number;
  tickMs: number;
  maxAttempts?: number;
}

export interface BreakWorkerDeps {
  repo: BreakRepo;
  board: BreakBoard;
  transcoder: TranscoderClient;
  fetchText: FetchText;
  log: Logger;
  metrics: Registry;
}

export class BreakWorker {
  private readonly lease: LeaseLoop;
  /** When each owned break last read its source: once per half segment is enough (docs/design.md §6). */
  private readonly planned = new Map<string, number>();
  private readonly jobs = new Map<string, Promise<void>>();
  private publishTimer: NodeJS.Timeout | undefined;
  private readonly results;

  constructor(
    private readonly deps: BreakWorkerDeps,
    private readonly opts: BreakWorkerOptions,
  ) {
    const c = deps.metrics.counter('squeeze_transcoder_jobs_total', 'Squeezeback segment jobs by result');
    this.results = {
      ready: c.with({ result: 'ready' }),
      retry: c.with({ result: 'retry' }),
      failed: c.with({ result: 'failed' }),
    };
    deps.metrics.gauge(
      'squeeze_transcoder_jobs_in_flight',
      'Squeezeback segment jobs running here',
      () => this.jobs.size,
    );
    const { owner, leaseMs } = opts;
    this.lease = new LeaseLoop(
      { name: 'break worker', ttlMs: leaseMs, tickMs: opts.tickMs },
      {
        tick: async () => {
          const owned = await deps.repo.lease(owner, leaseMs);
          await Promise.all(
            owned.map((b) =>
              this.step(b).catch((err: Error) =>
                deps.log.warn({ err: err.message, breakId: b.id }, 'break step failed'),
              ),
            ),
          );
        },
        renew: () => deps.repo.renew(owner, leaseMs),
        release: () => deps.repo.release(owner),
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

  /** Stops ticking; `release` hands the leases back at once (a graceful stop), else they lapse. */
  async stop(release = true): Promise<void> {
    clearTimeout(this.publishTimer);
    await this.lease.stop(release);
  }

  tick(): Promise<void> {
    return this.lease.tick();
  }

  private async step(b: BreakRow): Promise<void> {
    const now = Date.now();
    const start = b.start_time.getTime();
    const end = b.end_time.getTime();
    const segMs = b.segment_sec * 1000;
    // A break placed by media sequence has wall-clock times that are estimates: one more segment of reading.
    const tailMs = startSeqOf(b) === undefined ? segMs : 2 * segMs;
    if (b.status === 'scheduled' && now >= start) await this.deps.repo.setStatus(b.id, this.opts.owner, 'active');
    if (now >= start - segMs && now < end + tailMs && now - (this.planned.get(b.id) ?? 0) >= segMs / 2) {
      this.planned.set(b.id, now);
      await this.plan(b);
    }
    const pending = await this.deps.repo.pendingSegments(b.id, this.opts.maxAttempts ?? 2);
    for (const s of pending) this.submit(b, s);
    if (now >= end + tailMs && pending.length === 0 && ![...this.jobs.keys()].some((k) => k.startsWith(b.id)))
      await this.finish(b);
  }

  /**
   * Plans a segment for each content segment of the source inside the window, per assignment: by
   * program date-time, else by media sequence from the break's start (the hot path's rule).
   */
  private async plan(b: BreakRow): Promise<void> {
    const start = b.start_time.getTime();
    const end = b.end_time.getTime();
    const startSeq = startSeqOf(b);
    const anchor = startSeq === undefined ? undefined : { startSeq, startMs: start };
    const signal = AbortSignal.timeout(
      Math.floor(Math.min(Math.max(2000, b.segment_sec * 1000), this.opts.leaseMs / 3)),
    );
    const playlists = await readSource(b.settings.source_uri, this.deps.fetchText, signal, undefined, anchor);
    const rows: NewSegment[] = [];
    for (const p of playlists) {
      for (const seg of p.segments) {
        if (seg.pdtMs === undefined || seg.pdtMs < start - 1 || seg.pdtMs >= end - 1) continue;
        const offsetSec = (seg.pdtMs - start) / 1000;
        const idx = Math.floor(offsetSec / b.segment_sec + 1e-3);
        for (const a of b.assignments) {
          const place = placeOnTimeline(a.ads, offsetSec, seg.durationSec);
          const ad = a.ads[place.adIndex];
          if (!ad) continue;
          rows.push({
            break_id: b.id,
            assignment: a.key,
            content_path: seg.path,
            content_uri: seg.uri,
            idx,
            start_time: new Date(seg.pdtMs),
            duration: seg.durationSec,
            ad_index: place.adIndex,
            ad_offset: place.adOffsetSec,
            events: place.events,
            output_key: outputKey(b, seg.uri, ad.uri, place.adOffsetSec, seg.durationSec, offsetSec),
          });
        }
      }
    }
    await this.deps.repo.addSegments(rows);
  }

  private submit(b: BreakRow, s: SegmentRow): void {
    const jobKey = `${b.id}|${s.assignment}|${s.content_path}`;
    if (this.jobs.has(jobKey)) return;
    const ad = b.assignments.find((a) => a.key === s.assignment)?.ads[s.ad_index];
    if (!ad) return;
    const settings = b.settings;
    const animations: Partial<EventConfig['animations']> = settings.animations ?? {};
    const job: SqueezeJob = {
      content_uri: s.content_uri,
      ad_uri: ad.uri,
      layout: b.layout === 'lbar' ? 'lbar' : 'dualbox',
      sqz_ratios: settings.sqz_ratios,
      positions: settings.positions,
      animation: {
        phase: animationPhase((s.start_time.getTime() - b.start_time.getTime()) / 1000, s.duration, b.break_duration),
        in_sec: animations.in_sec ?? 2,
        out_sec: animations.out_sec ?? 2,
      },
      frames: settings.frames,
      ad_offset_sec: s.ad_offset,
      duration_sec: s.duration,
      id3: { owner: `com.${String(settings.brand_config_id)}.vtg`, value: b.id },
      output_key: s.output_key,
    };
    if (typeof settings.background_uri === 'string') job.background_uri = settings.background_uri;
    const run = this.deps.transcoder.compose(job).then(
      async (uri) => {
        await this.deps.repo.markSegment(s, { status: 'ready', output_uri: uri, attempts: s.attempts + 1 });
        this.results.ready.inc();
        this.publishSoon();
      },
      async (err: Error) => {
        const attempts = s.attempts + 1;
        // The client already retried 5xx and network errors; one more round later, none for a refusal (4xx).
        const refused =
          (err as { code?: string; status?: number }).code === 'status' &&
          ((err as { status?: number }).status ?? 500) < 500;
        const failed = attempts >= (this.opts.maxAttempts ?? 2) || refused || !this.deps.transcoder.configured;
        (failed ? this.results.failed : this.results.retry).inc();
        this.deps.log.warn(
          { err: err.message, breakId: b.id, segment: s.content_path, attempts },
          'squeeze job failed',
        );
        await this.deps.repo.markSegment(s, {
          status: failed ? 'failed' : 'pending',
          error: err.message.slice(0, 500),
          attempts,
        });
      },
    );
    this.jobs.set(
      jobKey,
      run
        .catch((err: Error) => this.deps.log.warn({ err: err.message }, 'squeeze job bookkeeping failed'))
        .finally(() => this.jobs.delete(jobKey)),
    );
  }

  /** Ready outputs reach every instance in batches: one publish per burst, not one per segment. */
  private publishSoon(): void {
    if (this.publishTimer || this.stopped) return;
    this.publishTimer = setTimeout(() => {
      this.publishTimer = undefined;
      void this.deps.board.changed();
    }, 100);
  }

  private async finish(b: BreakRow): Promise<void> {
    this.planned.delete(b.id);
    if (b.status === 'cancelled') return; // stays cancelled; the lease lapses with the grace period
    const counts = await this.deps.repo.segmentCounts(b.id);
    const failed = counts.ready === 0;
    const reason = !failed
      ? undefined
      : counts.failed > 0
        ? `no squeezeback segment could be composed (${counts.failed} failed)`
        : 'no content segment of the window was found in the source playlists';
    await this.deps.repo.setStatus(b.id, this.opts.owner, failed ? 'failed' : 'completed', reason);
    this.deps.log.info({ breakId: b.id, ...counts, status: failed ? 'failed' : 'completed' }, 'break ended');
    await this.deps.board.changed();
  }
}

/** Same inputs, same key: the transcoder composes them once whichever stream or instance asks. */
function outputKey(
  b: BreakRow,
  contentUri: string,
  adUri: string,
  adOffset: number,
  duration: number,
  breakOffset: number,
): string {
  const s = b.settings;
  const h = createHash('sha256').update(
    JSON.stringify([
      contentUri,
      adUri,
      adOffset,
      duration,
      b.layout,
      animationPhase(breakOffset, duration, b.break_duration),
      s.sqz_ratios,
      s.positions,
      s.frames,
      s.animations,
      s.background_uri,
      b.id,
    ]),
  );
  return `sqz/${b.event_id}/${h.digest('hex').slice(0, 32)}`;
}
