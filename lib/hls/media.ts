/**
 * A media playlist as lines grouped by segment (RFC 8216 §4.3.2: tags before a URI line apply to
 * that segment). Nothing is re-serialized: output is the original lines, some dropped, a few added.
 */
import { attribute, playlistLines, tagName, tagValue } from './lines.js';

/** Playlist-level tags (RFC 8216 §4.3.3, §4.4.3 of 8216bis) that form the header. */
export const HEADER_TAGS = new Set([
  '#EXTM3U',
  '#EXT-X-VERSION',
  '#EXT-X-TARGETDURATION',
  '#EXT-X-MEDIA-SEQUENCE',
  '#EXT-X-DISCONTINUITY-SEQUENCE',
  '#EXT-X-PLAYLIST-TYPE',
  '#EXT-X-INDEPENDENT-SEGMENTS',
  '#EXT-X-START',
  '#EXT-X-SERVER-CONTROL',
  '#EXT-X-PART-INF',
  '#EXT-X-ALLOW-CACHE',
  '#EXT-X-I-FRAMES-ONLY',
  '#EXT-X-DEFINE',
]);

export interface Segment {
  /** Tag lines, then the URI line last. */
  lines: string[];
  uri: string;
  duration: number;
  discontinuity: boolean;
  /** EXT-X-PROGRAM-DATE-TIME of this segment, in ms, when tagged. */
  pdt?: number;
  map?: string;
  keys: string[];
  cueOut?: number; // break duration in seconds (NaN when not given)
  cueOutCont?: { elapsed: number; duration: number };
  cueIn: boolean;
  /** EXT-X-BYTERANGE of the segment: length, offset when given, and its index in `lines`. */
  byterange?: { length: number; offset?: number; line: number };
}

export interface MediaPlaylist {
  header: string[];
  segments: Segment[];
  /** Lines after the last segment: partial segments, preload hints, rendition reports, EXT-X-ENDLIST. */
  tail: string[];
  targetDuration: number;
  mediaSequence: number;
  discontinuitySequence: number;
  endList: boolean;
  playlistType: string;
  /** EXT-X-SKIP: a delta update, which is never trimmed. */
  skip: boolean;
}

export function cueOutDuration(line: string): number {
  const v = tagValue(line);
  if (!v) return NaN;
  const attr = attribute(v, 'DURATION');
  return Number(attr ?? v.split(',')[0]);
}

export function parseCueOutCont(line: string): { elapsed: number; duration: number } {
  const v = tagValue(line);
  const elapsed = attribute(v, 'ElapsedTime');
  const duration = attribute(v, 'Duration');
  if (elapsed !== undefined || duration !== undefined)
    return { elapsed: Number(elapsed ?? NaN), duration: Number(duration ?? NaN) };
  const [e, d] = v.split('/'); // the "#EXT-X-CUE-OUT-CONT:8.0/30" form
  return { elapsed: Number(e), duration: Number(d) };
}

function newSegment(): Segment {
  return { lines: [], uri: '', duration: 0, discontinuity: false, keys: [], cueIn: false };
}

