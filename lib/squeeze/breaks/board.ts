/**
 * The live snapshot of squeeze breaks every instance keeps in memory (docs/design.md §6): per event,
 * the break windows and, per ad assignment, `content path → squeezeback URI` for ready outputs.
 * Rebuilt from Postgres whenever any instance publishes a change (a new break, a ready output, an
 * extension), so the hot path reads only memory and every instance renders the same manifest.
 */
import { keys, type StateStore } from '../../store/index.js';
import { Reloader } from '../../store/reloader.js';
import type { Logger } from '../../log/index.js';
import type { Registry } from '../../metrics/index.js';
import { applyBreakText, playlistLines, type BreakWindow } from '../../hls/index.js';
import type { BreakSource, ContentKind } from '../../delivery/break-source.js';
import type { DecidedAd } from '../../ads/types.js';
import type { TrackingPoint } from './plan.js';
import { segmentPath } from './source.js';
import { startSeqOf, type BreakRepo, type BreakRow } from './repo.js';
import { TextMemo } from './text-memo.js';
import type { BreakReach } from './reach.js';
import { ContentPins, parsePin, pinOf } from './content-pins.js';

export interface LiveSegment {
  uri: string;
  events: TrackingPoint[];
  /** Start of the content segment it replaces (ms): checked against a `'timed'` URI's own time. */
  startMs: number;
}

export interface LiveAssignment {
  key: string;
  ads: DecidedAd[];
  byPath: Map<string, LiveSegment>;
  /** byPath looked up by the full URI a manifest carries, filled as renderings ask (null: not ready). */
  byUri: Map<string, LiveSegment | null>;
  /** byPath by file name: a viewer playlist may name the segments of the source under another directory (issue 30.2). */
  byName: Map<string, Array<[string, LiveSegment]>>;
  /** Start times of the ready outputs, in 250 ms steps: tells a segment not ready from one ready under another name. */
  readyTimes: Set<number>;
  /**
   * Renderings by input playlist: the streams of an assignment mostly receive the same variant
   * text from the DAI host, so the substitution runs once per distinct text, not once per stream.
   */
  rendered: TextMemo<Rendering>;
}

interface Rendering {
  text: string;
  points: TrackingPoint[];
  /** What this rendering tells of the break's reach: a squeezed segment carried, or ready ones matched nowhere. */
  reach: 'matched' | 'unmatched' | undefined;
}

const RENDERED_MAX = 512;
/** Characters of input + output all renderings may hold together (≈ 2 bytes each). */
const RENDERED_CHARS_MAX = 16 * 1024 * 1024;
const FIRED_MAX = 200_000;

/**
 * A squeezed .ts can only stand in for a plain segment: byte ranges, fMP4 (EXT-X-MAP) and
 * encrypted content keep their segments (the cue tags still mark the break).
 */
function substitutable(text: string): boolean {
  return !text.includes('#EXT-X-BYTERANGE') && !text.includes('#EXT-X-MAP') && !/#EXT-X-KEY:METHOD=(?!NONE)/.test(text);
}

const BY_URI_MAX = 20_000;

/**
 * The ready output for a URI of a viewer's playlist (issue 30.2): by its path, else by the resolved
 * URI's trailing path — the source may name a segment `seg_1.ts` relative to
 * `https://origin/live/ch1/720p.m3u8` (path `/live/ch1/seg_1.ts`) where the DAI host's variant names
 * it `/ch1/seg_1.ts`. Among the ready outputs with the same file name, the one sharing the most
 * trailing path components wins; a tie (the same name in two variants, nothing else to tell them
 * apart) matches nothing rather than the wrong variant. A `'timed'` URI's match is checked against
 * its time by the caller (sameTime); the result cached here is the path's alone.
 */
function lookup(a: LiveAssignment, uri: string): LiveSegment | undefined {
  let s = a.byUri.get(uri);
  if (s === undefined) {
    const path = segmentPath(uri);
    s = a.byPath.get(path) ?? byTrailingPath(a, path) ?? null;
    if (a.byUri.size >= BY_URI_MAX) a.byUri.clear();
    a.byUri.set(uri, s);
  }
  return s ?? undefined;
}

const fileName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

function byTrailingPath(a: LiveAssignment, path: string): LiveSegment | undefined {
  const candidates = a.byName.get(fileName(path));
  if (!candidates) return undefined;
  if (candidates.length === 1) return candidates[0]![1];
  const want = path.split('/');
  let best: LiveSegment | undefined;
  let bestScore = -1;
  let tie = false;
  for (const [p, seg] of candidates) {
    const have = p.split('/');
    let n = 0;
    while (n < want.length && n < have.length && want[want.length - 1 - n] === have[have.length - 1 - n]) n++;
    if (n > bestScore) [best, bestScore, tie] = [seg, n, false];
    else if (n === bestScore) tie = true;
  }
  return tie ? undefined : best;
}

