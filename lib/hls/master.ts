/**
 * Master (multivariant) playlists (RFC 8216 §4.3.4), off the hot path: the one reader every consumer
 * uses (stitching, the break worker's source, the cue monitor, ID3 inspection), with their different
 * choices of renditions as options, and the URI mapping of the DAI and squeezeback flows. Pure
 * string work. (The hot path's streaming rewriter, ./rewrite.ts, classifies lines as they arrive.)
 */
import { attribute, mapUriAttribute, playlistLines, tagName, tagValue } from './lines.js';
import { resolveUri } from './uris.js';

/** A variant stream: an EXT-X-STREAM-INF and the URI line after it. */
export interface MasterVariant {
  /** The attribute list, as written. */
  attrs: string;
  /** The URI line, as written. */
  uri: string;
  /** BANDWIDTH, 0 when absent or not a positive number. */
  bandwidth: number;
}

/** An EXT-X-MEDIA rendition. */
export interface MasterRendition {
  /** The whole line and its attribute list, as written. */
  line: string;
  attrs: string;
  /** TYPE as written (AUDIO, VIDEO, SUBTITLES, CLOSED-CAPTIONS), undefined when absent. */
  type: string | undefined;
  /** URI as written, undefined when absent (muxed into the variant, or a CEA-608/708 track). */
  uri: string | undefined;
}

export interface MasterRead {
  /** The first line starts with `#EXTM3U` (stitching asks for exactly that line: `lines[0]`). */
  header: boolean;
  /** Lines as playlistLines gives them. */
  lines: string[];
  /** A line starts with `#EXTINF:`: a media playlist given where a master was expected. */
  hasSegments: boolean;
  variants: MasterVariant[];
  renditions: MasterRendition[];
  /** Variants and renditions in document order. */
  entries: Array<MasterVariant | MasterRendition>;
  version: number;
  independentSegments: boolean;
  /** EXT-X-SESSION-DATA / -SESSION-KEY / -CONTENT-STEERING / -DEFINE lines, as written. */
  session: string[];
}

const SESSION_TAGS = new Set(['#EXT-X-SESSION-DATA', '#EXT-X-SESSION-KEY', '#EXT-X-CONTENT-STEERING', '#EXT-X-DEFINE']);

/**
 * Reads a master playlist. The URI line after the last EXT-X-STREAM-INF before it is that
 * variant's; a URI line after anything else is no variant. EXT-X-I-FRAME-STREAM-INF is not read:
 * no consumer follows I-frame playlists (they address byte ranges of the variants' segments).
 */
export function readMaster(text: string): MasterRead {
  const lines = playlistLines(text);
  const m: MasterRead = {
    header: lines[0]?.startsWith('#EXTM3U') ?? false,
    lines,
    hasSegments: false,
    variants: [],
    renditions: [],
    entries: [],
    version: 0,
    independentSegments: false,
    session: [],
  };
  let pending: string | undefined;
  for (const line of lines) {
    if (line.charCodeAt(0) !== 35 /* # */) {
      if (pending !== undefined) {
        const bw = Number(attribute(pending, 'BANDWIDTH'));
        const v: MasterVariant = { attrs: pending, uri: line, bandwidth: Number.isFinite(bw) && bw > 0 ? bw : 0 };
        m.variants.push(v);
        m.entries.push(v);
      }
      pending = undefined;
      continue;
    }
    const name = tagName(line);
    if (name === '#EXT-X-STREAM-INF') pending = tagValue(line);
    else if (name === '#EXT-X-MEDIA') {
      const attrs = tagValue(line);
      const r: MasterRendition = { line, attrs, type: attribute(attrs, 'TYPE'), uri: attribute(attrs, 'URI') };
      m.renditions.push(r);
      m.entries.push(r);
    } else if (name === '#EXTINF') m.hasSegments = true;
    else if (name === '#EXT-X-VERSION') m.version = Number(tagValue(line)) || 0;
    else if (name === '#EXT-X-INDEPENDENT-SEGMENTS') m.independentSegments = true;
    else if (SESSION_TAGS.has(name)) m.session.push(line);
  }
  return m;
}

export interface MasterUriOptions {
  /** Renditions (EXT-X-MEDIA with a URI) too: all of them (default), none, or all but these TYPEs. */
  renditions?: 'all' | 'none' | { except: readonly string[] };
  /** `document` (default): in the master's order; `variants-first`: every variant, then the renditions. */
  order?: 'document' | 'variants-first';
  /** At most this many (after de-duplication). */
  limit?: number;
}

export interface MasterUri {
  /** As the master writes it. */
  uri: string;
  /** Resolved against the master's URL (resolveUri). */
  url: string;
  /** A variant's BANDWIDTH, when it has a positive one. */
  bandwidth?: number;
}

function isVariant(e: MasterVariant | MasterRendition): e is MasterVariant {
  return 'bandwidth' in e;
}

/**
 * The media playlists a master names, resolved against its URL, each URL once (the first place it
 * stands); a URI nothing resolves is left out.
 */
export function masterUris(master: string | MasterRead, base: string, opts: MasterUriOptions = {}): MasterUri[] {
  const m = typeof master === 'string' ? readMaster(master) : master;
  const which = opts.renditions ?? 'all';
  const keep = (r: MasterRendition) =>
    r.uri !== undefined &&
    r.uri !== '' &&
    which !== 'none' &&
    (which === 'all' || !which.except.includes(r.type ?? ''));
  const entries = opts.order === 'variants-first' ? [...m.variants, ...m.renditions] : m.entries;
  const out: MasterUri[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    if (out.length >= (opts.limit ?? Infinity)) break;
    if (!isVariant(e) && !keep(e)) continue;
    const uri = e.uri!;
    const url = resolveUri(uri, base);
    if (url === undefined || seen.has(url)) continue;
    seen.add(url);
    out.push(isVariant(e) && e.bandwidth > 0 ? { uri, url, bandwidth: e.bandwidth } : { uri, url });
  }
  return out;
}

/**
 * URI mapping of a master for the DAI and squeezeback flows: the URI line after each
 * EXT-X-STREAM-INF and the URI attribute of EXT-X-MEDIA and EXT-X-I-FRAME-STREAM-INF go through
 * `map`; every other line is kept (trimmed, blank lines dropped, LF endings).
 */

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
  for (const line of playlistLines(text)) {
    if (out.length === 0) {
      // trim() took a byte-order mark with it (U+FEFF is white space to it).
      if (line !== '#EXTM3U' && !line.startsWith('#EXTM3U ')) return { valid: false, text: '' };
      out.push(line);
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
