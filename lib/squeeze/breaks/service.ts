/**
 * The ad-break lifecycle (docs/design.md §3, §6): start (decide ads, plan the window, persist, publish),
 * show, extend, terminate. The break worker moves it on from there (active → completed | failed).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log/index.js';
import { conflict, invalid, notFound, unprocessable } from '../../errors/index.js';
import type { StreamRegistry, Stream } from '../../streams/registry.js';
import type { SqueezeConfigRepo } from '../config/repo.js';
import type { EventConfig } from '../config/types.js';
import type { AdDecider, Decision, DecideInput } from './decide.js';
import type { BreakBoard } from './board.js';
import { BREAK_ID, type BreakRepo, type BreakRow, type BreakTrigger, type SegmentRow } from './repo.js';
import { planSegments, squeezedSpanSec } from './plan.js';
import { readSource, type FetchText } from './source.js';
import { MAX_TOTAL_BREAK_SEC, type BreakInput } from './schema.js';
import { reachWarnings, type BreakReachCounts } from './reach.js';
import { fillShortfall } from './shortfall.js';

type Json = Record<string, unknown>;

const DEFAULT_SEGMENT_SEC = 6;
const PROBE_MS = 2000;
export interface StartWindow {
  startMs: number;
  segmentSec: number;
  /**
   * Media sequence of the break's first segment in the source: what places the break in playlists
   * without program date-time (docs/decisions.md). Unknown when the source could not be read.
   */
  startSeq?: number | undefined;
}

/** How a break is started other than by the API's defaults (the cue monitor). */
export interface StartOptions {
  /** Start here (a cue's segment) instead of the live edge's next boundary. */
  at?: StartWindow;
  trigger?: BreakTrigger;
}

/**
 * A segment is composed after the source publishes it, and one listed as content stays content
 * (./content-pins.ts): without a live-edge delay viewers are listed every break segment first.
 */
const NO_DELAY_WARNING =
  'the event has no live-edge delay (live_edge_delay_segments 0): its playlists list each break segment before the transcoder can compose it, and a segment listed as content stays content, so viewers mostly see content rather than the squeezed frame; set live_edge_delay_segments (2 or more)';

export interface BreakServiceDeps {
  repo: BreakRepo;
  config: SqueezeConfigRepo;
  decider: AdDecider;
  streams: StreamRegistry;
  board: BreakBoard;
  fetchText: FetchText;
  adServerUrl: string;
  log: Logger;
  /** What a break reached, summed over every instance (./reach.ts); absent: the view says nothing of it. */
  reach?: (breakId: string) => Promise<BreakReachCounts>;
}

export class BreakService {
  constructor(private readonly deps: BreakServiceDeps) {}

  /**
   * Starting a break is one pipeline: load the event's configuration → plan the window and decide
   * the ads (at once: both wait on the network) → persist → publish to every instance.
   */
  async create(input: BreakInput, target: 'event' | 'streams', opts: StartOptions = {}): Promise<Json> {
    const arrived = Date.now();
    const event = await this.loadEvent(input);
    const id = randomUUID();
    const [window, decided] = await Promise.all([
      this.planWindow(event, opts.at),
      this.decideAds(id, event, input, target, arrived),
    ]);
    // A shortfall (ads shorter than the break) filled as the brand configures (issue 30.5).
    const filled = fillShortfall(decided, input.break_duration, event.squeeze_fill, event.stitch_slate?.uri);
    const decision = filled.note
      ? { ...filled.decision, reason: [decided.reason, filled.note].filter(Boolean).join('; ') }
      : filled.decision;
    const row = await this.persist(
      id,
      event,
      { ...input, break_duration: filled.durationSec },
      target,
      window,
      decision,
      opts.trigger ?? { source: 'api' },
    );
    await this.deps.board.changed();
    this.deps.log.info(
      {
        breakId: id,
        eventId: event.id,
        status: row.status,
        source: decision.source,
        trigger: row.trigger.source,
        streams: Object.keys(decision.streamAssignments).length,
      },
      'break started',
    );
    return this.view(row, [], decision);
  }

