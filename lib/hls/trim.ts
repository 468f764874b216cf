/**
 * Live-window trimming with the live-edge delay in the same step (spec rule 7; docs/design.md §4):
 * drop the last `delaySegments`, then keep the last `windowSegments` of what remains. Playlist
 * validity per RFC 8216 §6.2.1–6.2.2: EXT-X-MEDIA-SEQUENCE and EXT-X-DISCONTINUITY-SEQUENCE advance
 * by what was dropped; per-segment tags leave with their segment; the EXT-X-MAP and EXT-X-KEY in
 * force, the program date-time, and a break still in progress are re-stated at the new head.
 * Never less than three target durations of content remain (§6.2.2); EXT-X-ENDLIST, VOD and
 * delta (EXT-X-SKIP) playlists are not trimmed at all, EVENT playlists not from the head.
 */
import { attribute, tagName, tagValue } from './lines.js';
import { formatPdt, parseMedia, type MediaPlaylist, type Segment } from './media.js';

export interface TrimOptions {
  windowSegments: number;
  delaySegments: number;
}

/**
 * Whether segments [from, to) hold at least min seconds, summed from the live edge back and stopping
 * once they do: the order of the floating-point additions is the fast path's (trim-text.ts), so a
 * window whose durations add up to exactly 3 target durations is kept the same by both.
 */
function holds(segs: Segment[], from: number, to: number, min: number): boolean {
  let s = 0;
  for (let i = to - 1; i >= from && s < min; i--) s += segs[i]!.duration;
  return s >= min;
}

function keyFormat(line: string): string {
  return attribute(tagValue(line), 'KEYFORMAT') ?? 'identity';
}

function setHeaderTag(header: string[], tag: string, value: number): string[] {
  const out = header.map((l) => (tagName(l) === tag ? `${tag}:${value}` : l));
  if (out.some((l) => tagName(l) === tag)) return out;
  // Insert after EXT-X-MEDIA-SEQUENCE / EXT-X-TARGETDURATION when present, else at the end of the header.
  let at = out.findIndex((l) => tagName(l) === '#EXT-X-MEDIA-SEQUENCE');
  if (at === -1) at = out.findIndex((l) => tagName(l) === '#EXT-X-TARGETDURATION');
  out.splice(at === -1 ? out.length : at + 1, 0, `${tag}:${value}`);
  return out;
}

/** What the dropped head segments leave in force for the new first segment. */
function stateAfter(dropped: Segment[]) {
  let map: string | undefined;
  const keys = new Map<string, string>();
  let discontinuities = 0;
  let pdt: number | undefined;
  let inBreak = false;
  let breakDuration = NaN;
  let elapsed = 0;
  let rangeEnd: number | undefined;
  for (const s of dropped) {
    if (s.byterange) rangeEnd = (s.byterange.offset ?? rangeEnd ?? 0) + s.byterange.length;
    if (s.discontinuity) discontinuities++;
    if (s.map) map = s.map;
    for (const k of s.keys) keys.set(keyFormat(k), k);
    pdt = s.pdt ?? pdt;
    if (s.cueIn) inBreak = false;
    if (s.cueOut !== undefined) {
      inBreak = true;
      breakDuration = s.cueOut;
      elapsed = 0;
    } else if (s.cueOutCont) {
      inBreak = true;
      if (!Number.isNaN(s.cueOutCont.duration)) breakDuration = s.cueOutCont.duration;
      if (!Number.isNaN(s.cueOutCont.elapsed)) elapsed = s.cueOutCont.elapsed;
    }
    if (pdt !== undefined) pdt += s.duration * 1000;
    if (inBreak) elapsed += s.duration;
  }
  return { map, keys, discontinuities, pdt, inBreak, breakDuration, elapsed, rangeEnd };
}

/** The new first segment: its own lines, with a byte range that continued the dropped one made explicit (RFC 8216 §4.3.2.2). */
function headSegmentLines(first: Segment, state: ReturnType<typeof stateAfter>): string[] {
  const r = first.byterange;
  if (!r || r.offset !== undefined || state.rangeEnd === undefined) return first.lines;
  const lines = [...first.lines];
  lines[r.line] = `#EXT-X-BYTERANGE:${r.length}@${state.rangeEnd}`;
  return lines;
}

function headLines(first: Segment, state: ReturnType<typeof stateAfter>): string[] {
  const added: string[] = [];
  if (state.map && !first.map) added.push(state.map);
  if (state.keys.size && !first.keys.length)
    for (const k of state.keys.values()) if (!/METHOD=NONE/.test(k)) added.push(k);
  if (state.pdt !== undefined && first.pdt === undefined)
    added.push(`#EXT-X-PROGRAM-DATE-TIME:${formatPdt(state.pdt)}`);
  if (state.inBreak && first.cueOut === undefined && !first.cueOutCont && !first.cueIn) {
    const duration = Number.isNaN(state.breakDuration) ? '' : `,Duration=${+state.breakDuration.toFixed(3)}`;
    added.push(`#EXT-X-CUE-OUT-CONT:ElapsedTime=${+state.elapsed.toFixed(3)}${duration}`);
  }
  return added;
}

const LIVE_EDGE_TAIL = new Set(['#EXT-X-PART', '#EXT-X-PRELOAD-HINT']);

/** Trims a parsed media playlist; returns the output lines (the input lines when nothing changes). */
export function trimMedia(p: MediaPlaylist, opts: TrimOptions): string[] | undefined {
  const segs = p.segments;
  const n = segs.length;
  if (p.endList || p.skip || p.playlistType === 'VOD' || n === 0) return undefined;
  const minContent = 3 * p.targetDuration;
  let delay = Math.min(Math.max(0, opts.delaySegments), n - 1); // never the last segment
  while (delay > 0 && !holds(segs, 0, n - delay, minContent)) delay--;
  const remaining = n - delay;
  let start = 0;
  if (opts.windowSegments > 0 && opts.windowSegments < remaining && p.playlistType !== 'EVENT') {
    start = remaining - opts.windowSegments;
    while (start > 0 && !holds(segs, start, remaining, minContent)) start--;
  }
  if (start === 0 && delay === 0) return undefined;

  const state = stateAfter(segs.slice(0, start));
  let header = p.header;
  if (start > 0) {
    header = setHeaderTag(header, '#EXT-X-MEDIA-SEQUENCE', p.mediaSequence + start);
    if (state.discontinuities)
      header = setHeaderTag(header, '#EXT-X-DISCONTINUITY-SEQUENCE', p.discontinuitySequence + state.discontinuities);
  }
  const out = [...header];
  for (let i = start; i < remaining; i++) {
    if (i === start && start > 0) out.push(...headLines(segs[i]!, state), ...headSegmentLines(segs[i]!, state));
    else out.push(...segs[i]!.lines);
  }
  for (const l of p.tail) if (delay === 0 || !LIVE_EDGE_TAIL.has(tagName(l))) out.push(l);
  return out;
}

export function trimLiveWindow(lines: string[], opts: TrimOptions): string[] {
  return trimMedia(parseMedia(lines), opts) ?? lines;
}