const TIME_STEP_MS = 250;
/**
 * A `'timed'` URI (one the DAI host's variant names relative to itself) takes an output only when
 * the output stands for the same time: a file name of the source seen in another directory is
 * then the same media, not an ad or another segment that happens to share the name.
 */
const sameTime = (seg: LiveSegment, ms: number) => Math.abs(seg.startMs - ms) <= TIME_STEP_MS;
const hasReadyAt = (a: LiveAssignment, ms: number) => {
  const k = Math.round(ms / TIME_STEP_MS);
  return a.readyTimes.has(k) || a.readyTimes.has(k - 1) || a.readyTimes.has(k + 1);
};

export interface LiveBreak {
  id: string;
  eventId: number;
  status: BreakRow['status'];
  window: BreakWindow;
  /**
   * How far behind the live edge a viewer of the event can still be playing the break's end (ms):
   * the event's live-edge delay and its live window (./player-endpoints.ts answers /vast that long).
   */
  behindMs: number;
  assignments: Map<string, LiveAssignment>;
  streamAssignments: Map<string, string>;
  streamTracking: Map<string, Array<DecidedAd['tracking']>>;
  defaultKey: string | undefined;
}

/** The ads of an assignment as one stream sees them: with that stream's own tracking when it has some. */
export function adsForStream(b: LiveBreak, a: LiveAssignment, streamId: string): DecidedAd[] {
  const own = b.streamTracking.get(streamId);
  return own ? a.ads.map((ad, i) => ({ ...ad, tracking: own[i] ?? {} })) : a.ads;
}

/**
 * Called when a stream's manifest carries squeezed segments with tracking points (DAI streams fire
 * their own beacons). False when the points were refused (a stream not proven yet): they are
 * handed over again with the stream's next rendering that carries them, not marked as done.
 */
export type SqueezedHook = (
  streamId: string,
  b: LiveBreak,
  a: LiveAssignment,
  points: TrackingPoint[],
  flow: 'dai' | 'squeezeback',
) => boolean | void;

/** What the board reads from the durable record: BreakRepo in the service, rows held in memory in tests. */
export type BoardRows = Pick<BreakRepo, 'board'>;

export class BreakBoard extends Reloader implements BreakSource {
  generation = 0;
  private byEvent = new Map<number, LiveBreak[]>();
  private byId = new Map<string, LiveBreak>();
  onSqueezed: SqueezedHook | undefined;
  /** Records which streams each break reached, for the break API (set by the service). */
  reach: BreakReach | undefined;
  /** Tracking points already handed to onSqueezed, by stream and break: each is handed over once. */
  private readonly fired = new Map<string, Set<string>>();
  private renderedChars = 0;
  /** What the last rebuild saw, so an unchanged snapshot keeps its generation (and the manifest cache). */
  private signature = '';
  private readonly notReady;
  private readonly unmatched;
  private readonly keptContent;
  /** Break segments published as content: they stay content (./content-pins.ts). */
  private readonly pins: ContentPins;
  private readonly warnLog: Logger;
  /** Breaks already logged as having ready outputs that matched a viewer playlist's segment nowhere. */
  private readonly warnedUnmatched = new Set<string>();

  constructor(
    private readonly repo: BoardRows,
    state: StateStore,
    log: Logger,
    metrics: Registry,
    private readonly retentionMs: number,
  ) {
    super(keys.channel('squeeze-breaks'), state, log, 'squeeze breaks');
    this.warnLog = log;
    this.pins = new ContentPins(state, log);
    this.notReady = metrics
      .counter(
        'squeeze_segments_not_ready_total',
        'Break segments served as content because their squeezeback output was not ready',
      )
      .with();
    this.unmatched = metrics
      .counter(
        'squeeze_segments_unmatched_total',
        'Break segments served as content although outputs were ready for their time: no ready output matched the URI the viewer playlist carries',
      )
      .with();
    this.keptContent = metrics
      .counter(
        'squeeze_segments_kept_content_total',
        'Break segments served as content although their squeezeback output is ready: an earlier playlist published them as content, and a listed URI never changes',
      )
      .with();
    metrics.gauge('squeeze_breaks_live', 'Breaks held in the live snapshot', () => this.byId.size);
  }

  override async start(refreshEveryMs?: number): Promise<void> {
    await this.pins.start((breakId, member) => this.pinnedElsewhere(breakId, member));
    await super.start(refreshEveryMs);
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.pins.stop();
  }

