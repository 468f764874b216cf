/**
 * The cue monitor (issue 15; docs/design.md §9, §10): for each event configured with
 * `trigger: "scte35"`, exactly one instance (a lease per event in Postgres, taken over when its
 * owner dies, as the break worker's) reads the source playlist every `manifest_polling` seconds
 * (else its target duration), and starts or ends breaks from its cues through the BreakService,
 * so a cue-started break is decided, persisted and published exactly like an API-started one.
 * Trigger once: every cue is claimed in Postgres before it acts. DAI streams never get
 * cue-triggered breaks (spec Limits 4): an event with DAI streams is not acted on.
 */
import type { Logger } from '../../log/index.js';
import type { Registry } from '../../metrics/index.js';
import { isDomainError } from '../../errors/index.js';
import { masterUris, readMaster, targetDuration, type MasterRead } from '../../hls/index.js';
import { readHlsCues, type SegmentCues } from '../../scte35/index.js';
import type { StreamRegistry } from '../../streams/registry.js';
import type { SqueezeConfigRepo } from '../config/repo.js';
import type { EventConfig } from '../config/types.js';
import { startSeqOf, type BreakRepo } from '../breaks/repo.js';
import type { BreakService } from '../breaks/service.js';
import type { FetchText } from '../breaks/source.js';
import { MAX_BREAK_SEC } from '../breaks/schema.js';
import type { CueMonitorRepo } from './repo.js';
import { LeaseLoop } from '../../store/lease.js';
import { cueActions, sequenceOffsetMs, type CueAction } from './trigger.js';

export interface CueMonitorOptions {
  owner: string;
  leaseMs: number;
  tickMs: number;
}

export interface CueMonitorDeps {
  repo: CueMonitorRepo;
  breaks: BreakService;
  breakRepo: BreakRepo;
  config: SqueezeConfigRepo;
  streams: StreamRegistry;
  fetchText: FetchText;
  log: Logger;
  metrics: Registry;
}

/** A bare EXT-X-CUE-OUT says nothing of its length: the break runs this long unless a cue-in ends it first. */
export const DEFAULT_CUE_BREAK_SEC = 120;
const DEFAULT_POLL_SEC = 6;
const FETCH_LOG_EVERY_MS = 60_000;
const PRUNE_EVERY_MS = 3600_000;
/** Longer than any DVR window keeps a cue in the playlist. */
const CLAIM_TTL_MS = 7 * 24 * 3600_000;

interface Watch {
  nextPollAt: number;
  polling: boolean;
  /** Claims acted on (or ignored) here, among the cues of the last reading. */
  seen: Set<string>;
  lastFetchLog: number;
}

export class CueMonitor {
  private readonly lease: LeaseLoop;
  private readonly watches = new Map<number, Watch>();
  private readonly polls = new Set<Promise<void>>();
  private lastPrune = 0;
  private readonly cuesTotal;
  private readonly cueErrors;
  private readonly actionsTotal;

