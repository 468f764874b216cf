/**
 * Squeezeback break substitution (docs/design.md §4): break segments are those whose program
 * date-time falls in the break window; in a playlist without program date-time, those the break's
 * media sequence and the accumulated EXTINF durations from it place there (./media.ts segmentTimes). Each is replaced by its squeezeback segment when the
 * transcoder has produced it (else the content segment stays: the player never gets a broken URI).
 * `#EXT-X-CUE-OUT:<duration>` precedes the first break segment, `#EXT-X-CUE-OUT-CONT` the
 * following ones, `#EXT-X-CUE-IN` the first segment after. Absolute DAI ad segments are untouched.
 */
import { HEADER_TAGS, meanDurationMs, parseMedia, segmentTimes, type MediaPlaylist, type SequenceAnchor } from './media.js';
import { joinLines, splitLines } from './rewrite.js';
import { textPathStats } from './stats.js';

export interface BreakWindow {
  startMs: number;
  endMs: number;
  durationSec: number;
  /** Media sequence of the break's first segment: places segments that carry no program date-time. */
  startSeq?: number | undefined;
}

const anchorOf = (w: BreakWindow): SequenceAnchor | undefined => (w.startSeq === undefined ? undefined : { startSeq: w.startSeq, startMs: w.startMs });

export interface BreakResult {
  lines: string[];
  /** Break segments served as content because their squeezeback output was not ready. */
  notReady: number;
  /** Content URIs of the squeezeback segments this playlist carries. */
  squeezed: string[];
}

const num = (x: number) => +x.toFixed(3);
const CUE_IN = '#EXT-X-CUE-IN';
const CUE_IN_LINE = `${CUE_IN}\n`;

