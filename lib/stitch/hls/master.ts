/**
 * A multivariant (master) playlist read into what stitching needs (RFC 8216 §4.3.4): the variant
 * streams with their attributes and the EXT-X-MEDIA renditions. A media playlist given where a
 * master was expected reads as a master of one variant, so an asset or an ad published as a
 * single playlist still stitches.
 */
import { attribute, normalizeLineEnds, tagName, tagValue } from '../../hls/lines.js';
import { StitchError } from '../errors.js';

export interface Variant {
  /** The EXT-X-STREAM-INF attribute list, as written. */
  attrs: string;
  /** Absolute URI of the variant's media playlist. */
  uri: string;
  bandwidth: number;
  codecs: string[];
  /** Pixel height and width from RESOLUTION, 0 when absent. */
  width: number;
  height: number;
  audio?: string;
  subtitles?: string;
}

export type MediaType = 'AUDIO' | 'VIDEO' | 'SUBTITLES' | 'CLOSED-CAPTIONS';

export interface Rendition {
  type: MediaType;
  /** The EXT-X-MEDIA line, as written. */
  line: string;
  groupId: string;
  language?: string;
  name: string;
  channels?: string;
  /** Absolute URI of the rendition's media playlist; undefined when it lives in the variant (muxed) or is a CEA-608/708 track. */
  uri?: string;
}

export interface MasterPlaylist {
  url: string;
  version: number;
  independentSegments: boolean;
  variants: Variant[];
  renditions: Rendition[];
  /** EXT-X-SESSION-DATA / EXT-X-SESSION-KEY / EXT-X-CONTENT-STEERING and other master tags kept as they are. */
  other: string[];
}

/** Splits a playlist into lines without CR/LF and blank lines (LF, CRLF or a bare CR ends a line). */
export function playlistLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of normalizeLineEnds(text).split('\n')) {
    const line = raw.trim();
    if (line) out.push(line);
  }
  return out;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** A relative reference URL would not change: starts with a name character, only URL-safe characters after. */
const PLAIN = /^[\w~!$&'()*+,;=@-][\w.~!$&'()*+,;=:@%/?-]*$/;

/** Resolves a playlist URI against the playlist it is in (RFC 8216 §4.1); absolute URIs come back untouched, byte for byte. */
export function absoluteUri(uri: string, base: string): string {
  if (SCHEME.test(uri)) return uri;
  try {
    return new URL(uri, base).href;
  } catch {
    throw new StitchError('unparseable', `a URI cannot be resolved: ${uri.slice(0, 200)}`);
  }
}

/**
 * absoluteUri for the many segment URIs of one playlist: a plain relative name (the usual case)
 * is joined to the playlist's directory without a URL parse; anything else goes through URL.
 */
export function uriResolver(base: string): (uri: string) => string {
  const noQuery = base.split(/[?#]/)[0]!;
  const dir = noQuery.slice(0, noQuery.lastIndexOf('/') + 1);
  return (uri) => {
    if (SCHEME.test(uri)) return uri;
    return PLAIN.test(uri) && !uri.includes('/.') ? dir + uri : absoluteUri(uri, base);
  };
}

function mediaType(v: string | undefined): MediaType | undefined {
  return v === 'AUDIO' || v === 'VIDEO' || v === 'SUBTITLES' || v === 'CLOSED-CAPTIONS' ? v : undefined;
}

export function parseMaster(url: string, text: string): MasterPlaylist {
  const lines = playlistLines(text);
  if (lines[0] !== '#EXTM3U') throw new StitchError('unparseable', `not an HLS playlist: ${url}`);
  const m: MasterPlaylist = { url, version: 0, independentSegments: false, variants: [], renditions: [], other: [] };
  if (lines.some((l) => l.startsWith('#EXTINF:'))) {
    // A media playlist on its own: one variant, itself.
    m.variants.push({ attrs: 'BANDWIDTH=0', uri: url, bandwidth: 0, codecs: [], width: 0, height: 0 });
    return m;
  }
  let pending: string | undefined;
  for (const line of lines) {
    if (line.charCodeAt(0) !== 35) {
      if (pending !== undefined) m.variants.push(variant(pending, absoluteUri(line, url)));
      pending = undefined;
      continue;
    }
    const name = tagName(line);
    if (name === '#EXT-X-STREAM-INF') pending = tagValue(line);
    else if (name === '#EXT-X-MEDIA') {
      const attrs = tagValue(line);
      const type = mediaType(attribute(attrs, 'TYPE'));
      if (!type) continue;
      const r: Rendition = {
        type,
        line,
        groupId: attribute(attrs, 'GROUP-ID') ?? '',
        name: attribute(attrs, 'NAME') ?? '',
      };
      const language = attribute(attrs, 'LANGUAGE');
      const channels = attribute(attrs, 'CHANNELS');
      const uri = attribute(attrs, 'URI');
      if (language) r.language = language;
      if (channels) r.channels = channels;
      if (uri && type !== 'CLOSED-CAPTIONS') r.uri = absoluteUri(uri, url);
      m.renditions.push(r);
    } else if (name === '#EXT-X-VERSION') m.version = Number(tagValue(line)) || 0;
    else if (name === '#EXT-X-INDEPENDENT-SEGMENTS') m.independentSegments = true;
    else if (
      name === '#EXT-X-SESSION-DATA' ||
      name === '#EXT-X-SESSION-KEY' ||
      name === '#EXT-X-CONTENT-STEERING' ||
      name === '#EXT-X-DEFINE'
    )
      m.other.push(line);
    // EXT-X-I-FRAME-STREAM-INF is left out: ads come without I-frame playlists, so a stitched one would skip them.
  }
  if (!m.variants.length) throw new StitchError('unparseable', `no variant stream in ${url}`);
  return m;
}

function variant(attrs: string, uri: string): Variant {
  const res = /^(\d+)x(\d+)$/.exec(attribute(attrs, 'RESOLUTION') ?? '');
  const v: Variant = {
    attrs,
    uri,
    bandwidth: Number(attribute(attrs, 'BANDWIDTH')) || 0,
    codecs: (attribute(attrs, 'CODECS') ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean),
    width: res ? Number(res[1]) : 0,
    height: res ? Number(res[2]) : 0,
  };
  const audio = attribute(attrs, 'AUDIO');
  const subtitles = attribute(attrs, 'SUBTITLES');
  if (audio) v.audio = audio;
  if (subtitles) v.subtitles = subtitles;
  return v;
}

/** Every media playlist a master names (variants, then renditions with a URI), each once: what the route layer fetches. */
export function mediaPlaylistUris(m: MasterPlaylist): string[] {
  return [...new Set([...m.variants.map((v) => v.uri), ...m.renditions.flatMap((r) => (r.uri ? [r.uri] : []))])];
}
