/**
 * Squeezeback break substitution (docs/design.md §4): break segments are those whose program
 * date-time falls in the break window; in a playlist without program date-time, those the break's
 * media sequence and the accumulated EXTINF durations from it place there (./media.ts segmentTimes). Each is replaced by its squeezeback segment when the
 * transcoder has produced it (else the content segment stays: the player never gets a broken URI).
 * `#EXT-X-CUE-OUT:<duration>` precedes the first break segment, `#EXT-X-CUE-OUT-CONT` the
 * following ones, `#EXT-X-CUE-IN` the first segment after. Absolute DAI ad segments are untouched.
 */
import {
  HEADER_TAGS,
  meanDurationMs,
  parseMedia,
  segmentTimes,
  type MediaPlaylist,
  type SequenceAnchor,
} from './media.js';
import { joinLines, splitLines } from './rewrite.js';
import { textPathStats } from './stats.js';

export interface BreakWindow {
  startMs: number;
  endMs: number;
  durationSec: number;
  /** Media sequence of the break's first segment: places segments that carry no program date-time. */
  startSeq?: number | undefined;
}

const anchorOf = (w: BreakWindow): SequenceAnchor | undefined =>
  w.startSeq === undefined ? undefined : { startSeq: w.startSeq, startMs: w.startMs };

/**
 * The squeezeback segment standing in for a break segment, if ready: given its URI as the playlist
 * has it and the time the segment stands for (ms, program date-time or placed by sequence).
 */
export type SqueezedUri = (contentUri: string, timeMs: number) => string | undefined;

export interface BreakResult {
  lines: string[];
  /** Break segments served as content because their squeezeback output was not ready. */
  notReady: number;
  /** Content URIs of the squeezeback segments this playlist carries. */
  squeezed: string[];
}

/**
 * What the break does with the cue tags the source playlist already carries (docs/decisions.md,
 * "Issues 25 and 30: one set of cue tags"):
 * - `keep` (the DAI flow): every source cue is the DAI provider's pod. Its CUE-OUT/CONT/CUE-IN stay
 *   exactly as written and its segments are never squeezed; the squeeze break is suspended across it
 *   (CUE-IN before the pod's first segment, a fresh CUE-OUT for the rest of the break after it), so
 *   at most one cue-out is open at any point of the output.
 * - `replace` (the squeezeback flow): a source cue that overlaps the break is the origin's marker
 *   of that same break (a cue-started break): its tags are dropped and the break's own mark it, so
 *   the player sees one CUE-OUT and one CUE-IN. Source cues the break does not touch stay.
 */
export type SourceCues = 'keep' | 'replace';

const num = (x: number) => +x.toFixed(3);
const CUE_IN = '#EXT-X-CUE-IN';
/** The tags of the CUE-OUT dialect (docs/design.md §10) that a replaced source cue loses. */
const SOURCE_CUE_TAGS = new Set(['#EXT-X-CUE-OUT', '#EXT-X-CUE-OUT-CONT', CUE_IN, '#EXT-OATCLS-SCTE35']);
const tagOf = (line: string) => {
  const colon = line.indexOf(':');
  return colon === -1 ? line : line.slice(0, colon);
};

/** A source cue: segments [first, last], and the segment carrying its CUE-IN (-1: still open in this playlist). */
interface SourceCue {
  first: number;
  last: number;
  cueIn: number;
}

/**
 * The source's cues in segment order. A cue opens at a CUE-OUT, or at a CUE-OUT-CONT when none is
 * open (the playlist joined it), and closes at the segment carrying CUE-IN (that segment is after
 * it). A CUE-IN with nothing open closes a cue that began before the playlist's first segment.
 */
function sourceCues(p: MediaPlaylist): SourceCue[] {
  const cues: SourceCue[] = [];
  let open: SourceCue | undefined;
  p.segments.forEach((s, i) => {
    if (s.cueIn) {
      if (open) {
        open.cueIn = i;
        open = undefined;
      } else if (i > 0 && cues.length === 0) cues.push({ first: 0, last: i - 1, cueIn: i });
    }
    if (s.cueOut !== undefined || (s.cueOutCont && !open)) {
      if (open) open = undefined; // a CUE-OUT without CUE-IN ends the cue before it
      open = { first: i, last: i, cueIn: -1 };
      cues.push(open);
    } else if (open) open.last = i;
  });
  return cues;
}

