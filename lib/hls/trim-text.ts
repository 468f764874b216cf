/**
 * The hot-path form of trimLiveWindow (trim.ts), working on the rewritten playlist text by offsets:
 * one indexOf scan finds the segment boundaries, the kept segments leave as one slice, and only the
 * few facts the new head needs are looked up in the dropped part. Its output is the same as the
 * line-based reference for every playlist (test/hls/trim-text.test.ts proves it); shapes it does not
 * handle by offsets (header tags among segment tags, byte ranges, bare cue-out-cont, a bad date)
 * go to the reference implementation.
 */
import { attribute, tagName, tagValue } from './lines.js';
import { formatPdt, parseMedia, HEADER_TAGS } from './media.js';
import { splitLines, joinLines, type PlaylistRewriter } from './rewrite.js';
import { trimMedia, type TrimOptions } from './trim.js';

const HASH = 35;
const DISCONTINUITY = '#EXT-X-DISCONTINUITY';

/**
 * An ascending list of offsets, kept between scans: a scan and the trim that reads it run
 * synchronously, one at a time, so one set of lists serves every request without allocating
 * (growing arrays were a sixth of the bytes a trimmed request allocated).
 */
class Offsets {
  items = new Int32Array(64);
  length = 0;

  reset(): this {
    if (this.items.length > 16_384) this.items = new Int32Array(64); // do not keep a huge playlist's lists
    this.length = 0;
    return this;
  }

  push(offset: number): void {
    if (this.length === this.items.length) {
      const grown = new Int32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.length++] = offset;
  }
}

const lists = { segEnds: new Offsets(), discs: new Offsets(), maps: new Offsets(), keyTags: new Offsets(), pdts: new Offsets(), cues: new Offsets() };

function reference(text: string, opts: TrimOptions): string | undefined {
  const out = trimMedia(parseMedia(splitLines(text)), opts);
  return out && joinLines(out);
}

/** Trims rewritten playlist text (LF lines, no blanks); undefined when nothing changes. */
export function trimText(text: string, opts: TrimOptions): string | undefined {
  return trimCore(text, opts, false) ?? undefined;
}

/** What one pass over a media playlist finds: segment boundaries and the offsets of the tags a new head may need. */
interface Scan {
  /** Offset just past each segment's URI line. */
  segEnds: Offsets;
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
 * The one scan, kept apart from the trimming so its loop state lives in registers. null: not in
 * normalised form (CR, blank or padded lines) or, when strict, a master playlist; 'reference':
 * header tags among the first segment's tags, a shape for the line-based reference.
 */
function scan(text: string, strict: boolean): Scan | null | 'reference' {
  const len = text.length;
  const s: Scan = {
    segEnds: lists.segEnds.reset(),
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
  for (; pos < len; ) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = len;
    const c0 = text.charCodeAt(pos);
    if (strict && (c0 <= 32 || text.charCodeAt(nl - 1) <= 32)) return null;
    if (c0 !== HASH) break;
    const line = text.slice(pos, nl);
    const name = tagName(line);
    if (!HEADER_TAGS.has(name)) break;
    if (name === '#EXT-X-TARGETDURATION') {
      s.td = Number(tagValue(line)) || 0;
      s.tdLineEnd = nl + 1;
    } else if (name === '#EXT-X-MEDIA-SEQUENCE') s.ms = { start: pos, end: nl + 1, value: Number(tagValue(line)) || 0, count: s.ms.count + 1 };
    else if (name === '#EXT-X-DISCONTINUITY-SEQUENCE') s.ds = { start: pos, end: nl + 1, value: Number(tagValue(line)) || 0, count: s.ds.count + 1 };
    else if (name === '#EXT-X-PLAYLIST-TYPE') s.type = tagValue(line).trim();
    pos = nl + 1;
  }
  s.headerEnd = pos;
  const { segEnds, discs, maps, keyTags, pdts, cues } = s;
  let first = true; // before the first segment's URI
  while (pos < len) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = len;
    const c0 = text.charCodeAt(pos);
    if (strict && (c0 <= 32 || text.charCodeAt(nl - 1) <= 32)) return null;
    if (c0 !== HASH) {
      segEnds.push(nl + 1);
      first = false;
    } else {
      if (first && HEADER_TAGS.has(tagName(text.slice(pos, nl)))) return 'reference';
      if (text.charCodeAt(pos + 4) === 45 /* - */) {
        switch (text.charCodeAt(pos + 7)) {
          case 68 /* D */:
            if (nl - pos === 20 && text.slice(pos, nl) === DISCONTINUITY) discs.push(pos); // slice + compare: half the cost of startsWith(…, pos)
            break;
          case 77 /* M */:
            if (text.startsWith('#EXT-X-MAP:', pos)) maps.push(pos);
            break;
          case 75 /* K */:
            if (text.startsWith('#EXT-X-KEY:', pos)) keyTags.push(pos);
            break;
          // PDT and cue tags come with nearly every segment: a full comparison of each costs more
          // than the rest of the scan, so they are candidates here, confirmed where one is used.
          case 80 /* P */:
            if (text.charCodeAt(pos + 9) === 79 /* #EXT-X-PRO… */) pdts.push(pos);
            break;
          case 67 /* C */:
            if (text.charCodeAt(pos + 8) === 85 /* #EXT-X-CU… */) cues.push(pos);
            break;
          case 66 /* B */:
            if (text.startsWith('#EXT-X-BYTERANGE', pos)) s.byteranges = true;
            break;
          case 69 /* E */:
            if (text.startsWith('#EXT-X-ENDLIST', pos)) s.endList = true;
            break;
          case 83 /* S */:
            if (text.startsWith('#EXT-X-SKIP', pos)) s.skip = true;
            else if (strict && text.startsWith('#EXT-X-STREAM-INF', pos)) return null; // a master playlist
            break;
        }
      }
    }
    pos = nl + 1;
  }
  return s;
}