  /** The event's effective configuration; an event with a live break is refused before any ad request is spent. */
  private async loadEvent(input: BreakInput): Promise<EventConfig> {
    const event =
      input.event_id !== undefined
        ? await this.deps.config.getEvent(input.event_id)
        : await this.deps.config.getEventByAsset(input.asset_id!);
    if (input.event_id !== undefined && input.asset_id !== undefined && event.asset_id !== input.asset_id)
      throw invalid('event_id and asset_id name different events');
    // The unique index still decides a race at insert time.
    const live = await this.deps.repo.liveOnEvent(event.id);
    if (live) throw conflict(`event ${event.id} already has a break in progress (${live.id})`);
    return event;
  }

  /**
   * Where the break starts: the next segment boundary of the source's live edge (so the first break
   * segment is whole), never over the tail of the previous break, and the segment duration the
   * plan uses. Falls back to now and 6 s.
   */
  private async planWindow(event: EventConfig, at: StartWindow | undefined): Promise<StartWindow> {
    const window = at ? { ...at } : await this.liveEdge(event.source_uri);
    // A terminated break runs to its next segment boundary: start after it (as many segments later by sequence).
    const previousEnd = (await this.deps.repo.lastEnd(event.id))?.getTime() ?? 0;
    if (previousEnd > window.startMs) {
      if (window.startSeq !== undefined)
        window.startSeq += Math.ceil((previousEnd - window.startMs) / (window.segmentSec * 1000) - 1e-6);
      window.startMs = previousEnd;
    }
    return window;
  }

  private async liveEdge(sourceUri: string): Promise<StartWindow> {
    const now = Date.now();
    try {
      // One variant tells the live edge and the segment duration.
      const [first] = await readSource(sourceUri, this.deps.fetchText, AbortSignal.timeout(PROBE_MS), 1);
      const last = first?.segments.at(-1);
      if (!first || !last) return { startMs: now, segmentSec: DEFAULT_SEGMENT_SEC };
      const seg = last.durationSec || first.targetSec;
      // Without program date-time the live edge is now, and the break starts on the next segment published.
      if (last.pdtMs === undefined) return { startMs: now, segmentSec: seg, startSeq: last.seq + 1 };
      let start = last.pdtMs + last.durationSec * 1000;
      let skipped = 0;
      if (start < now) {
        skipped = Math.ceil((now - start) / (seg * 1000));
        start += skipped * seg * 1000;
      }
      return { startMs: Math.round(start), segmentSec: first.targetSec || seg, startSeq: last.seq + 1 + skipped };
    } catch (err) {
      this.deps.log.warn(
        { err: (err as Error).message, sourceUri },
        'break: source playlist unreadable; planning from now',
      );
      return { startMs: now, segmentSec: DEFAULT_SEGMENT_SEC };
    }
  }

  /** Event-wide ads (POST), or per stream from each stream's targeting (PUT). */
  private async decideAds(
    breakId: string,
    event: EventConfig,
    input: BreakInput,
    target: 'event' | 'streams',
    arrived: number,
  ): Promise<Decision> {
    const decideInput: DecideInput = {
      eventId: event.id,
      breakId,
      durationSec: input.break_duration,
      abid: input.abid,
      geo: input.geo_lang_loc,
      adRequest: {
        adServerUrl: this.deps.adServerUrl,
        adTag: event.ad_tag,
        override: event.ad_tag_override,
        caid: event.caid,
        assetId: event.asset_id,
      },
    };
    if (target === 'event') return this.deps.decider.forEvent(decideInput);
    const streams = await this.streamsOf(event.id, input.stream_ids, event.max_concurrent_streams, arrived);
    // A break on no stream would squeeze nothing: refused before any ad request or job, and with
    // nothing persisted, so it blocks no later break (issue 25).
    if (!streams.length) {
      throw unprocessable(
        input.stream_ids
          ? `none of stream_ids is a live stream of event ${event.id} (unknown, expired, or of another event)`
          : `event ${event.id} has no live streams (none registered by /dai/adproxy, /dai/manifest or /squeezeback within the idle time)`,
      );
    }
    return this.deps.decider.forStreams(
      decideInput,
      streams.map((x) => ({
        streamId: x.stream_id,
        targeting: x.fw_params,
        vprn: x.vprn ?? undefined,
        pvrn: x.pvrn ?? undefined,
        clientIp: x.client_ip ?? undefined,
      })),
    );
  }

