/**
 * The hot-path form of trimLiveWindow (trim.ts), working on the rewritten playlist text by offsets:
 * one indexOf scan finds the segment boundaries, the kept segments leave as one slice, and only the
 * few facts the new head needs are looked up in the dropped part. Its output is the same as the
 * line-based reference for every playlist (test/hls/trim-text.test.ts proves it); shapes it does not
 * handle by offsets (header tags among segment tags, byte ranges, bare cue-out-cont, a bad date)
 * go to the reference implementation.
 */
import { attribute, tagName, tagValue, textAt } from './lines.js';
import { formatPdt, parseMedia, HEADER_TAGS } from './media.js';
import { splitLines, joinLines, type PlaylistRewriter } from './rewrite.js';
import { trimMedia, type TrimOptions } from './trim.js';
import { textPathStats } from './stats.js';

const HASH = 35;
const DISCONTINUITY = '#EXT-X-DISCONTINUITY';

/**
 * An ascending list of offsets, kept between scans: a scan and the trim that reads it run
 * synchronously, one at a time, so one set of lists serves every request without allocating
 * (growing arrays were a sixth of the bytes a trimmed request allocated).
 */
class Offsets {
  items: Int32Array = new Int32Array(64);
  length = 0;

  reset(): this {
    if (this.items.length > 16_384) this.items = new Int32Array(64); // do not keep a huge playlist's lists
    this.length = 0;
    return this;
  }

  push(offset: number): void {
    if (this.length === this.items.length) this.grow();
    this.items[this.length++] = offset;
  }

  /** Doubles the room; the scan's busiest lists call it themselves, keeping their length in a local. */
  grow(): Int32Array {
    const grown = new Int32Array(this.items.length * 2);
    grown.set(this.items);
    return (this.items = grown);
  }
}

/**
 * Lines the rewriter would not copy as they are: a line is copied when its first and last
 * characters are above U+0020 and it has no CR; otherwise it is trimmed, which also strips
 * Unicode whitespace (NBSP, BOM…) at its start. So the strict scan rejects a line that starts at
 * or below U+0020 or with a non-ASCII character (no tag or URI does), and this search finds the
 * common padded ends.
 *
 * Whether a line ends in a character the rewriter trims (RFC 8216 §4.1 lines end in LF; CR, space,
 * tab, VT or FF before it are normalised away). Searched for once instead of testing each line's
 * last character: a first character that is rare in playlists makes these searches memchr-fast.
 * A line's first character is tested where the scan reads it anyway.
 */
function paddedLineEnd(text: string): boolean {
  return (
    text.includes('\r') ||
    text.includes(' \n') ||
    text.includes('\t\n') ||
    text.includes('\v\n') ||
    text.includes('\f\n')
  );
}

/** A header tag and the test for it in place (no slicing and hashing of each line's name). */
interface HeaderTag {
  name: string;
  last: number;
  isAt: (text: string, offset: number) => boolean;
}
/** Header tags by name length, each list told apart by the name's last character before the full test. */
const HEADER_TAGS_BY_LENGTH: HeaderTag[][] = [];
for (const name of HEADER_TAGS)
  (HEADER_TAGS_BY_LENGTH[name.length] ??= []).push({
    name,
    last: name.charCodeAt(name.length - 1),
    isAt: textAt(name),
  });

/** The header tag (one of HEADER_TAGS) the line text[pos, nl) starts with, or undefined. */
function headerTagAt(text: string, pos: number, nl: number): string | undefined {
  let end = text.indexOf(':', pos);
  if (end === -1 || end > nl) end = nl;
  const candidates = HEADER_TAGS_BY_LENGTH[end - pos];
  if (candidates)
    for (const tag of candidates) if (text.charCodeAt(end - 1) === tag.last && tag.isAt(text, pos)) return tag.name;
  return undefined;
}

