/**
 * The one reader of ISO 8601 / xs:duration values for MPDs (`PT1H2M3.5S`, `P1DT…`): the hot-path
 * trimmer, the stitcher, ID3 inspection and the profile all read `mediaPresentationDuration`,
 * `Period@start/@duration`, `timeShiftBufferDepth` and `suggestedPresentationDelay` through it.
 * Years and months are refused (their length in seconds depends on a calendar an MPD never
 * names); `P`, `PT` and a `T` with nothing after it are not durations (xs:duration §3.3.6.2).
 */
const ISO_DURATION =
  /^\s*P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?\s*$/;

/** Seconds of a duration; NaN when absent or unreadable (what the string-scanning trimmer wants). */
export function parseXsDuration(v: string | undefined): number {
  if (v === undefined) return NaN;
  const m = ISO_DURATION.exec(v);
  if (!m) return NaN;
  const s = v.trim();
  if (s === 'P' || s.endsWith('T')) return NaN;
  return (Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
}

/** The same reading, undefined when absent or unreadable (what DOM readers with `??` fallbacks want). */
export function parseIsoDuration(v: string | undefined): number | undefined {
  const s = parseXsDuration(v);
  return Number.isNaN(s) ? undefined : s;
}

/**
 * Seconds as `PT…S`. `round` (to the millisecond) writes a stitched Period's timing; `ceil` rounds up
 * to the millisecond so a trimmed window never ends inside its first segment, and writes three
 * decimals at most.
 */
export function formatIsoDuration(sec: number, rounding: 'round' | 'ceil' = 'round'): string {
  if (rounding === 'ceil') return `PT${+(Math.ceil(sec * 1000 - 1e-6) / 1000).toFixed(3)}S`;
  return `PT${Math.round(sec * 1000) / 1000}S`;
}
