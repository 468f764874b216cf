/**
 * Squeezeback break substitution (DESIGN.md §4): break segments are those whose program
 * date-time falls in the break window. Each is replaced by its squeezeback segment when the
 * transcoder has produced it (else the content segment stays: the player never gets a broken URI).
 * `#EXT-X-CUE-OUT:<duration>` precedes the first break segment, `#EXT-X-CUE-OUT-CONT` the
 * following ones, `#EXT-X-CUE-IN` the first segment after. Absolute DAI ad segments are untouched.
 */
import { parseMedia, programDateTimes, type MediaPlaylist } from './media.js';

export interface BreakWindow {
  startMs: number;
  endMs: number;
  durationSec: number;
}

export interface BreakResult {
  lines: string[];
  /** Break segments served as content because their squeezeback output was not ready. */
  notReady: number;
  /** Content URIs of the squeezeback segments this playlist carries. */
  squeezed: string[];
}

const num = (x: number) => +x.toFixed(3);

export function applyBreakToMedia(p: MediaPlaylist, window: BreakWindow, squeezedUri: (contentUri: string) => string | undefined, isContent: (uri: string) => boolean): BreakResult {
  const times = programDateTimes(p.segments);
  const out = [...p.header];
  let notReady = 0;
  const squeezed: string[] = [];
  let previousInBreak = false;
  p.segments.forEach((s, i) => {
    const t = times[i];
    const inBreak = t !== undefined && t >= window.startMs - 1 && t < window.endMs - 1;
    let lines = s.lines;
    if (inBreak) {
      const elapsed = (t - window.startMs) / 1000;
      const cue = !previousInBreak && elapsed < 0.001 ? `#EXT-X-CUE-OUT:${num(window.durationSec)}` : `#EXT-X-CUE-OUT-CONT:ElapsedTime=${num(Math.max(0, elapsed))},Duration=${num(window.durationSec)}`;
      const replacement = isContent(s.uri) ? squeezedUri(s.uri) : undefined;
      if (isContent(s.uri) && replacement === undefined) notReady++;
      if (replacement !== undefined) squeezed.push(s.uri);
      lines = [cue, ...lines.slice(0, -1), replacement ?? s.uri];
    } else if (previousInBreak) {
      lines = ['#EXT-X-CUE-IN', ...lines];
    }
    previousInBreak = inBreak;
    out.push(...lines);
  });
  out.push(...p.tail);
  return { lines: out, notReady, squeezed };
}

export function applyBreak(lines: string[], window: BreakWindow, squeezedUri: (contentUri: string) => string | undefined, isContent: (uri: string) => boolean = () => true): BreakResult {
  return applyBreakToMedia(parseMedia(lines), window, squeezedUri, isContent);
}
