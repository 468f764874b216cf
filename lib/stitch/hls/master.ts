/**
 * A multivariant (master) playlist read into what stitching needs (RFC 8216 §4.3.4): the variant
 * streams with their attributes and the EXT-X-MEDIA renditions. A media playlist given where a
 * master was expected reads as a master of one variant, so an asset or an ad published as a
 * single playlist still stitches.
 */
import { attribute, playlistLines, readMaster, resolveUri, uriResolver as resolveHlsUris } from '../../hls/index.js';
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

/** The lines of a playlist: lib/hls reads them for every consumer. */
export { playlistLines };

function unresolvable(uri: string): never {
  throw new StitchError('unparseable', `a URI cannot be resolved: ${uri.slice(0, 200)}`);
}

/** Resolves a playlist URI against the playlist it is in (lib/hls resolveUri); one nothing resolves is an unparseable source. */
export function absoluteUri(uri: string, base: string): string {
  return resolveUri(uri, base) ?? unresolvable(uri);
}

/** absoluteUri for the many segment URIs of one playlist (lib/hls uriResolver: plain names joined without a URL parse). */
export function uriResolver(base: string): (uri: string) => string {
  const resolve = resolveHlsUris(base);
  return (uri) => resolve(uri) ?? unresolvable(uri);
}

function mediaType(v: string | undefined): MediaType | undefined {
  return v === 'AUDIO' || v === 'VIDEO' || v === 'SUBTITLES' || v === 'CLOSED-CAPTIONS' ? v : undefined;
}

export function parseMaster(url: string, text: string): MasterPlaylist {
  const read = readMaster(text);
  if (read.lines[0] !== '#EXTM3U') throw new StitchError('unparseable', `not an HLS playlist: ${url}`);
  const m: MasterPlaylist = { url, version: 0, independentSegments: false, variants: [], renditions: [], other: [] };
  if (read.hasSegments) {
    // A media playlist on its own: one variant, itself.
    m.variants.push({ attrs: 'BANDWIDTH=0', uri: url, bandwidth: 0, codecs: [], width: 0, height: 0 });
    return m;
  }
  m.version = read.version;
  m.independentSegments = read.independentSegments;
  m.other = read.session;
  for (const v of read.variants) m.variants.push(variant(v.attrs, v.bandwidth, absoluteUri(v.uri, url)));
  for (const x of read.renditions) {
    const type = mediaType(x.type);
    if (!type) continue;
    const r: Rendition = {
      type,
      line: x.line,
      groupId: attribute(x.attrs, 'GROUP-ID') ?? '',
      name: attribute(x.attrs, 'NAME') ?? '',
    };
    const language = attribute(x.attrs, 'LANGUAGE');
    const channels = attribute(x.attrs, 'CHANNELS');
    if (language) r.language = language;
    if (channels) r.channels = channels;
    if (x.uri && type !== 'CLOSED-CAPTIONS') r.uri = absoluteUri(x.uri, url);
    m.renditions.push(r);
  }
  // EXT-X-I-FRAME-STREAM-INF is left out: ads come without I-frame playlists, so a stitched one would skip them.
  if (!m.variants.length) throw new StitchError('unparseable', `no variant stream in ${url}`);
  return m;
}

function variant(attrs: string, bandwidth: number, uri: string): Variant {
  const res = /^(\d+)x(\d+)$/.exec(attribute(attrs, 'RESOLUTION') ?? '');
  const v: Variant = {
    attrs,
    uri,
    bandwidth,
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
