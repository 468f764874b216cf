/**
 * Which viewers a squeeze break reached (issue 30.2): a break whose ready outputs match no segment
 * of any viewer's playlist completes with every segment `ready` while players get plain content,
 * so the break API says how many streams carried at least one squeezed segment (`matched_streams`)
 * and how many were served content although outputs were ready for those times
 * (`unmatched_streams`), with a warning when none matched.
 *
 * The board notes a stream once per break in memory (the hot path: one Set lookup); the notes
 * ride on the stream registry's flush (FlushContributor) into two sorted sets per break in the
 * state store, so every instance's viewers count and the API answers the same on every instance.
 * Sorted sets (scored by when first noted) because their size is read without reading members.
 */
import { keys, type Batch, type StateStore } from '../../store/index.js';
import type { FlushContributor } from '../../streams/registry.js';

export type ReachKind = 'matched' | 'unmatched';

/** Stream × break notes already written, remembered so a stream polling every few seconds is written once. */
const WRITTEN_MAX = 200_000;

export interface BreakReachCounts {
  matched_streams: number;
  unmatched_streams: number;
}

export class BreakReach implements FlushContributor {
  private pending = new Map<string, number>();
  private readonly written = new Set<string>();

  /** @param ttlMs how long a break's records are kept (the break retention). */
  constructor(private readonly ttlMs: number) {}

  /** Synchronous, never throws: a stream's rendering of a break's window matched (or not). */
  note(breakId: string, streamId: string, kind: ReachKind): void {
    const k = `${kind}\n${breakId}\n${streamId}`;
    if (this.written.has(k) || this.pending.has(k)) return;
    this.pending.set(k, Date.now());
  }

  write(batch: Batch): (() => void) | undefined {
    if (this.pending.size === 0) return undefined;
    const sent = this.pending;
    this.pending = new Map();
    const touched = new Set<string>();
    for (const [k, at] of sent) {
      const [kind, breakId, streamId] = k.split('\n') as [ReachKind, string, string];
      const key = keys.squeezeBreak(breakId, kind);
      batch.zadd(key, at, streamId);
      touched.add(key);
      if (this.written.size >= WRITTEN_MAX) this.written.clear(); // a repeat ZADD is harmless
      this.written.add(k);
    }
    for (const key of touched) batch.expire(key, this.ttlMs);
    return () => {
      for (const [k, at] of sent) {
        this.written.delete(k);
        if (!this.pending.has(k)) this.pending.set(k, at);
      }
    };
  }
}

/** The counts every instance's notes add up to (an API read, off the hot path). */
export async function readReach(state: StateStore, breakId: string): Promise<BreakReachCounts> {
  const [matched, unmatched] = await Promise.all([
    state.zcard(keys.squeezeBreak(breakId, 'matched')),
    state.zcard(keys.squeezeBreak(breakId, 'unmatched')),
  ]);
  return { matched_streams: matched, unmatched_streams: unmatched };
}

/**
 * The break API's warnings: none matched although some viewer's playlist covered the break with
 * outputs ready, or a completed break no viewer's playlist carried at all.
 */
export function reachWarnings(reach: BreakReachCounts, status: string): string[] {
  if (reach.matched_streams > 0) return [];
  if (reach.unmatched_streams > 0)
    return [
      `no viewer playlist matched the break's segments: ${reach.unmatched_streams} stream(s) were served content although squeezed segments were ready (their playlists name the segments differently from source_uri)`,
    ];
  if (status === 'completed')
    return [
      "no viewer playlist carried the break's squeezed segments (no stream's playlist was rendered during the break)",
    ];
  return [];
}
