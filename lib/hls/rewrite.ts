/**
 * The line transform of the DAI proxy: one pass over a playlist, master or media, deciding the
 * kind from the first tag that tells (RFC 8216 §4.3.4 vs §4.3.3: a URI line is preceded by
 * EXT-X-STREAM-INF in a master and by EXTINF in a media playlist). It scans with indexOf and
 * copies unchanged runs of the input as they are: only the lines that change produce new
 * strings. Output lines end in LF, are trimmed, and blank lines are dropped. Fed whole or chunk by
 * chunk (a chunk may split a line, a CRLF or a UTF-8 sequence), it produces the same output.
 */
import { mapUriAttribute, normalizeLineEnds, tagName } from './lines.js';
import { UriRewriter, type UriRules } from './uris.js';

export type PlaylistKind = 'master' | 'media' | 'unknown';

const MASTER_TAGS = new Set([
  '#EXT-X-STREAM-INF',
  '#EXT-X-MEDIA',
  '#EXT-X-I-FRAME-STREAM-INF',
  '#EXT-X-SESSION-DATA',
  '#EXT-X-SESSION-KEY',
  '#EXT-X-CONTENT-STEERING',
]);
const MEDIA_TAGS = new Set([
  '#EXTINF',
  '#EXT-X-TARGETDURATION',
  '#EXT-X-MEDIA-SEQUENCE',
  '#EXT-X-PART',
  '#EXT-X-MAP',
  '#EXT-X-BYTERANGE',
  '#EXT-X-DISCONTINUITY-SEQUENCE',
]);
/** Tags whose URI attribute names a playlist (master) or a media resource (media). */
const MASTER_URI_TAGS = new Set(['#EXT-X-MEDIA', '#EXT-X-I-FRAME-STREAM-INF']);
const MEDIA_URI_TAGS = new Set(['#EXT-X-MAP', '#EXT-X-KEY', '#EXT-X-PART', '#EXT-X-PRELOAD-HINT']);

const HASH = 35;
const SLASH = 47;
const DASH = 45;
const CR = 13;