export function applyBreakToMedia(p: MediaPlaylist, window: BreakWindow, squeezedUri: (contentUri: string) => string | undefined, isContent: (uri: string) => boolean): BreakResult {
  const times = segmentTimes(p, anchorOf(window));
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
      // The break's first segment in this playlist opens it with CUE-OUT, unless the break began
      // before the playlist's first segment (then the player joins it: CUE-OUT-CONT).
      const cue =
        !previousInBreak && (elapsed < 0.001 || i > 0)
          ? `#EXT-X-CUE-OUT:${num(window.durationSec)}`
          : `#EXT-X-CUE-OUT-CONT:ElapsedTime=${num(Math.max(0, elapsed))},Duration=${num(window.durationSec)}`;
      const replacement = isContent(s.uri) ? squeezedUri(s.uri) : undefined;
      if (isContent(s.uri) && replacement === undefined) notReady++;
      if (replacement !== undefined) squeezed.push(s.uri);
      // A cue-in closing an earlier break on this segment stays first: CUE-IN, then CUE-OUT.
      const lead = lines[0] === CUE_IN ? 1 : 0;
      lines = [...lines.slice(0, lead), cue, ...lines.slice(lead, -1), replacement ?? s.uri];
    } else if (previousInBreak) {
      lines = [CUE_IN, ...lines];
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

const PDT = '#EXT-X-PROGRAM-DATE-TIME:';
/** Program date-times repeat across every stream's rendering of the same live edge: parse each once. */
const pdtCache = new Map<string, number>();
const PDT_CACHE_SIZE = 4096;

function parsePdt(value: string): number {
  let t = pdtCache.get(value);
  if (t === undefined) {
    t = Date.parse(value);
    if (pdtCache.size >= PDT_CACHE_SIZE) pdtCache.clear();
    pdtCache.set(value, t);
  }
  return t;
}
const EXTINF = '#EXTINF:';
const MEDIA_SEQUENCE = '#EXT-X-MEDIA-SEQUENCE:';

/** The EXTINF durations of the text's segments, read as the loop below reads them (for segmentTimes' mean). */
function textDurations(text: string): number[] {
  const out: number[] = [];
  let duration = 0;
  for (let ls = 0; ls < text.length;) {
    let le = text.indexOf('\n', ls);
    if (le === -1) le = text.length;
    if (text.charCodeAt(ls) !== 35) {
      out.push(duration);
      duration = 0;
    } else if (text.startsWith(EXTINF, ls)) duration = parseFloat(text.slice(ls + EXTINF.length, le)) || 0;
    ls = le + 1;
  }
  return out;
}

function headerTagAt(text: string, start: number, end: number): boolean {
  const colon = text.indexOf(':', start);
  return HEADER_TAGS.has(text.slice(start, colon === -1 || colon > end ? end : colon));
}

/**
 * The same substitution on the playlist text, without splitting it into lines: the text is copied
 * in runs and only cue tags and squeezed URIs are written in between (the hot path renders it once
 * per playlist and micro-cache period). Its output equals `joinLines(applyBreak(splitLines(text)))`;
 * for the rare playlist whose header tags stand after the first segment's tags it defers to that
 * line-based form.
 */
export function applyBreakText(
  text: string,
  window: BreakWindow,
  squeezedUri: (contentUri: string) => string | undefined,
  isContent: (uri: string) => boolean = () => true,
): { text: string; notReady: number; squeezed: string[] } {
  // Plain concatenation (V8 ropes) beats collecting pieces for a join at this size.
  let out = '';
  const squeezed: string[] = [];
  const durationText = String(num(window.durationSec));
  let notReady = 0;
  let copied = 0;
  let segments = 0;
  let segStart = -1;
  let pdt: number | undefined;
  let duration = 0;
  let next: number | undefined;
  let previousInBreak = false;
  // Placement by media sequence (segments without program date-time), as segmentTimes does it.
  const startSeq = window.startSeq;
  let mediaSequence = 0;
  let sum: number | undefined;
  /** Segments between the anchor and the playlist's first; their mean-EXTINF estimate is computed only when an untimed segment needs it. */
  let before = 0;
  let base: number | undefined;
  for (let ls = 0; ls < text.length;) {
    let le = text.indexOf('\n', ls);
    if (le === -1) le = text.length;
    if (text.charCodeAt(ls) === 35) {
      if (segments === 0 && headerTagAt(text, ls, le)) {
        if (segStart !== -1) {
          textPathStats.breakReference++;
          const r = applyBreak(splitLines(text), window, squeezedUri, isContent);
          return { text: joinLines(r.lines), notReady: r.notReady, squeezed: r.squeezed };
        }
        if (text.startsWith(MEDIA_SEQUENCE, ls)) mediaSequence = Number(text.slice(ls + MEDIA_SEQUENCE.length, le)) || 0;
      } else {
        if (segStart === -1) segStart = ls;
        if (text.startsWith(EXTINF, ls)) duration = parseFloat(text.slice(ls + EXTINF.length, le)) || 0;
        else if (text.startsWith(PDT, ls)) {
          const t = parsePdt(text.slice(ls + PDT.length, le));
          if (!Number.isNaN(t)) pdt = t;
        }
      }
    } else {
      if (segStart === -1) segStart = ls;
      const timed = pdt ?? next;
      next = timed === undefined ? undefined : timed + duration * 1000;
      let bySeq: number | undefined;
      if (startSeq !== undefined) {
        const seq = mediaSequence + segments;
        if (seq === startSeq) sum = 0;
        else if (segments === 0 && seq > startSeq) {
          sum = 0;
          before = seq - startSeq;
        }
        if (sum !== undefined) {
          if (timed === undefined) {
            base ??= before ? before * meanDurationMs(textDurations(text)) : 0;
            bySeq = window.startMs + (base + sum);
          }
          sum += duration * 1000;
        }
      }
      const t = timed ?? bySeq;
      const inBreak = t !== undefined && t >= window.startMs - 1 && t < window.endMs - 1;
      if (inBreak) {
        const elapsed = (t - window.startMs) / 1000;
        const cue =
          !previousInBreak && (elapsed < 0.001 || segments > 0)
            ? `#EXT-X-CUE-OUT:${durationText}`
            : `#EXT-X-CUE-OUT-CONT:ElapsedTime=${elapsed > 0 && !Number.isInteger(elapsed) ? num(elapsed) : Math.max(0, elapsed)},Duration=${durationText}`;
        const uri = text.slice(ls, le);
        const content = isContent(uri);
        const replacement = content ? squeezedUri(uri) : undefined;
        if (content && replacement === undefined) notReady++;
        if (replacement !== undefined) squeezed.push(uri);
        const at = text.startsWith(CUE_IN_LINE, segStart) ? segStart + CUE_IN_LINE.length : segStart;
        out += text.slice(copied, at) + cue + '\n' + text.slice(at, ls) + (replacement ?? uri) + '\n';
        copied = Math.min(le + 1, text.length);
      } else if (previousInBreak) {
        out += text.slice(copied, segStart) + '#EXT-X-CUE-IN\n';
        copied = segStart;
      }
      previousInBreak = inBreak;
      segments++;
      segStart = -1;
      pdt = undefined;
      duration = 0;
    }
    ls = le + 1;
  }
  out += text.slice(copied);
  if (out && !out.endsWith('\n')) out += '\n';
  textPathStats.breakText++;
  return { text: out, notReady, squeezed };
}