export function parseMedia(lines: string[]): MediaPlaylist {
  const p: MediaPlaylist = {
    header: [],
    segments: [],
    tail: [],
    targetDuration: 0,
    mediaSequence: 0,
    discontinuitySequence: 0,
    endList: false,
    playlistType: '',
    skip: false,
  };
  let seg = newSegment();
  for (const line of lines) {
    const isUri = line.charCodeAt(0) !== 35;
    const name = isUri ? '' : tagName(line);
    // Playlist tags before the first segment form the header wherever they stand among segment tags.
    if (!isUri && p.segments.length === 0 && HEADER_TAGS.has(name)) {
      p.header.push(line);
      if (name === '#EXT-X-TARGETDURATION') p.targetDuration = Number(tagValue(line)) || 0;
      else if (name === '#EXT-X-MEDIA-SEQUENCE') p.mediaSequence = Number(tagValue(line)) || 0;
      else if (name === '#EXT-X-DISCONTINUITY-SEQUENCE') p.discontinuitySequence = Number(tagValue(line)) || 0;
      else if (name === '#EXT-X-PLAYLIST-TYPE') p.playlistType = tagValue(line).trim();
      continue;
    }
    seg.lines.push(line);
    if (isUri) {
      seg.uri = line;
      p.segments.push(seg);
      seg = newSegment();
      continue;
    }
    switch (name) {
      case '#EXTINF':
        seg.duration = parseFloat(tagValue(line)) || 0;
        break;
      case '#EXT-X-BYTERANGE': {
        const [length, offset] = tagValue(line).split('@');
        seg.byterange = { length: Number(length), line: seg.lines.length - 1 };
        if (offset) seg.byterange.offset = Number(offset);
        break;
      }
      case '#EXT-X-DISCONTINUITY':
        seg.discontinuity = true;
        break;
      case '#EXT-X-PROGRAM-DATE-TIME': {
        const t = Date.parse(tagValue(line));
        if (!Number.isNaN(t)) seg.pdt = t;
        break;
      }
      case '#EXT-X-MAP':
        seg.map = line;
        break;
      case '#EXT-X-KEY':
        seg.keys.push(line);
        break;
      case '#EXT-X-CUE-OUT':
        seg.cueOut = cueOutDuration(line);
        break;
      case '#EXT-X-CUE-OUT-CONT':
        seg.cueOutCont = parseCueOutCont(line);
        break;
      case '#EXT-X-CUE-IN':
        seg.cueIn = true;
        break;
      case '#EXT-X-ENDLIST':
        p.endList = true;
        break;
      case '#EXT-X-SKIP':
        p.skip = true;
        break;
    }
  }
  p.tail = seg.lines;
  return p;
}

/** A media playlist's text read whole: playlistLines (line ends, trimming, no blank lines), then parseMedia. */
export function readMedia(text: string): MediaPlaylist {
  return parseMedia(playlistLines(text));
}

/** Program date-time of every segment: tagged, else carried forward from the previous one (RFC 8216 §4.3.2.6). */
export function programDateTimes(segments: Segment[]): Array<number | undefined> {
  const out: Array<number | undefined> = [];
  let next: number | undefined;
  for (const s of segments) {
    const t = s.pdt ?? next;
    out.push(t);
    next = t === undefined ? undefined : t + s.duration * 1000;
  }
  return out;
}

/**
 * Where a break placed by media sequence starts (docs/decisions.md, "Breaks without program
 * date-time"): its first segment's media sequence and the time that segment stands for.
 */
export interface SequenceAnchor {
  startSeq: number;
  startMs: number;
}

/**
 * Times of every segment: the program date-time (carried forward), else, with an anchor, placed by
 * media sequence: the anchor's time plus the EXTINF durations accumulated from its segment. When the
 * playlist has slid past the anchor, the segments no longer in it count at the playlist's mean
 * EXTINF (exact for a live encoder's constant durations). Segments before the anchor get no time.
 * The hot path's text form (./breaks.ts) does the same arithmetic in the same order.
 */
export function segmentTimes(
  p: Pick<MediaPlaylist, 'segments' | 'mediaSequence'>,
  anchor?: SequenceAnchor,
): Array<number | undefined> {
  const times = programDateTimes(p.segments);
  if (!anchor) return times;
  // Offset = base (the segments before the playlist's first, when it slid past the anchor) + the durations since.
  let base = 0;
  let sum: number | undefined;
  p.segments.forEach((s, i) => {
    const seq = p.mediaSequence + i;
    if (seq === anchor.startSeq) sum = 0;
    else if (i === 0 && seq > anchor.startSeq) {
      sum = 0;
      base = (seq - anchor.startSeq) * meanDurationMs(p.segments.map((x) => x.duration));
    }
    if (times[i] === undefined && sum !== undefined) times[i] = anchor.startMs + (base + sum);
    if (sum !== undefined) sum += s.duration * 1000;
  });
  return times;
}

/** The mean of EXTINF durations, in ms (0 for none). */
export function meanDurationMs(durations: number[]): number {
  let sum = 0;
  for (const d of durations) sum += d;
  return durations.length ? (sum / durations.length) * 1000 : 0;
}

export function formatPdt(ms: number): string {
  return new Date(ms).toISOString();
}