  private persist(
    id: string,
    event: EventConfig,
    input: BreakInput,
    target: 'event' | 'streams',
    window: StartWindow,
    decision: Decision,
    trigger: BreakTrigger,
  ): Promise<BreakRow> {
    const decided = decision.assignments.length > 0;
    // The break is as long as what it squeezes: whole segments (the cue-out duration, the planned segments, the jobs agree).
    const span = squeezedSpanSec(input.break_duration, window.segmentSec);
    return this.deps.repo.insert({
      id,
      event_id: event.id,
      target,
      status: decided ? 'scheduled' : 'failed',
      start_time: new Date(window.startMs),
      end_time: new Date(window.startMs + span * 1000),
      break_duration: span,
      segment_sec: window.segmentSec,
      layout: input.layout ?? event.layout ?? 'dualbox',
      abid: input.abid ?? null,
      geo_lang_loc: input.geo_lang_loc ?? null,
      decision_source: decision.source,
      reason: decided ? (decision.reason ?? null) : `no ads: ${decision.reason ?? 'nothing decided'}`,
      assignments: decision.assignments,
      stream_assignments: decision.streamAssignments,
      default_assignment: decision.defaultKey ?? null,
      stream_tracking: decision.streamTracking,
      settings: event,
      trigger,
      start_seq: window.startSeq ?? null,
    });
  }

  /** The streams a PUT squeezes (both flows: DAI and squeezeback streams share the registry): the event's live streams or the named ones, at most `max_concurrent_streams` (0 = all). */
  private async streamsOf(eventId: number, ids: string[] | undefined, max: number, arrived: number): Promise<Stream[]> {
    // Streams registered just before the request are still in the registries' write-behind buffers.
    await this.deps.streams.settled(arrived);
    // A named stream of another event is not this break's to squeeze.
    const streams = ids
      ? (await this.deps.streams.load(ids)).filter((s) => s.event_id === eventId)
      : await this.deps.streams.streamsOf(eventId);
    return max > 0 ? streams.slice(0, max) : streams;
  }

  async get(id: string): Promise<Json> {
    const row = await this.deps.repo.get(checkId(id));
    return this.withReach(row, this.view(row, await this.deps.repo.segments(row.id)));
  }

  /** The view with what the break reached: this instance's notes are flushed first (other instances' within their flush interval). */
  private async withReach(row: BreakRow, view: Json): Promise<Json> {
    if (!this.deps.reach) return view;
    await this.deps.streams.flush();
    const reach = await this.deps.reach(row.id);
    const own = (view['warnings'] as string[] | undefined) ?? [];
    return { ...view, ...reach, warnings: [...own, ...reachWarnings(reach, row.status)] };
  }

  /** An event's breaks, newest first, each shown as `get` shows it: {results, total_results}. */
  async list(eventId: number, page: number, pageSize: number): Promise<Json> {
    const { rows, total } = await this.deps.repo.listByEvent(eventId, page, pageSize);
    const results = await Promise.all(
      rows.map(async (b) => this.withReach(b, this.view(b, await this.deps.repo.segments(b.id)))),
    );
    return { results, total_results: total };
  }

