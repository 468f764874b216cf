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

function reference(text: string, opts: TrimOptions): string | undefined {
  const out = trimMedia(parseMedia(splitLines(text)), opts);
  return out && joinLines(out);
}

/** Trims rewritten playlist text (LF lines, no blanks); undefined when nothing changes. */
export function trimText(text: string, opts: TrimOptions): string | undefined {
  return trimCore(text, opts, false) ?? undefined;
}

/** null: the text is not in normalised form (CR, blank or padded lines), so it was not looked at. */
function trimCore(text: string, opts: TrimOptions, strict: boolean): string | undefined | null {
  const len = text.length;
  const segEnds: number[] = [];
  let headerEnd = -1;
  let td = 0;
  let ms = { start: -1, end: -1, value: 0, count: 0 };
  let ds = { start: -1, end: -1, value: 0, count: 0 };
  let tdLineEnd = -1;
  let type = '';
  let endList = false;
  let skip = false;
  for (let pos = 0; pos < len; ) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = len;
    if (strict && (text.charCodeAt(pos) <= 32 || text.charCodeAt(nl - 1) <= 32)) return null;
    if (text.charCodeAt(pos) !== HASH) {
      if (headerEnd === -1) headerEnd = pos;
      segEnds.push(nl + 1);
    } else if (segEnds.length === 0) {
      const line = text.slice(pos, nl);
      const name = tagName(line);
      if (HEADER_TAGS.has(name)) {
        if (headerEnd !== -1) return reference(text, opts); // header tags among segment tags
        if (name === '#EXT-X-TARGETDURATION') {
          td = Number(tagValue(line)) || 0;
          tdLineEnd = nl + 1;
        } else if (name === '#EXT-X-MEDIA-SEQUENCE') ms = { start: pos, end: nl + 1, value: Number(tagValue(line)) || 0, count: ms.count + 1 };
        else if (name === '#EXT-X-DISCONTINUITY-SEQUENCE') ds = { start: pos, end: nl + 1, value: Number(tagValue(line)) || 0, count: ds.count + 1 };
        else if (name === '#EXT-X-PLAYLIST-TYPE') type = tagValue(line).trim();
      } else if (headerEnd === -1) headerEnd = pos;
      if (name === '#EXT-X-ENDLIST') endList = true;
    } else if (text.charCodeAt(pos + 7) === 69 /* E */ && text.startsWith('#EXT-X-ENDLIST', pos)) endList = true;
    else if (text.charCodeAt(pos + 7) === 83 /* S */ && text.startsWith('#EXT-X-SKIP', pos)) skip = true;
    pos = nl + 1;
  }
  const n = segEnds.length;
  if (endList || skip || type === 'VOD' || n === 0) return undefined;
  if (ms.count > 1 || ds.count > 1 || text.includes('#EXT-X-BYTERANGE')) return reference(text, opts);

  const segStart = (i: number) => (i === 0 ? headerEnd : segEnds[i - 1]!);
  const duration = (i: number) => {
    const at = text.indexOf('#EXTINF:', segStart(i));
    return at === -1 || at >= segEnds[i]! ? 0 : parseFloat(text.slice(at + 8, text.indexOf('\n', at))) || 0;
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

  let tail = text.slice(segEnds[n - 1]!);
  if (delay > 0 && tail) tail = joinLines(splitLines(tail).filter((l) => { const t = tagName(l); return t !== '#EXT-X-PART' && t !== '#EXT-X-PRELOAD-HINT'; }));
  const kept = text.slice(segStart(start), segEnds[remaining - 1]);
  if (start === 0) return text.slice(0, headerEnd) + kept + tail;

  // What the dropped segments leave in force at the new head.
  const from = headerEnd;
  const to = segStart(start);
  const head = segStart(start);
  const headEnd = segEnds[start]!;
  const inHead = (needle: string) => {
    const at = text.indexOf(needle, head);
    return at !== -1 && at < headEnd;
  };
  const lastIn = (needle: string) => {
    const at = text.lastIndexOf(needle, to - 1);
    return at >= from ? at : -1;
  };
  const segmentOf = (offset: number) => {
    let lo = 0;
    let hi = start - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (segEnds[mid]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const lineAt = (at: number) => text.slice(at, text.indexOf('\n', at));

  let discontinuities = 0;
  for (let at = text.indexOf('#EXT-X-DISCONTINUITY\n', from); at !== -1 && at < to; at = text.indexOf('#EXT-X-DISCONTINUITY\n', at + 1)) discontinuities++;
  const added: string[] = [];
  const mapAt = lastIn('#EXT-X-MAP:');
  if (mapAt !== -1 && !inHead('#EXT-X-MAP:')) added.push(lineAt(mapAt));
  if (!inHead('#EXT-X-KEY:')) {
    const keys = new Map<string, string>();
    for (let at = text.indexOf('#EXT-X-KEY:', from); at !== -1 && at < to; at = text.indexOf('#EXT-X-KEY:', at + 1)) {
      const line = lineAt(at);
      keys.set(attribute(tagValue(line), 'KEYFORMAT') ?? 'identity', line);
    }
    for (const k of keys.values()) if (!/METHOD=NONE/.test(k)) added.push(k);
  }
  const pdtAt = lastIn('#EXT-X-PROGRAM-DATE-TIME:');
  if (pdtAt !== -1 && !inHead('#EXT-X-PROGRAM-DATE-TIME:')) {
    const t = Date.parse(tagValue(lineAt(pdtAt)));
    if (Number.isNaN(t)) return reference(text, opts);
    added.push(`#EXT-X-PROGRAM-DATE-TIME:${formatPdt(t + seconds(segmentOf(pdtAt), start) * 1000)}`);
  }
  const cueAt = Math.max(lastIn('#EXT-X-CUE-OUT'), lastIn('#EXT-X-CUE-IN'));
  if (cueAt !== -1 && !inHead('#EXT-X-CUE-OUT') && !inHead('#EXT-X-CUE-IN')) {
    const k = segmentOf(cueAt);
    const seg = text.slice(segStart(k), segEnds[k]);
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

  // Header edits, applied from the last offset back so earlier offsets stay valid.
  const seqLine = `#EXT-X-MEDIA-SEQUENCE:${ms.value + start}\n`;
  const discLine = discontinuities ? `#EXT-X-DISCONTINUITY-SEQUENCE:${ds.value + discontinuities}\n` : '';
  const dsInserted = ds.start === -1 ? discLine : '';
  const edits: Array<{ start: number; end: number; text: string }> = [];
  if (ms.start !== -1) edits.push({ start: ms.start, end: ms.end, text: seqLine + dsInserted });
  else {
    const at = tdLineEnd !== -1 ? tdLineEnd : headerEnd;
    edits.push({ start: at, end: at, text: seqLine + dsInserted });
  }
  if (ds.start !== -1 && discLine) edits.push({ start: ds.start, end: ds.end, text: discLine });
  let header = text.slice(0, headerEnd);
  for (const e of edits.sort((x, y) => y.start - x.start)) header = header.slice(0, e.start) + e.text + header.slice(e.end);
  return header + (added.length ? added.join('\n') + '\n' : '') + kept + tail;
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
  const media = raw.startsWith('#EXTM3U\n') && raw.endsWith('\n') && raw.includes('#EXTINF') && !raw.includes('#EXT-X-STREAM-INF');
  const trimmed = media ? trimCore(raw, trim, true) : null;
  if (trimmed !== null) return hls.push(trimmed ?? raw) + hls.end();
  const text = hls.push(raw) + hls.end();
  return hls.kind === 'media' ? (trimText(text, trim) ?? text) : text;
}