  /**
   * Another instance published a segment as content. Renderings here that carry its output (this
   * instance saw it ready first: the snapshots' race) are dropped, so the next one serves content
   * as the other instance did; the viewers of both then agree from the next refresh on.
   */
  private pinnedElsewhere(breakId: string, member: string): void {
    const pin = parsePin(member);
    const a = this.byId.get(breakId)?.assignments.get(pin.assignment);
    const found = a && lookup(a, pin.path);
    if (!found || (pin.step !== undefined && !sameTime(found, pin.step * TIME_STEP_MS))) return;
    a.rendered.clear();
    this.generation++;
  }

  /** A `'timed'` URI's pin, its time as sameTime reads it (a step either side). */
  private pinnedNear(breakId: string, assignment: string, path: string, step: number): boolean {
    for (let d = -1; d <= 1; d++) if (this.pins.has(breakId, pinOf(assignment, path, step + d))) return true;
    return false;
  }

  forEvent(eventId: number): LiveBreak[] | undefined {
    return this.byEvent.get(eventId);
  }

  get(breakId: string): LiveBreak | undefined {
    return this.byId.get(breakId);
  }

  assignmentFor(b: LiveBreak, streamId: string | undefined): LiveAssignment | undefined {
    const key = (streamId !== undefined && b.streamAssignments.get(streamId)) || b.defaultKey;
    return key === undefined ? undefined : b.assignments.get(key);
  }

  /** Breaks that name this stream in a per-stream decision (for streams whose event is not known here). */
  eventOfStream(streamId: string): number | undefined {
    for (const b of this.byId.values()) if (b.streamAssignments.has(streamId)) return b.eventId;
    return undefined;
  }

  renderKey(eventId: number, streamId: string): string {
    const list = this.byEvent.get(eventId);
    if (!list) return '';
    let key = '';
    for (const b of list) key += `${this.assignmentFor(b, streamId)?.key ?? '-'};`;
    return key;
  }

  apply(
    text: string,
    eventId: number,
    streamId: string | undefined,
    isContent: (uri: string) => ContentKind,
    flow: 'dai' | 'squeezeback' = 'dai',
  ): string | undefined {
    const list = this.byEvent.get(eventId);
    if (!list) return undefined;
    let out: string | undefined;
    for (const b of list) {
      const a = this.assignmentFor(b, streamId);
      if (!a) continue;
      const input = out ?? text;
      let r = a.rendered.get(input);
      if (!r) {
        const squeeze = substitutable(input);
        // A DAI host's cues are its pods (kept, the break suspended across them); an origin's cue in the
        // squeezeback flow is the one that started the break (replaced by the break's own tags).
        let unmatched = 0;
        let kept = 0;
        const points: TrackingPoint[] = [];
        const squeezedUri = (uri: string, timeMs: number) => {
          if (!squeeze) return undefined;
          const timed = isContent(uri) === 'timed';
          let found = lookup(a, uri);
          if (found && timed && !sameTime(found, timeMs)) found = undefined;
          if (found === undefined && hasReadyAt(a, timeMs)) unmatched++;
          // Published as content once (here or on another instance): content for good.
          const path = segmentPath(uri);
          const step = Math.round(timeMs / TIME_STEP_MS);
          if (timed ? this.pinnedNear(b.id, a.key, path, step) : this.pins.has(b.id, pinOf(a.key, path))) {
            if (found) kept++;
            return undefined;
          }
          if (found) points.push(...found.events);
          else
            this.pins.add(
              b.id,
              pinOf(a.key, path, timed ? step : undefined),
              Math.max(0, b.window.endMs - Date.now()) + this.retentionMs,
            );
          return found?.uri;
        };
        const applied = applyBreakText(
          input,
          b.window,
          squeezedUri,
          (uri) => isContent(uri) !== false,
          flow === 'dai' ? 'keep' : 'replace',
        );
        if (applied.notReady > unmatched + kept) this.notReady.inc(applied.notReady - unmatched - kept);
        if (kept) this.keptContent.inc(kept);
        if (unmatched) {
          this.unmatched.inc(unmatched);
          if (!this.warnedUnmatched.has(b.id) && this.warnedUnmatched.add(b.id))
            this.warnLog.warn(
              { breakId: b.id, eventId, streamId, example: playlistLines(input).find((l) => !l.startsWith('#')) },
              'ready squeezeback segments match no segment of a viewer playlist',
            );
        }
        r = {
          text: applied.text,
          points,
          reach: applied.squeezed.length ? 'matched' : unmatched ? 'unmatched' : undefined,
        };
        this.renderedChars += input.length + r.text.length;
        if (a.rendered.size >= RENDERED_MAX || this.renderedChars > RENDERED_CHARS_MAX) this.forgetRenderings();
        a.rendered.set(input, r);
      }
      out = r.text;
      if (r.reach && streamId !== undefined) this.reach?.note(b.id, streamId, r.reach);
      if (streamId !== undefined && this.onSqueezed && r.points.length) this.handOver(streamId, b, a, r.points, flow);
    }
    return out;
  }