const isDiscontinuity = textAt(DISCONTINUITY);
const isMap = textAt('#EXT-X-MAP:');
const isKey = textAt('#EXT-X-KEY:');
const isByterange = textAt('#EXT-X-BYTERANGE');
const isEndList = textAt('#EXT-X-ENDLIST');
const isSkip = textAt('#EXT-X-SKIP');
const isStreamInf = textAt('#EXT-X-STREAM-INF');
const isPdt = textAt('#EXT-X-PROGRAM-DATE-TIME:');
const isCueOut = textAt('#EXT-X-CUE-OUT');
const isCueIn = textAt('#EXT-X-CUE-IN');

/** Whether the tag name at text[pos] is `length` characters long, as the reference's tagName reads it: a colon or the line's end follows. */
function nameEnds(text: string, pos: number, length: number): boolean {
  const c = text.charCodeAt(pos + length);
  return c === 58 /* : */ || c === 10 || Number.isNaN(c);
}

const lists = {
  segEnds: new Offsets(),
  uriStarts: new Offsets(),
  uriTags: new Offsets(),
  discs: new Offsets(),
  maps: new Offsets(),
  keyTags: new Offsets(),
  pdts: new Offsets(),
  cues: new Offsets(),
};

/**
 * A trimmed playlist in parts: the header (header tags only), the lines re-stated at the new head,
 * the kept segments text[from, to) (indexes first to last - 1 in the scan's lists), and the tail.
 */
interface Trimmed {
  header: string;
  added: string;
  from: number;
  to: number;
  first: number;
  last: number;
  tail: string;
}

/** The line-based reference's output, whole. */
function reference(text: string, opts: TrimOptions): string | undefined {
  textPathStats.trimReference++;
  const out = trimMedia(parseMedia(splitLines(text)), opts);
  return out && joinLines(out);
}

/** Trims rewritten playlist text (LF lines, no blanks); undefined when nothing changes. */
export function trimText(text: string, opts: TrimOptions): string | undefined {
  const out = trimCore(text, opts, false);
  return typeof out === 'object' && out !== null
    ? out.header + out.added + text.slice(out.from, out.to) + out.tail
    : (out ?? undefined);
}

/** What one pass over a media playlist finds: segment boundaries and the offsets of the tags a new head may need. */
interface Scan {
  /** Offset just past each segment's URI line, and where that line starts. */
  segEnds: Offsets;
  uriStarts: Offsets;
  /** Tag lines after the header that the rewriter looks into for a URI (see PlaylistRewriter.mayCarryUri). */
  uriTags: Offsets;
  /** Offset of the first line after the header tags. */
  headerEnd: number;
  /** EXT-X-TARGETDURATION, and the offset just past its line (0 and -1 when absent). */
  td: number;
  tdLineEnd: number;
  /** EXT-X-MEDIA-SEQUENCE and EXT-X-DISCONTINUITY-SEQUENCE lines. */
  ms: HeaderNumber;
  ds: HeaderNumber;
  /** EXT-X-PLAYLIST-TYPE ('' when absent). */
  type: string;
  discs: Offsets;
  maps: Offsets;
  keyTags: Offsets;
  /** Candidates (`#EXT-X-PRO…`, `#EXT-X-CU…`), confirmed where one is used. */
  pdts: Offsets;
  cues: Offsets;
  /** ENDLIST, SKIP or BYTERANGE seen. */
  endList: boolean;
  skip: boolean;
  byteranges: boolean;
}

/** A numeric header tag: its line's offsets (-1 when absent), value, and how often it appeared. */
interface HeaderNumber {
  start: number;
  end: number;
  value: number;
  count: number;
}

/**
 * The one scan, kept apart from the trimming so its loop state lives in registers. null, when
 * strict: not in normalised form (CR, blank or padded lines), or not a media playlist to the
 * rewriter (a master, or no header tag that decides the kind); 'reference':
 * header tags among the first segment's tags, a shape for the line-based reference.
 */