  async extend(id: string, additionalSec: number): Promise<Json> {
    // Extended to whole segments too, so the new end is a segment boundary.
    const b = await this.deps.repo.get(checkId(id));
    const added = squeezedSpanSec(b.break_duration + additionalSec, b.segment_sec) - b.break_duration;
    const row = await this.deps.repo.extend(b.id, added > 0 ? added : additionalSec, MAX_TOTAL_BREAK_SEC);
    await this.deps.board.changed();
    return this.view(row, await this.deps.repo.segments(row.id));
  }

  /** Ends a live break at the next segment boundary (cue-in follows); an ended break is shown as it is. */
  async terminate(id: string): Promise<Json> {
    const b = await this.deps.repo.get(checkId(id));
    if (b.status !== 'scheduled' && b.status !== 'active') return this.view(b, await this.deps.repo.segments(b.id));
    const start = b.start_time.getTime();
    const segMs = b.segment_sec * 1000;
    return this.endAt(b.id, start + Math.max(0, Math.ceil((Date.now() - start) / segMs)) * segMs);
  }

  /**
   * Ends a live break at `atMs` (an early cue-in's or a cancel's segment), never before it starts
   * and never later than planned; 409 once it has ended.
   */
  async endAt(id: string, atMs: number): Promise<Json> {
    const b = await this.deps.repo.get(checkId(id));
    const row = await this.deps.repo.terminate(b.id, new Date(Math.max(atMs, b.start_time.getTime())));
    await this.deps.board.changed();
    return this.view(row, await this.deps.repo.segments(row.id));
  }

  view(b: BreakRow, segments: SegmentRow[], decision?: Decision): Json {
    const planned = planSegments(b.start_time.getTime(), b.break_duration, b.segment_sec);
    const byIndex = new Map<number, SegmentRow[]>();
    for (const s of segments) byIndex.set(s.idx, [...(byIndex.get(s.idx) ?? []), s]);
    const def = b.assignments.find((a) => a.key === b.default_assignment) ?? b.assignments[0];
    return {
      // `id` as every resource answers it (issue 25); `break_id`, the name the paths use, kept for existing clients.
      id: b.id,
      break_id: b.id,
      status: b.status,
      event_id: b.event_id,
      asset_id: b.settings.asset_id,
      target: b.target,
      start_time: b.start_time.toISOString(),
      end_time: b.end_time.toISOString(),
      break_duration: b.break_duration,
      layout: b.layout,
      abid: b.abid,
      geo_lang_loc: b.geo_lang_loc,
      decision: { source: b.decision_source, reason: b.reason },
      trigger: b.trigger ?? { source: 'api' },
      ads: (def?.ads ?? []).map((a) => ({
        ad_id: a.adId,
        uri: a.uri,
        duration: a.durationSec,
        ...(a.slate ? { slate: true } : {}),
      })),
      assignments: b.assignments.map((a) => ({
        key: a.key,
        source: a.source,
        ads: a.ads.length,
        streams: Object.values(b.stream_assignments).filter((k) => k === a.key).length,
      })),
      streams: decision ? Object.keys(decision.streamAssignments).length : Object.keys(b.stream_assignments).length,
      segments: planned.map((p) => {
        const rows = byIndex.get(p.index) ?? [];
        const ready = rows.filter((r) => r.status === 'ready');
        const status =
          rows.length && ready.length === rows.length
            ? 'ready'
            : rows.some((r) => r.status === 'failed')
              ? 'failed'
              : 'pending';
        const out: Json = {
          index: p.index,
          expected_start: new Date(p.startMs).toISOString(),
          duration: p.durationSec,
          status,
          outputs: ready.length,
          planned_outputs: rows.length,
        };
        if (ready[0]?.output_uri) out['uri'] = ready[0].output_uri;
        return out;
      }),
      created_at: b.created_at.toISOString(),
      updated_at: b.updated_at.toISOString(),
      ...(b.settings?.live_edge_delay_segments ? {} : { warnings: [NO_DELAY_WARNING] }),
    };
  }
}

function checkId(id: string): string {
  if (!BREAK_ID.test(id)) throw notFound(`break ${id.slice(0, 64)} does not exist`);
  return id;
}