/** Bytes at the end of buf that start an incomplete UTF-8 sequence. */
function incompleteUtf8Tail(buf: Uint8Array): number {
  const n = buf.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = buf[n - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

export class PlaylistRewriter {
  kind: PlaylistKind = 'unknown';
  /** False when the first line is not #EXTM3U (garbage from upstream). */
  valid = true;
  private first = true;
  private carry = '';
  private pendingBytes: Uint8Array | undefined;
  private readonly uris: UriRewriter;
  private readonly originPrefix: string;

  constructor(private readonly rules: UriRules) {
    this.uris = new UriRewriter(rules);
    this.originPrefix = rules.contentOrigin;
  }

  /**
   * Whether the output so far depends on the playlist's URL (a document-relative URI was resolved
   * against it): otherwise it depends on the input and the rules' origins alone.
   */
  get usedPlaylistUrl(): boolean {
    return this.uris.resolvedRelative;
  }

  /** Rewrites every line this chunk completes; returns their output. */
  push(chunk: string | Uint8Array): string {
    let text: string;
    if (typeof chunk === 'string') text = chunk;
    else {
      let bytes = chunk;
      if (this.pendingBytes) {
        bytes = Buffer.concat([this.pendingBytes, chunk]);
        this.pendingBytes = undefined;
      }
      const tail = incompleteUtf8Tail(bytes);
      if (tail) this.pendingBytes = bytes.slice(bytes.length - tail);
      text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length - tail).toString('utf8');
    }
    // A bare CR ends a line too (issue 24). Each chunk is looked at once, before the carry (which so
    // never holds a CR) is put in front; a CRLF split across chunks becomes LF + LF, and the blank
    // line between them is dropped like any other, so the output does not depend on the split.
    text = normalizeLineEnds(text);
    if (this.carry) text = this.carry + text;
    const last = text.lastIndexOf('\n');
    if (last === -1) {
      this.carry = text;
      return '';
    }
    this.carry = last + 1 < text.length ? text.slice(last + 1) : '';
    return this.block(text, last + 1);
  }

  /**
   * For a caller that emits a media playlist's header itself, having checked it: `#EXTM3U` first,
   * normalised lines, header tags only (they carry no URIs), one of them a media playlist's
   * (RFC 8216 §4.3.3). The next push starts after it.
   */
  mediaHeaderPassed(): void {
    this.first = false;
    this.valid = true;
    this.kind = 'media';
  }

  /**
   * The output of push() over whole media segments text[from, to) that are in normalised form and
   * hold no tag the rewrite looks into (mayCarryUri), found by looking at their URI lines only:
   * segment i's starts at uriStarts[i] and its LF ends before uriEnds[i], for i in [first, last).
   */
  segments(
    text: string,
    from: number,
    to: number,
    uriStarts: Int32Array,
    uriEnds: Int32Array,
    first: number,
    last: number,
  ): string {
    let out = '';
    let run = from;
    for (let i = first; i < last; i++) {
      const pos = uriStarts[i]!;
      const lineEnd = uriEnds[i]! - 1;
      const edit = this.mediaUriEdit(text, pos, lineEnd);
      if (edit !== undefined) {
        out += text.slice(run, pos) + edit;
        run = text.charCodeAt(pos) === SLASH ? pos : lineEnd + 1;
      }
    }
    return out + text.slice(run, to);
  }

  /** Flushes the last line when the input did not end with a terminator. */
  end(): string {
    let rest = this.carry;
    if (this.pendingBytes) rest += Buffer.from(this.pendingBytes).toString('utf8');
    rest = normalizeLineEnds(rest);
    this.carry = '';
    this.pendingBytes = undefined;
    const out = rest ? this.block(rest + '\n', rest.length + 1) : '';
    if (this.first) this.valid = false;
    return out;
  }

  /** Rewrites the complete lines text[0, end); text[end-1] is LF. */
  private block(text: string, end: number): string {
    let out = '';
    let run = 0; // start of the run of input copied as is
    let pos = 0;
    while (pos < end) {
      const nl = text.indexOf('\n', pos);
      const c0 = text.charCodeAt(pos);
      let lineEnd = nl;
      if (text.charCodeAt(lineEnd - 1) === CR && lineEnd > pos) lineEnd--;
      const clean = lineEnd === nl && lineEnd > pos && c0 > 32 && text.charCodeAt(lineEnd - 1) > 32;
      if (!clean || this.first) {
        // Unusual line (blank, CRLF, padded, the header): normalise it on its own.
        const line = text.slice(pos, lineEnd).trim();
        out += text.slice(run, pos) + (line ? this.line(line) + '\n' : '');
        run = nl + 1;
      } else if (c0 !== HASH) {
        // URI line
        if (this.kind === 'master') {
          const n = this.uris.daiPrefixLength(text, pos);
          if (n) {
            out += text.slice(run, pos) + this.rules.proxyBase;
            run = pos + n;
          } else if (c0 === SLASH && text.charCodeAt(pos + 1) !== SLASH) {
            out += text.slice(run, pos) + this.rules.proxyBase;
            run = pos;
          }
        } else {
          const edit = this.mediaUriEdit(text, pos, lineEnd);
          if (edit !== undefined) {
            out += text.slice(run, pos) + edit;
            run = c0 === SLASH ? pos : nl + 1;
          }
        }
      } else if (this.kind === 'unknown' || this.mayCarryUri(text, pos)) {
        const line = text.slice(pos, lineEnd);
        const mapped = this.tag(line);
        if (mapped !== line) {
          out += text.slice(run, pos) + mapped + '\n';
          run = nl + 1;
        }
      }
      pos = nl + 1;
    }
    return run === 0 && out === '' ? text.slice(0, end) : out + text.slice(run, end);
  }

  /**
   * The edit of the media playlist URI line text[pos, lineEnd): what goes in at pos, or undefined
   * when the line stays. A root-relative URI gets the content origin before it (the URI itself is
   * copied on with the rest); an absolute one stays; any other is resolved, replacing the line.
   */
  private mediaUriEdit(text: string, pos: number, lineEnd: number): string | undefined {
    if (text.charCodeAt(pos) === SLASH) return text.charCodeAt(pos + 1) !== SLASH ? this.originPrefix : undefined;
    return this.uris.hasScheme(text, pos, lineEnd) ? undefined : this.uris.media(text.slice(pos, lineEnd)) + '\n';
  }

  /**
   * `#EXT-X-M…`, `#EXT-X-K…`, `#EXT-X-PA…`, `#EXT-X-PRE…`, `#EXT-X-I…`: the only tags with URI
   * attributes we rewrite (PROGRAM-DATE-TIME, on nearly every segment, is not one of them).
   */
  private mayCarryUri(text: string, pos: number): boolean {
    if (text.charCodeAt(pos + 4) !== DASH) return false;
    const c = text.charCodeAt(pos + 7);
    if (c === 80 /* P */) return text.charCodeAt(pos + 8) === 65 /* A */ || text.charCodeAt(pos + 9) === 69; /* E */
    return c === 77 /* M */ || c === 75 /* K */ || c === 73; /* I */
  }

  /** One whole line, already trimmed and non-empty. */
  private line(line: string): string {
    if (this.first) {
      this.first = false;
      // A UTF-8 BOM before the header is tolerated, not copied.
      const header = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
      this.valid = header === '#EXTM3U' || header.startsWith('#EXTM3U ');
      return header;
    }
    if (line.charCodeAt(0) !== HASH) return this.kind === 'master' ? this.uris.master(line) : this.uris.media(line);
    return this.tag(line);
  }

  private tag(line: string): string {
    if (!line.startsWith('#EXT')) return line;
    const name = tagName(line);
    if (this.kind === 'unknown') {
      if (MASTER_TAGS.has(name)) this.kind = 'master';
      else if (MEDIA_TAGS.has(name)) this.kind = 'media';
    }
    if (MASTER_URI_TAGS.has(name)) return mapUriAttribute(line, (u) => this.uris.master(u));
    if (MEDIA_URI_TAGS.has(name)) return mapUriAttribute(line, (u) => this.uris.media(u));
    return line;
  }
}

/** The whole-document form: the same transform over a complete playlist. */
export function rewritePlaylist(text: string, rules: UriRules): { kind: PlaylistKind; valid: boolean; text: string } {
  const r = new PlaylistRewriter(rules);
  const out = r.push(text) + r.end();
  return { kind: r.kind, valid: r.valid, text: out };
}

/** Lines of a rewritten playlist (LF-terminated, no blank lines); raw text goes through normalizeLineEnds first. */
export function splitLines(text: string): string[] {
  if (!text) return [];
  return text.slice(0, text.endsWith('\n') ? -1 : undefined).split('\n');
}

export function joinLines(lines: string[]): string {
  return lines.length ? lines.join('\n') + '\n' : '';
}