  constructor(
    private readonly deps: CueMonitorDeps,
    private readonly opts: CueMonitorOptions,
  ) {
    this.cuesTotal = deps.metrics.counter(
      'scte35_cues_total',
      'Cues read by the cue monitor, once each, by kind and dialect',
    );
    this.cueErrors = deps.metrics.counter(
      'scte35_cue_errors_total',
      'Cues whose SCTE-35 binary did not decode, by error code',
    );
    this.actionsTotal = deps.metrics.counter(
      'scte35_cue_actions_total',
      'What the cue monitor did with an ad cue (started, ended, duplicate, conflict, dai, …)',
    );
    deps.metrics.gauge(
      'scte35_monitored_events',
      'Events whose source this instance monitors',
      () => this.watches.size,
    );
    const { owner, leaseMs } = opts;
    this.lease = new LeaseLoop(
      { name: 'cue monitor', ttlMs: leaseMs, tickMs: opts.tickMs },
      {
        tick: () => this.watchOwned(),
        renew: () => deps.repo.renew(owner, leaseMs),
        release: () => deps.repo.release(owner),
        drain: () => Promise.allSettled([...this.polls]).then(() => undefined),
        inFlight: () => [...this.watches.keys()].map(String),
        // An event whose lease was taken over is no longer ours to watch (its poll in flight ends on its own).
        lost: (eventId) => this.watches.delete(Number(eventId)),
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

  /** Stops polling, waits for reads in flight, and hands the leases back. */
  stop(): Promise<void> {
    return this.lease.stop(true);
  }

  tick(): Promise<void> {
    return this.lease.tick();
  }

  /** Leases every scte35 event nobody else holds (renewing its own) and polls those that are due. */
  private async watchOwned(): Promise<void> {
    const owned = new Set(await this.deps.repo.lease(this.opts.owner, this.opts.leaseMs));
    for (const id of this.watches.keys()) if (!owned.has(id)) this.watches.delete(id);
    const now = Date.now();
    for (const id of owned) {
      let w = this.watches.get(id);
      if (!w) this.watches.set(id, (w = { nextPollAt: 0, polling: false, seen: new Set(), lastFetchLog: 0 }));
      if (!w.polling && now >= w.nextPollAt) this.pollSoon(id, w);
    }
    if (now - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await this.deps.repo.prune(CLAIM_TTL_MS);
    }
  }

  /** Polls run beside the tick, so a slow source never delays the lease renewal of the others. */
  private pollSoon(eventId: number, w: Watch): void {
    w.polling = true;
    const p = this.poll(eventId, w)
      .catch((err: Error) => this.deps.log.warn({ err: err.message, eventId }, 'cue monitor poll failed'))
      .finally(() => {
        w.polling = false;
        this.polls.delete(p);
      });
    this.polls.add(p);
  }

  private async poll(eventId: number, w: Watch): Promise<void> {
    const event = await this.deps.config.getEvent(eventId);
    const pollMs = (sec: number | undefined) =>
      Math.max(500, (event.manifest_polling ?? sec ?? DEFAULT_POLL_SEC) * 1000);
    let text: string;
    try {
      text = await this.mediaPlaylist(event.source_uri);
    } catch (err) {
      w.nextPollAt = Date.now() + pollMs(undefined);
      // Retried next poll; said at most once a minute.
      if (Date.now() - w.lastFetchLog >= FETCH_LOG_EVERY_MS) {
        w.lastFetchLog = Date.now();
        this.deps.log.warn(
          { err: (err as Error).message, eventId, sourceUri: event.source_uri },
          'cue monitor: source unreadable; retrying',
        );
      }
      return;
    }
    const nowMs = Date.now();
    const targetSec = targetDuration(text);
    w.nextPollAt = nowMs + pollMs(targetSec);
    const reading = readHlsCues(text);
    const { actions, seen } = cueActions(reading, w.seen, {
      nowMs,
      defaultDurationSec: DEFAULT_CUE_BREAK_SEC,
      maxDurationSec: MAX_BREAK_SEC,
    });
    w.seen = seen;
    for (const a of actions) {
      if (this.stopped) return;
      this.cuesTotal.with({ kind: a.cue.kind, dialect: a.cue.dialect }).inc();
      if (a.type === 'ignore') this.ignored(event, a);
      else if (!(await this.act(event, a, targetSec, reading.segments))) w.seen.delete(a.claim); // a passing failure: try again next poll
    }
  }

  private ignored(event: EventConfig, a: Extract<CueAction, { type: 'ignore' }>): void {
    if (a.reason === 'error') {
      this.cueErrors.with({ code: a.cue.error!.code }).inc();
      this.deps.log.warn(
        { eventId: event.id, key: a.cue.key, tag: a.cue.tag.slice(0, 200), error: a.cue.error },
        'cue monitor: undecodable SCTE-35 cue ignored',
      );
    } else if (a.reason === 'stale') {
      this.actionsTotal.with({ action: 'stale' }).inc();
      this.deps.log.info(
        { eventId: event.id, key: a.cue.key, atMs: a.atMs },
        'cue monitor: cue-out whose break is already over ignored',
      );
    }
  }

  /** A start or an end, claimed first; false when it should be tried again (the claim was given back). */
  private async act(
    event: EventConfig,
    a: Extract<CueAction, { type: 'start' | 'end' }>,
    targetSec: number | undefined,
    segments: readonly SegmentCues[],
  ): Promise<boolean> {
    const { key, kind } = a.cue;
    const log = { eventId: event.id, key, kind, dialect: a.cue.dialect, atMs: a.atMs, estimated: a.estimated };
    if (a.type === 'start' && (await this.hasDaiStreams(event.id))) {
      this.actionsTotal.with({ action: 'dai' }).inc();
      this.deps.log.warn(
        log,
        'cue monitor: the event has DAI streams, whose breaks are triggered by the API only (spec Limits 4); cue ignored',
      );
      return true;
    }
    if (!(await this.deps.repo.claim(event.id, key, kind))) {
      this.actionsTotal.with({ action: 'duplicate' }).inc();
      return true;
    }
    try {
      const outcome =
        a.type === 'start' ? await this.startBreak(event, a, targetSec) : await this.endBreak(event, a, segments);
      await this.deps.repo.settle(event.id, key, kind, outcome.outcome, outcome.breakId);
      this.actionsTotal.with({ action: outcome.outcome }).inc();
      this.deps.log.info({ ...log, ...outcome }, `cue monitor: ${a.type} cue → ${outcome.outcome}`);
      return true;
    } catch (err) {
      if (isDomainError(err)) {
        // Our own 409 (an operator's break overlaps) and other refusals count as done: no retry storm.
        const outcome = err.kind === 'conflict' ? 'conflict' : 'refused';
        await this.deps.repo.settle(event.id, key, kind, outcome).catch(() => undefined);
        this.actionsTotal.with({ action: outcome }).inc();
        this.deps.log.info({ ...log, err: err.message }, `cue monitor: ${a.type} cue → ${outcome}`);
        return true;
      }
      await this.deps.repo.unclaim(event.id, key, kind).catch(() => undefined);
      this.deps.log.warn(
        { ...log, err: (err as Error).message },
        'cue monitor: acting on a cue failed; retrying next poll',
      );
      return false;
    }
  }

  private async startBreak(
    event: EventConfig,
    a: Extract<CueAction, { type: 'start' }>,
    targetSec: number | undefined,
  ): Promise<{ outcome: string; breakId?: string }> {
    // Without program date-time a segment's duration is what places the break's later segments (and where an early cue-in ends it).
    const segmentSec =
      (a.estimated ? a.segment.duration : undefined) || targetSec || a.segment.duration || DEFAULT_POLL_SEC;
    const view = await this.deps.breaks.create({ event_id: event.id, break_duration: a.durationSec }, 'event', {
      // The cue's segment starts the break in playlists without program date-time too (by its media sequence).
      at: { startMs: a.atMs, segmentSec, startSeq: a.segment.media_sequence },
      trigger: {
        source: 'scte35',
        key: a.cue.key,
        cue: {
          ...a.cue,
          media_sequence: a.segment.media_sequence,
          segment_start: new Date(a.atMs).toISOString(),
          estimated_start: a.estimated,
        },
      },
    });
    return { outcome: 'started', breakId: view['break_id'] as string };
  }

  /** An early cue-in or a cancel ends the event's cue-started break at the cue's segment; a cue-in at or after the planned end changes nothing. */
  private async endBreak(
    event: EventConfig,
    a: Extract<CueAction, { type: 'end' }>,
    segments: readonly SegmentCues[],
  ): Promise<{ outcome: string; breakId?: string }> {
    const live = await this.deps.breakRepo.liveOnEvent(event.id);
    // An operator's (API) break is the operator's to end.
    if (!live || live.trigger.source !== 'scte35') return { outcome: 'no-break' };
    const start = live.start_time.getTime();
    // Without program date-time, the cue's place is counted in EXTINF durations from the break's first segment (as players are shown it), not estimated from the clock.
    const startSeq = startSeqOf(live);
    const offset =
      a.estimated && startSeq !== undefined
        ? sequenceOffsetMs(segments, startSeq, a.segment.media_sequence)
        : undefined;
    if (offset !== undefined) a = { ...a, atMs: start + offset };
    // A cancel may come before the break's first segment (ends it empty); a cue-in before the start belongs to an earlier break.
    if ((a.cue.kind === 'in' && a.atMs <= start) || a.atMs >= live.end_time.getTime())
      return { outcome: 'no-change', breakId: live.id };
    await this.deps.breaks.endAt(live.id, a.atMs);
    return { outcome: 'ended', breakId: live.id };
  }

  private async hasDaiStreams(eventId: number): Promise<boolean> {
    return (await this.deps.streams.streamsOf(eventId)).some((s) => s.flow === 'dai');
  }

  /** The media playlist to follow: source_uri itself, or the first variant of a master. */
  private async mediaPlaylist(sourceUri: string): Promise<string> {
    const signal = () => AbortSignal.timeout(Math.max(1000, Math.floor(this.opts.leaseMs / 2)));
    const text = await this.deps.fetchText(sourceUri, signal());
    const master = readMaster(text);
    if (!master.header) throw new Error('the source is not an HLS playlist');
    const variant = firstVariant(master, sourceUri);
    return variant ? this.deps.fetchText(variant, signal()) : text;
  }
}

/** The URI after the first EXT-X-STREAM-INF of a master playlist, resolved; undefined for a media playlist. */
export function firstVariant(master: string | MasterRead, base: string): string | undefined {
  return masterUris(master, base, { renditions: 'none', limit: 1 })[0]?.url;
}
