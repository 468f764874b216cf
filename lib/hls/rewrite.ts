/**
 * The line transform of the DAI proxy: one pass over a playlist, master or media, deciding the
 * kind from the first tag that tells (RFC 8216 §4.3.4 vs §4.3.3: a URI line is preceded by
 * EXT-X-STREAM-INF in a master and by EXTINF in a media playlist). Fed whole or chunk by chunk,
 * it produces the same output.
 */
import { LineSplitter, mapUriAttribute, tagName } from './lines.js';
import { UriRewriter, type UriRules } from './uris.js';

export type PlaylistKind = 'master' | 'media' | 'unknown';

const MASTER_TAGS = new Set(['#EXT-X-STREAM-INF', '#EXT-X-MEDIA', '#EXT-X-I-FRAME-STREAM-INF', '#EXT-X-SESSION-DATA', '#EXT-X-SESSION-KEY', '#EXT-X-CONTENT-STEERING']);
const MEDIA_TAGS = new Set(['#EXTINF', '#EXT-X-TARGETDURATION', '#EXT-X-MEDIA-SEQUENCE', '#EXT-X-PART', '#EXT-X-MAP', '#EXT-X-BYTERANGE', '#EXT-X-DISCONTINUITY-SEQUENCE']);
/** Tags whose URI attribute names a playlist (master) or a media resource (media). */
const MASTER_URI_TAGS = new Set(['#EXT-X-MEDIA', '#EXT-X-I-FRAME-STREAM-INF']);
const MEDIA_URI_TAGS = new Set(['#EXT-X-MAP', '#EXT-X-KEY', '#EXT-X-PART', '#EXT-X-PRELOAD-HINT']);

export class PlaylistRewriter {
  kind: PlaylistKind = 'unknown';
  /** False when the first line is not #EXTM3U (garbage from upstream). */
  valid = true;
  private first = true;
  private readonly uris: UriRewriter;
  private readonly splitter = new LineSplitter();
  private readonly onLine = (line: string) => this.line(line);

  constructor(
    rules: UriRules,
    private readonly emit: (line: string) => void,
  ) {
    this.uris = new UriRewriter(rules);
  }

  push(chunk: string | Uint8Array): void {
    this.splitter.push(chunk, this.onLine);
  }

  end(): void {
    this.splitter.end(this.onLine);
    if (this.first) this.valid = false;
  }

  line(raw: string): void {
    const line = raw.trim();
    if (!line) return;
    if (this.first) {
      this.first = false;
      // A UTF-8 BOM before the header is tolerated, not copied.
      const header = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
      this.valid = header === '#EXTM3U' || header.startsWith('#EXTM3U ');
      this.emit(header);
      return;
    }
    if (line.charCodeAt(0) !== 35 /* # */) {
      this.emit(this.kind === 'master' ? this.uris.master(line) : this.uris.media(line));
      return;
    }
    if (!line.startsWith('#EXT')) return this.emit(line);
    const name = tagName(line);
    if (this.kind === 'unknown') {
      if (MASTER_TAGS.has(name)) this.kind = 'master';
      else if (MEDIA_TAGS.has(name)) this.kind = 'media';
    }
    if (MASTER_URI_TAGS.has(name)) this.emit(mapUriAttribute(line, (u) => this.uris.master(u)));
    else if (MEDIA_URI_TAGS.has(name)) this.emit(mapUriAttribute(line, (u) => this.uris.media(u)));
    else this.emit(line);
  }
}

/** The whole-document form: the same transform over a complete playlist. */
export function rewritePlaylist(text: string, rules: UriRules): { kind: PlaylistKind; valid: boolean; lines: string[] } {
  const lines: string[] = [];
  const r = new PlaylistRewriter(rules, (l) => lines.push(l));
  r.push(text);
  r.end();
  return { kind: r.kind, valid: r.valid, lines };
}

export function joinLines(lines: string[]): string {
  return lines.length ? lines.join('\n') + '\n' : '';
}