function scan(text: string, strict: boolean): Scan | null | 'reference' {
  const len = text.length;
  if (strict && paddedLineEnd(text)) return null;
  const s: Scan = {
    segEnds: lists.segEnds.reset(),
    uriStarts: lists.uriStarts.reset(),
    uriTags: lists.uriTags.reset(),
    headerEnd: -1,
    td: 0,
    tdLineEnd: -1,
    ms: { start: -1, end: -1, value: 0, count: 0 },
    ds: { start: -1, end: -1, value: 0, count: 0 },
    type: '',
    discs: lists.discs.reset(),
    maps: lists.maps.reset(),
    keyTags: lists.keyTags.reset(),
    pdts: lists.pdts.reset(),
    cues: lists.cues.reset(),
    endList: false,
    skip: false,
    byteranges: false,
  };
  let pos = 0;
  // The header: its tags up to the first that is not a header tag.
  for (; pos < len;) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = len;
    const c0 = text.charCodeAt(pos);
    if (strict && (c0 <= 32 || c0 >= 128)) return null;
    if (c0 !== HASH) break;
    const name = headerTagAt(text, pos, nl);
    if (name === undefined) break;
    const value = pos + name.length + 1; // offset past the colon
    if (name === '#EXT-X-TARGETDURATION') {
      s.td = Number(text.slice(value, nl)) || 0;
      s.tdLineEnd = nl + 1;
    } else if (name === '#EXT-X-MEDIA-SEQUENCE')
      s.ms = { start: pos, end: nl + 1, value: Number(text.slice(value, nl)) || 0, count: s.ms.count + 1 };
    else if (name === '#EXT-X-DISCONTINUITY-SEQUENCE')
      s.ds = { start: pos, end: nl + 1, value: Number(text.slice(value, nl)) || 0, count: s.ds.count + 1 };
    else if (name === '#EXT-X-PLAYLIST-TYPE') s.type = text.slice(value, nl).trim();
    pos = nl + 1;
  }
  s.headerEnd = pos;
  // Raw input is a media playlist to the rewriter only when a header tag says so (RFC 8216 §4.3.3).
  if (strict && s.tdLineEnd === -1 && s.ms.start === -1 && s.ds.start === -1) return null;
  const { segEnds, uriStarts, uriTags, discs, maps, keyTags, pdts, cues } = s;
  let first = true; // before the first segment's URI
  // Segment ends, URI line starts and PDT candidates come with every segment: kept in locals.
  let segs = 0;
  let ends = segEnds.items;
  let starts = uriStarts.items;
  let pdtCount = 0;
  let pdtItems = pdts.items;
  while (pos < len) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = len;
    const c0 = text.charCodeAt(pos);
    if (strict && (c0 <= 32 || c0 >= 128)) return null;
    if (c0 !== HASH) {
      if (segs === ends.length) {
        ends = segEnds.grow();
        starts = uriStarts.grow();
      }
      ends[segs] = nl + 1;
      starts[segs++] = pos;
      first = false;
    } else {
      if (first && headerTagAt(text, pos, nl) !== undefined) return 'reference';
      if (text.charCodeAt(pos + 4) === 45 /* - */) {
        switch (text.charCodeAt(pos + 7)) {
          case 68 /* D */:
            if (nl - pos === 20 && isDiscontinuity(text, pos)) discs.push(pos);
            break;
          case 77 /* M */:
            uriTags.push(pos);
            if (isMap(text, pos)) maps.push(pos);
            break;
          case 75 /* K */:
            uriTags.push(pos);
            if (isKey(text, pos)) keyTags.push(pos);
            break;
          case 73 /* I */:
            uriTags.push(pos);
            break;
          // PDT and cue tags come with nearly every segment: a full comparison of each costs more
          // than the rest of the scan, so they are candidates here, confirmed where one is used.
          case 80 /* P */:
            if (text.charCodeAt(pos + 9) === 79 /* #EXT-X-PRO… */) {
              if (pdtCount === pdtItems.length) pdtItems = pdts.grow();
              pdtItems[pdtCount++] = pos;
            } else if (
              text.charCodeAt(pos + 8) === 65 /* #EXT-X-PA… */ ||
              text.charCodeAt(pos + 9) === 69 /* #EXT-X-PRE… */
            )
              uriTags.push(pos);
            break;
          case 67 /* C */:
            if (text.charCodeAt(pos + 8) === 85 /* #EXT-X-CU… */) cues.push(pos);
            break;
          case 66 /* B */:
            if (isByterange(text, pos)) s.byteranges = true;
            break;
          case 69 /* E */:
            if (isEndList(text, pos) && nameEnds(text, pos, 14)) s.endList = true;
            break;
          case 83 /* S */:
            if (isSkip(text, pos) && nameEnds(text, pos, 11)) s.skip = true;
            else if (strict && isStreamInf(text, pos)) return null; // a master playlist
            break;
        }
      }
    }
    pos = nl + 1;
  }
  segEnds.length = uriStarts.length = segs;
  pdts.length = pdtCount;
  return s;
}

