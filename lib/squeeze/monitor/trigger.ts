/**
 * What the cues of one playlist refresh ask for (docs/design.md §10), as a pure function: a cue-out
 * starts a break at its segment, a cue-in or a cancel ends one there, everything else is ignored.
 * Each cue is acted on once per process (`seen` carries over between refreshes); across processes
 * and restarts the monitor claims `claim` in Postgres before acting.
 */
import type { HlsCue, HlsCueReading, SegmentCues } from '../../scte35/index.js';

export type IgnoreReason = 'cont' | 'other' | 'error' | 'stale';

interface Base {
  /** The trigger-once claim: the cue's key plus its kind (an out/in pair sharing a DATERANGE ID shares its key). */
  claim: string;
  cue: HlsCue;
  segment: SegmentCues;
  /** The segment's program date-time, else its estimated start (see `segmentStart`). */
  atMs: number;
  /** true when the segment has no program date-time and `atMs` is estimated from the live edge. */
  estimated: boolean;
}

export type CueAction =
  | (Base & { type: 'start'; durationSec: number })
  | (Base & { type: 'end' })
  | (Base & { type: 'ignore'; reason: IgnoreReason });

export interface CueRules {
  /** When the playlist was read: the live edge (the end of its last segment) is taken to be now. */
  nowMs: number;
  /** A cue-out without a duration (a bare EXT-X-CUE-OUT) lasts this long unless a cue-in ends it first. */
  defaultDurationSec: number;
  /** The API's bound on one break (schema.ts MAX_BREAK_SEC). */
  maxDurationSec: number;
}

export const claimOf = (cue: HlsCue): string => `${cue.key}|${cue.kind}`;

/**
 * A segment's start: its program date-time, else counted back from the live edge by the EXTINF
 * durations of it and the segments after it (a live playlist's last segment ends about now).
 */
export function segmentStart(
  segments: readonly SegmentCues[],
  i: number,
  nowMs: number,
): { atMs: number; estimated: boolean } {
  const seg = segments[i]!;
  if (seg.program_date_time_ms !== undefined) return { atMs: seg.program_date_time_ms, estimated: false };
  let after = 0;
  for (let j = i; j < segments.length; j++) after += segments[j]!.duration;
  return { atMs: Math.round(nowMs - after * 1000), estimated: true };
}

/**
 * Where a segment stands in a break placed by media sequence (a source without program date-time):
 * ms from the break's first segment, by the EXTINF durations of the segments between them; undefined
 * when the break's first segment has left the playlist (the caller keeps its estimate then).
 */
export function sequenceOffsetMs(segments: readonly SegmentCues[], startSeq: number, seq: number): number | undefined {
  if (!segments.some((s) => s.media_sequence === startSeq)) return undefined;
  let ms = 0;
  for (const s of segments) if (s.media_sequence >= startSeq && s.media_sequence < seq) ms += s.duration * 1000;
  return seq >= startSeq
    ? ms
    : -segments
        .filter((s) => s.media_sequence >= seq && s.media_sequence < startSeq)
        .reduce((m, s) => m + s.duration * 1000, 0);
}

/**
 * The actions for the cues of `reading` not in `seen`, in playlist order, and the claims seen in
 * this reading (the next call's `seen`: cues that left the window are forgotten). Cues after the
 * last segment wait until their segment is published.
 */
export function cueActions(
  reading: HlsCueReading,
  seen: ReadonlySet<string>,
  rules: CueRules,
): { actions: CueAction[]; seen: Set<string> } {
  const actions: CueAction[] = [];
  const nextSeen = new Set<string>();
  reading.segments.forEach((segment, i) => {
    for (const cue of segment.cues) {
      const claim = claimOf(cue);
      nextSeen.add(claim);
      if (seen.has(claim)) continue;
      const base: Base = { claim, cue, segment, ...segmentStart(reading.segments, i, rules.nowMs) };
      actions.push(decide(base, rules));
    }
  });
  return { actions, seen: nextSeen };
}

function decide(base: Base, rules: CueRules): CueAction {
  const { cue } = base;
  // A binary that does not decode is not trusted, whatever its tag says.
  if (cue.error) return { ...base, type: 'ignore', reason: 'error' };
  switch (cue.kind) {
    case 'out': {
      const wanted =
        cue.duration_sec !== undefined && cue.duration_sec > 0 ? cue.duration_sec : rules.defaultDurationSec;
      const durationSec = Math.min(wanted, rules.maxDurationSec);
      // A break that would already be over (a cue read late, after a long outage) starts nothing.
      if (base.atMs + durationSec * 1000 <= rules.nowMs) return { ...base, type: 'ignore', reason: 'stale' };
      return { ...base, type: 'start', durationSec };
    }
    case 'in':
    case 'cancel':
      return { ...base, type: 'end' };
    case 'cont':
      // CONT repeats a break in progress; it never starts one (docs/design.md §10).
      return { ...base, type: 'ignore', reason: 'cont' };
    default:
      // Program, chapter and other segmentation types, splice_null: not ads.
      return { ...base, type: 'ignore', reason: 'other' };
  }
}
