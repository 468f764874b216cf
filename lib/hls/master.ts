/**
 * Master playlist URI mapping (RFC 8216 §4.3.4): the URI line after each EXT-X-STREAM-INF and the
 * URI attribute of EXT-X-MEDIA and EXT-X-I-FRAME-STREAM-INF go through `map`; every other line is
 * kept (trimmed, blank lines dropped, LF endings). Pure string work.
 */
import { mapUriAttribute, normalizeLineEnds, tagName } from './lines.js';

const URI_TAGS = new Set(['#EXT-X-MEDIA', '#EXT-X-I-FRAME-STREAM-INF']);

export interface MappedMaster {
  /** False when the text does not start with #EXTM3U or holds no variant (not a master playlist). */
  valid: boolean;
  text: string;
}

export function mapMasterUris(text: string, map: (uri: string) => string): MappedMaster {
  const out: string[] = [];
  let expectUri = false;
  let variants = 0;
  for (const raw of normalizeLineEnds(text).split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    if (out.length === 0) {
      const header = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
      if (header !== '#EXTM3U' && !header.startsWith('#EXTM3U ')) return { valid: false, text: '' };
      out.push(header);
      continue;
    }
    if (line.charCodeAt(0) === 35 /* # */) {
      const name = tagName(line);
      if (name === '#EXT-X-STREAM-INF') expectUri = true;
      out.push(URI_TAGS.has(name) ? mapUriAttribute(line, map) : line);
      continue;
    }
    if (expectUri) variants++;
    out.push(expectUri ? map(line) : line);
    expectUri = false;
  }
  return { valid: variants > 0, text: out.length ? out.join('\n') + '\n' : '' };
}

/** A nominal BANDWIDTH for a master of one variant: required by RFC 8216 §4.3.4.2, unknowable from a media playlist, unused by a player with nothing to choose. */
const SINGLE_VARIANT_BANDWIDTH = 1_000_000;

/** Whether `text` is a media playlist (#EXTM3U, then a segment or media-playlist tag). */
export function isMediaPlaylist(text: string): boolean {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  return text.startsWith('#EXTM3U', start) && /^#(EXTINF|EXT-X-TARGETDURATION)[:\r\n]/m.test(text);
}

/** The master of a source that is a media playlist: one variant, `uri` (docs/decisions.md). */
export function singleVariantMaster(uri: string): string {
  return `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=${SINGLE_VARIANT_BANDWIDTH}\n${uri}\n`;
}
