/**
 * What a stitched session keeps instead of its rendered texts (issue 24 item 4): the splice plan.
 * The texts are a pure function of the plan and its sources (the content's manifests and each ad's),
 * and the sources are shared by every session of an asset and of an ad, so they are cached per URL
 * (./source-cache.ts), not per session. Tuples rather than objects: the plan is stored as JSON and a
 * 2-hour VOD with 20 breaks should stay within 2 KiB.
 */

/** Where a source comes from again: a fetched URL, a conditioned creative's key, or the slate cut to a gap. */
export type SourceRef = { u: string } | { c: string } | { s: string; gap: number; seg: number };

export interface SessionPlan {
  /** The public base URL of the instance that stitched it: the session's URLs name it wherever it is rendered. */
  base: string;
  /** The content rendition's URL. */
  content: string;
  /** HLS Interstitials: the date the content's first segment is given (ms, whole seconds). */
  epochMs?: number;
  /** The distinct sources the pods' ads are read from. */
  srcs: SourceRef[];
  /** Pods in order: id, cue point (content seconds), ads as [ad key, index into `srcs`]. */
  pods: Array<[string, number, Array<[string, number]>]>;
}

/**
 * The cache key of a source reference (one entry per URL or conditioned key, whatever the session).
 * A conditioned source names its segments under a public base URL, so its key includes the base
 * the session was stitched under (instances behind one address share the entry).
 */
export function sourceKey(ref: SourceRef, base: string): string {
  if ('u' in ref) return `u ${ref.u}`;
  if ('c' in ref) return `c ${ref.c} ${base}`;
  return `s ${ref.s} ${ref.gap} ${ref.seg} ${base}`;
}