export function applyBreakToMedia(
  p: MediaPlaylist,
  window: BreakWindow,
  squeezedUri: SqueezedUri,
  isContent: (uri: string) => boolean,
  cues: SourceCues = 'keep',
): BreakResult {
  const times = segmentTimes(p, anchorOf(window));
  const inWindow = (i: number) => {
    const t = times[i];
    return t !== undefined && t >= window.startMs - 1 && t < window.endMs - 1;
  };
  // Per segment: inside a kept pod (never squeezed, the break suspended), or losing its source cue tags.
  const pod = new Uint8Array(p.segments.length);
  const strip = new Uint8Array(p.segments.length);
  for (const c of sourceCues(p)) {
    if (cues === 'keep') pod.fill(1, c.first, c.last + 1);
    else {
      let overlaps = false;
      for (let i = c.first; i <= c.last && !overlaps; i++) overlaps = inWindow(i);
      if (!overlaps) continue;
      strip.fill(1, c.first, c.last + 1);
      if (c.cueIn !== -1) strip[c.cueIn] = 2; // only its CUE-IN goes: the segment may open another cue
    }
  }
  const out = [...p.header];
  let notReady = 0;
  const squeezed: string[] = [];
  let open = false;
  /** Whether an earlier segment of this playlist fell in the window (inside a pod): the break reopens. */
  let suspended = false;
  /** The cue-out in force: its start (ms) and the duration it announced. */
  let spanStart = window.startMs;
  let spanSec = window.durationSec;
  p.segments.forEach((s, i) => {
    const t = times[i];
    const active = inWindow(i) && !pod[i];
    let lines = s.lines;
    if (strip[i] === 1) lines = lines.filter((l) => !SOURCE_CUE_TAGS.has(tagOf(l)));
    else if (strip[i] === 2) lines = lines.filter((l) => l !== CUE_IN);
    if (active) {
      const elapsed = (t! - window.startMs) / 1000;
      let cue: string;
      if (open)
        cue = `#EXT-X-CUE-OUT-CONT:ElapsedTime=${num(Math.max(0, (t! - spanStart) / 1000))},Duration=${num(spanSec)}`;
      else if (suspended || (cues === 'keep' && i === 0 && s.cueIn && elapsed >= 0.001)) {
        // (The second case: the window's first segment carries the CUE-IN of a pod that scrolled out
        // above it; the refreshes before this one reopened the break on this segment, so this one does too.)
        // After a pod inside the break: a new cue-out for what is left of the break.
        spanStart = t!;
        spanSec = Math.max(0, window.durationSec - elapsed);
        cue = `#EXT-X-CUE-OUT:${num(spanSec)}`;
      } else {
        // The break's first segment in this playlist opens it with CUE-OUT, unless the break began
        // before the playlist's first segment (then the player joins it: CUE-OUT-CONT).
        cue =
          elapsed < 0.001 || i > 0
            ? `#EXT-X-CUE-OUT:${num(window.durationSec)}`
            : `#EXT-X-CUE-OUT-CONT:ElapsedTime=${num(Math.max(0, elapsed))},Duration=${num(window.durationSec)}`;
      }
      const content = isContent(s.uri);
      const replacement = content ? squeezedUri(s.uri, t!) : undefined;
      if (content && replacement === undefined) notReady++;
      if (replacement !== undefined) squeezed.push(s.uri);
      // A cue-in closing an earlier cue on this segment stays first: CUE-IN, then CUE-OUT.
      const lead = open ? 0 : lines.indexOf(CUE_IN) + 1;
      lines = [...lines.slice(0, lead), cue, ...lines.slice(lead, -1), replacement ?? s.uri];
      open = true;
    } else {
      if (open) lines = [CUE_IN, ...lines]; // before the segment's own tags: a pod's CUE-OUT comes after it
      open = false;
      if (inWindow(i)) suspended = true;
    }
    out.push(...lines);
  });
  out.push(...p.tail);
  return { lines: out, notReady, squeezed };
}

export function applyBreak(
  lines: string[],
  window: BreakWindow,
  squeezedUri: SqueezedUri,
  isContent: (uri: string) => boolean = () => true,
  cues: SourceCues = 'keep',
): BreakResult {
  return applyBreakToMedia(parseMedia(lines), window, squeezedUri, isContent, cues);
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

function byLines(
  text: string,
  window: BreakWindow,
  squeezedUri: SqueezedUri,
  isContent: (uri: string) => boolean,
  cues: SourceCues,
) {
  textPathStats.breakReference++;
  const r = applyBreak(splitLines(text), window, squeezedUri, isContent, cues);
  return { text: joinLines(r.lines), notReady: r.notReady, squeezed: r.squeezed };
}

/**
 * The same substitution on the playlist text, without splitting it into lines: the text is copied
 * in runs and only cue tags and squeezed URIs are written in between (the hot path renders it once
 * per playlist and micro-cache period). Its output equals `joinLines(applyBreak(splitLines(text)))`;
 * for the rare playlist whose header tags stand after the first segment's tags it defers to that
 * line-based form, and so does a playlist with cue tags of its own.
 */
export function applyBreakText(
  text: string,
  window: BreakWindow,
  squeezedUri: SqueezedUri,
  isContent: (uri: string) => boolean = () => true,
  cues: SourceCues = 'keep',
): { text: string; notReady: number; squeezed: string[] } {
  // A playlist carrying cue tags of its own (a DAI pod, an origin's cue) is rendered by the
  // line-based form, which keeps them from nesting with the break's (applyBreakToMedia).
  if (text.includes('#EXT-X-CUE')) return byLines(text, window, squeezedUri, isContent, cues);
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
        if (segStart !== -1) return byLines(text, window, squeezedUri, isContent, cues);
        if (text.startsWith(MEDIA_SEQUENCE, ls))
          mediaSequence = Number(text.slice(ls + MEDIA_SEQUENCE.length, le)) || 0;
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
        const replacement = content ? squeezedUri(uri, t) : undefined;
        if (content && replacement === undefined) notReady++;
        if (replacement !== undefined) squeezed.push(uri);
        out += text.slice(copied, segStart) + cue + '\n' + text.slice(segStart, ls) + (replacement ?? uri) + '\n';
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