  private forgetRenderings(): void {
    for (const b of this.byId.values()) for (const a of b.assignments.values()) a.rendered.clear();
    this.renderedChars = 0;
  }

  private handOver(
    streamId: string,
    b: LiveBreak,
    a: LiveAssignment,
    points: TrackingPoint[],
    flow: 'dai' | 'squeezeback',
  ): void {
    const key = `${streamId}|${b.id}`;
    const done = this.fired.get(key);
    const fresh = done ? points.filter((p) => !done.has(`${p.ad}:${p.event}`)) : points;
    if (!fresh.length) return;
    // A refused hand-over leaves nothing behind: unproven (fabricated) streams hold no memory here.
    if (this.onSqueezed!(streamId, b, a, fresh, flow) === false) return;
    let set = done;
    if (!set) {
      if (this.fired.size >= FIRED_MAX) this.fired.clear(); // the forwarder's own de-duplication still holds
      set = new Set();
      this.fired.set(key, set);
    }
    for (const p of fresh) set.add(`${p.ad}:${p.event}`);
  }

  protected async rebuild(): Promise<void> {
    const { breaks, ready } = await this.repo.board(this.retentionMs);
    const signature = `${breaks.map((b) => `${b.id}:${b.status}:${b.updated_at.getTime()}`).join(',')}|${ready.length}|${ready.reduce((m, s) => Math.max(m, s.updated_at?.getTime() ?? 0), 0)}`;
    if (signature === this.signature) return;
    this.signature = signature;
    const byId = new Map<string, LiveBreak>();
    const byEvent = new Map<number, LiveBreak[]>();
    for (const row of breaks) {
      const assignments = new Map<string, LiveAssignment>(
        row.assignments.map((a) => [
          a.key,
          {
            key: a.key,
            ads: a.ads,
            byPath: new Map(),
            byUri: new Map(),
            byName: new Map(),
            readyTimes: new Set(),
            rendered: new TextMemo<Rendering>(),
          },
        ]),
      );
      const b: LiveBreak = {
        id: row.id,
        eventId: row.event_id,
        status: row.status,
        window: {
          startMs: row.start_time.getTime(),
          endMs: row.end_time.getTime(),
          durationSec: row.break_duration,
          startSeq: startSeqOf(row),
        },
        behindMs: behindMs(row),
        assignments,
        streamAssignments: new Map(Object.entries(row.stream_assignments)),
        streamTracking: new Map(Object.entries(row.stream_tracking ?? {})),
        defaultKey: row.default_assignment ?? undefined,
      };
      byId.set(b.id, b);
      const list = byEvent.get(b.eventId) ?? [];
      list.push(b);
      byEvent.set(b.eventId, list);
    }
    for (const s of ready) {
      const a = byId.get(s.break_id)?.assignments.get(s.assignment);
      if (!a) continue;
      const live = { uri: s.output_uri!, events: s.events, startMs: new Date(s.start_time).getTime() };
      a.byPath.set(s.content_path, live);
      const name = fileName(s.content_path);
      const same = a.byName.get(name);
      if (same) same.push([s.content_path, live]);
      else a.byName.set(name, [[s.content_path, live]]);
      a.readyTimes.add(Math.round(live.startMs / TIME_STEP_MS));
    }
    // Before the snapshot is swapped in: its first renderings already honour other instances' pins.
    await this.pins.track(byId.keys());
    this.byId = byId;
    this.byEvent = byEvent;
    this.renderedChars = 0;
    this.generation++;
  }
}

/** Beyond this a viewer is not taken to be still playing a break (the break retention's default, 600 s). */
export const MAX_BEHIND_MS = 600_000;
/** Where a player plays a live playlist: three target durations from its end (RFC 8216 §6.3.3). */
const PLAYER_SYNC_SEGMENTS = 3;

/**
 * How far behind the live edge a viewer of the break's event can be (ms): the event's live-edge
 * delay, then its live window (a DVR viewer at its start; at least the player's own distance from
 * the end), and one segment for the time from a listing to the player's load. Capped.
 */
function behindMs(row: BreakRow): number {
  const s = row.settings as Partial<BreakRow['settings']> | undefined;
  const delay = Math.max(0, Number(s?.live_edge_delay_segments) || 0);
  const window = Math.max(PLAYER_SYNC_SEGMENTS, Number(s?.windows_segs) || 0);
  return Math.min(MAX_BEHIND_MS, Math.round(row.segment_sec * 1000 * (delay + window + 1)));
}