function trimCore(text: string, opts: TrimOptions, strict: boolean): string | undefined | null {
  const found = scan(text, strict);
  if (found === null) return null;
  // The reference reads normalised lines: raw input (strict) is normalised by the rewrite first.
  if (found === 'reference') return strict ? null : reference(text, opts);
  const { segEnds, headerEnd, td, tdLineEnd, ms, ds, type, discs, maps, keyTags, pdts, cues } = found;
  const n = segEnds.length;
  const ends = segEnds.items;
  if (found.endList || found.skip || type === 'VOD' || n === 0) return undefined;
  if (ms.count > 1 || ds.count > 1 || found.byteranges) return reference(text, opts);

  const segStart = (i: number) => (i === 0 ? headerEnd : ends[i - 1]!);
  const duration = (i: number) => {
    const at = text.indexOf('#EXTINF:', segStart(i));
    return at === -1 || at >= ends[i]! ? 0 : parseFloat(text.slice(at + 8, text.indexOf('\n', at))) || 0;
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
  if (delay > 0 && tail) tail = joinLines(splitLines(tail).filter((l) => { const t = tagName(l); return t !== '#EXT-X-PART' && t !== '#EXT-X-PRELOAD-HINT'; }));
  const kept = text.slice(segStart(start), ends[remaining - 1]);
  if (start === 0) return text.slice(0, headerEnd) + kept + tail;

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
  const isPdt = (o: number) => text.startsWith('#EXT-X-PROGRAM-DATE-TIME:', o);
  const isCue = (o: number) => text.startsWith('#EXT-X-CUE-OUT', o) || text.startsWith('#EXT-X-CUE-IN', o);
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
  const pdtAt = lastBefore(pdts, isPdt);
  if (pdtAt !== -1 && !inHead(pdts, isPdt)) {
    const t = Date.parse(tagValue(lineAt(pdtAt)));
    if (Number.isNaN(t)) return reference(text, opts);
    added.push(`#EXT-X-PROGRAM-DATE-TIME:${formatPdt(t + seconds(segmentOf(pdtAt), start) * 1000)}`);
  }
  const cueAt = lastBefore(cues, isCue);
  if (cueAt !== -1 && !inHead(cues, isCue)) {
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
      if (Number.isNaN(e) || Number.isNaN(d)) return reference(text, opts);
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
  return header + (added.length ? added.join('\n') + '\n' : '') + kept + tail;
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

function cueCont(elapsed: number, duration: number): string {
  return `#EXT-X-CUE-OUT-CONT:ElapsedTime=${+elapsed.toFixed(3)}${Number.isNaN(duration) ? '' : `,Duration=${+duration.toFixed(3)}`}`;
}

/**
 * Trimming looks only at tags and rewriting only at URIs, so trim-then-rewrite equals
 * rewrite-then-trim, and trimming first rewrites only the kept segments. Trimming by offsets needs
 * normalised lines (LF, no padding, no blank lines): other input is rewritten (normalised) first.
 */
export function trimThenRewrite(raw: string, hls: PlaylistRewriter, trim: TrimOptions): string {
  const media = raw.startsWith('#EXTM3U\n') && raw.endsWith('\n') && raw.includes('#EXTINF');
  const trimmed = media ? trimCore(raw, trim, true) : null;
  if (trimmed !== null) return hls.push(trimmed ?? raw) + hls.end();
  const text = hls.push(raw) + hls.end();
  return hls.kind === 'media' ? (trimText(text, trim) ?? text) : text;
}