/** What trimScanned answers for a shape it leaves to the line-based reference. */
const REFERENCE = 'reference';

function trimCore(text: string, opts: TrimOptions, strict: boolean): Trimmed | string | undefined | null {
  const found = scan(text, strict);
  if (found === null) return null;
  // The reference reads normalised lines: raw input (strict) is normalised by the rewrite first.
  if (found === 'reference') return strict ? null : reference(text, opts);
  const out = trimScanned(text, found, opts);
  if (out === REFERENCE) return reference(text, opts);
  textPathStats.trimOffsets++;
  return out;
}

function trimScanned(text: string, found: Scan, opts: TrimOptions): Trimmed | undefined | typeof REFERENCE {
  const { segEnds, headerEnd, td, tdLineEnd, ms, ds, type, discs, maps, keyTags, pdts, cues } = found;
  const n = segEnds.length;
  const ends = segEnds.items;
  if (found.endList || found.skip || type === 'VOD' || n === 0) return undefined;
  if (ms.count > 1 || ds.count > 1 || found.byteranges) return REFERENCE;

  const segStart = (i: number) => (i === 0 ? headerEnd : ends[i - 1]!);
  /** The segment's last `#EXTINF` line counts, as in the reference (a later one overrides an earlier one). */
  const duration = (i: number) => {
    const from = segStart(i);
    for (
      let at = text.lastIndexOf('#EXTINF', ends[i]! - 1);
      at >= from;
      at = at > 0 ? text.lastIndexOf('#EXTINF', at - 1) : -1
    ) {
      if (at > 0 && text.charCodeAt(at - 1) !== 10) continue; // not at a line start
      const c = text.charCodeAt(at + 7);
      if (c === 58 /* : */) return decimalAt(text, at + 8);
      if (c === 10) return 0; // `#EXTINF` without a value
    }
    return 0;
  };
  const seconds = (from: number, to: number) => {
    let s = 0;
    for (let i = from; i < to; i++) s += duration(i);
    return s;
  };
  /** Whether segments [from, to) hold at least min seconds; counts from the end and stops early. */
  const holds = (from: number, to: number, min: number) => {
    let s = 0;
    for (let i = to - 1; i >= from && s < min; i--) s += duration(i);
    return s >= min;
  };
  const minContent = 3 * td;
  let delay = Math.min(Math.max(0, opts.delaySegments), n - 1); // never the last segment
  while (delay > 0 && !holds(0, n - delay, minContent)) delay--;
  const remaining = n - delay;
  let start = 0;
  if (opts.windowSegments > 0 && opts.windowSegments < remaining && type !== 'EVENT') {
    start = remaining - opts.windowSegments;
    while (start > 0 && !holds(start, remaining, minContent)) start--;
  }
  if (start === 0 && delay === 0) return undefined;

  let tail = text.slice(ends[n - 1]!);
  if (delay > 0 && tail)
    tail = joinLines(
      splitLines(tail).filter((l) => {
        const t = tagName(l);
        return t !== '#EXT-X-PART' && t !== '#EXT-X-PRELOAD-HINT';
      }),
    );
  const keptEnd = ends[remaining - 1]!;
  if (start === 0)
    return {
      header: text.slice(0, headerEnd),
      added: '',
      from: headerEnd,
      to: keptEnd,
      first: 0,
      last: remaining,
      tail,
    };

  // What the dropped segments leave in force at the new head.
  const to = segStart(start);
  const headEnd = ends[start]!;
  /** Whether an offset of the (ascending) list falls in the new head segment and passes is. */
  const inHead = (offsets: Offsets, is: (o: number) => boolean = () => true) => {
    const at = offsets.items;
    for (let i = firstAtOrAfter(offsets, to); i < offsets.length && at[i]! < headEnd; i++) if (is(at[i]!)) return true;
    return false;
  };
  const lastBefore = (offsets: Offsets, is: (o: number) => boolean = () => true) => {
    const at = offsets.items;
    let i = firstAtOrAfter(offsets, to) - 1;
    while (i >= 0 && !is(at[i]!)) i--;
    return i >= 0 ? at[i]! : -1;
  };
  const pdtHere = (o: number) => isPdt(text, o);
  const cueHere = (o: number) =>
    (isCueOut(text, o) && (nameEnds(text, o, 14) || (text.startsWith('-CONT', o + 14) && nameEnds(text, o, 19)))) ||
    (isCueIn(text, o) && nameEnds(text, o, 13));
  const segmentOf = (offset: number) => {
    let lo = 0;
    let hi = start - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const lineAt = (at: number) => text.slice(at, text.indexOf('\n', at));

  const discontinuities = firstAtOrAfter(discs, to);
  const added: string[] = [];
  const mapAt = lastBefore(maps);
  if (mapAt !== -1 && !inHead(maps)) added.push(lineAt(mapAt));
  if (keyTags.length && !inHead(keyTags)) {
    const inForce = new Map<string, string>();
    for (let i = 0; i < keyTags.length; i++) {
      const o = keyTags.items[i]!;
      if (o >= to) break;
      const line = lineAt(o);
      inForce.set(attribute(tagValue(line), 'KEYFORMAT') ?? 'identity', line);
    }
    for (const k of inForce.values()) if (!/METHOD=NONE/.test(k)) added.push(k);
  }
  const pdtAt = lastBefore(pdts, pdtHere);
  if (pdtAt !== -1 && !inHead(pdts, pdtHere)) {
    const t = Date.parse(tagValue(lineAt(pdtAt)));
    if (Number.isNaN(t)) return REFERENCE;
    added.push(`#EXT-X-PROGRAM-DATE-TIME:${formatPdt(t + seconds(segmentOf(pdtAt), start) * 1000)}`);
  }
  const cueAt = lastBefore(cues, cueHere);
  if (cueAt !== -1 && !inHead(cues, cueHere)) {
    const k = segmentOf(cueAt);
    const seg = text.slice(segStart(k), ends[k]);
    const out = /^#EXT-X-CUE-OUT(:.*)?$/m.exec(seg);
    const cont = /^#EXT-X-CUE-OUT-CONT(:.*)?$/m.exec(seg);
    if (out) {
      const d = Number(attribute(out[1]?.slice(1) ?? '', 'DURATION') ?? (out[1]?.slice(1) ?? '').split(',')[0]);
      added.push(cueCont(seconds(k, start), out[1] ? d : NaN));
    } else if (cont) {
      const v = cont[1]?.slice(1) ?? '';
      const e = Number(attribute(v, 'ElapsedTime') ?? v.split('/')[0]);
      const d = Number(attribute(v, 'Duration') ?? v.split('/')[1]);
      if (Number.isNaN(e) || Number.isNaN(d)) return REFERENCE;
      added.push(cueCont(e + seconds(k, start), d));
    }
  }

  // Header edits (at most two), spliced in offset order.
  const seqLine = `#EXT-X-MEDIA-SEQUENCE:${ms.value + start}\n`;
  const discLine = discontinuities ? `#EXT-X-DISCONTINUITY-SEQUENCE:${ds.value + discontinuities}\n` : '';
  const dsInserted = ds.start === -1 ? discLine : '';
  const seqAt = ms.start !== -1 ? ms.start : tdLineEnd !== -1 ? tdLineEnd : headerEnd;
  const edits = [{ start: seqAt, end: ms.start !== -1 ? ms.end : seqAt, text: seqLine + dsInserted }];
  if (ds.start !== -1 && discLine) edits.push({ start: ds.start, end: ds.end, text: discLine });
  if (edits.length === 2 && edits[1]!.start < edits[0]!.start) edits.reverse();
  let header = '';
  let from = 0;
  for (const e of edits) {
    header += text.slice(from, e.start) + e.text;
    from = e.end;
  }
  header += text.slice(from, headerEnd);
  return {
    header,
    added: added.length ? added.join('\n') + '\n' : '',
    from: to,
    to: keptEnd,
    first: start,
    last: remaining,
    tail,
  };
}

/** Index of the first value ≥ x in an ascending list (its length when none is). */
function firstAtOrAfter(sorted: Offsets, x: number): number {
  const at = sorted.items;
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/**
 * parseFloat of the number at text[at] (0 when there is none), without its runtime call for the
 * common `6.000` form: digits and one dot, at most 15 in all, are an exact integer over an exact
 * power of ten, and IEEE division rounds that quotient as parseFloat rounds the decimal.
 */
function decimalAt(text: string, at: number): number {
  let m = 0;
  let digits = 0;
  let scale = -1; // digits after the dot; -1 before it
  for (let i = at; ; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (scale >= 0) scale++;
    } else if (c === 46 /* . */ && scale === -1) scale = 0;
    else if ((c === 44 /* , */ || c === 10) && digits > 0 && digits <= 15) return scale > 0 ? m / POW10[scale]! : m;
    else return parseFloat(text.slice(at, text.indexOf('\n', at))) || 0;
  }
}

function cueCont(elapsed: number, duration: number): string {
  return `#EXT-X-CUE-OUT-CONT:ElapsedTime=${+elapsed.toFixed(3)}${Number.isNaN(duration) ? '' : `,Duration=${+duration.toFixed(3)}`}`;
}

/**
 * Trimming looks only at tags and rewriting only at URIs, so trim-then-rewrite equals
 * rewrite-then-trim, and trimming first rewrites only the kept segments. Trimming by offsets needs
 * normalised lines (LF, no padding, no blank lines): other input is rewritten (normalised) first.
 */
export function trimThenRewrite(raw: string, hls: PlaylistRewriter, trim: TrimOptions): string {
  // Text with any CR is rewritten first (the rewriter ends a line at a bare CR too, issue 24), so
  // the offsets trim never counts two lines as one.
  const trimmed =
    raw.startsWith('#EXTM3U\n') && raw.endsWith('\n') && raw.indexOf('\r') === -1 ? trimCore(raw, trim, true) : null;
  if (trimmed === undefined) return hls.push(raw) + hls.end();
  if (typeof trimmed === 'string') return hls.push(trimmed) + hls.end();
  if (trimmed !== null) {
    // The scan checked the header (valid, normalised, no URIs) and knows where the kept segments'
    // URI lines are: unless a tag among them may carry a URI, only those lines are looked at.
    const { from, to, first, last } = trimmed;
    hls.mediaHeaderPassed();
    const added = hls.push(trimmed.added);
    const { uriTags } = lists;
    const tagAt = firstAtOrAfter(uriTags, from);
    const kept =
      tagAt < uriTags.length && uriTags.items[tagAt]! < to
        ? hls.push(raw.slice(from, to))
        : hls.segments(raw, from, to, lists.uriStarts.items, lists.segEnds.items, first, last);
    return trimmed.header + added + kept + hls.push(trimmed.tail) + hls.end();
  }
  const text = hls.push(raw) + hls.end();
  if (hls.kind !== 'media') return text;
  textPathStats.trimRewrittenFirst++;
  return trimText(text, trim) ?? text;
}
