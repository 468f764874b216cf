/**
 * How often the hot path's text forms took their fast way and how often they handed a playlist to
 * the line-based reference. Plain process-wide numbers, incremented without allocating: tests read
 * them to prove the fast path was taken, and the manifest proxy exports them as Prometheus counters.
 */
export const textPathStats = {
  /** Live-window trims decided by offsets (trim-text.ts), including "nothing to trim". */
  trimOffsets: 0,
  /** Trims handed to the line-based reference (trim.ts): shapes the offsets form does not handle. */
  trimReference: 0,
  /** Raw media playlists not in normalised form, rewritten whole before the text trim (trimThenRewrite). */
  trimRewrittenFirst: 0,
  /** Break substitutions done on the text (applyBreakText). */
  breakText: 0,
  /** Break substitutions handed to the line-based applyBreak. */
  breakReference: 0,
};

export type TextPathStats = typeof textPathStats;

/** A copy of the counters, to compare before and after some calls. */
export function textPathSnapshot(): TextPathStats {
  return { ...textPathStats };
}
