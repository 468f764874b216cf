/**
 * The event's source playlists as the break worker follows them (docs/design.md §6): `source_uri` is a
 * master or a media playlist; a master's variants and renditions are each read. Segments are
 * keyed by their path, the same path the DAI variant carries after the root-relative → origin
 * rewrite, so a squeezed output found here replaces the right line in every stream's manifest.
 */
import { masterUris, readMaster, readMedia, segmentTimes, type SequenceAnchor } from '../../hls/index.js';

export interface SourceSegment {
  uri: string;
  path: string;
  /** Media sequence number. */
  seq: number;
  /**
   * Program date-time (tagged or carried forward), else, for a break placed by media sequence, the
   * time the segment stands for in it; undefined when neither applies.
   */
  pdtMs: number | undefined;
  durationSec: number;
}

export interface SourcePlaylist {
  uri: string;
  targetSec: number;
  segments: SourceSegment[];
}

export type FetchText = (url: string, signal: AbortSignal) => Promise<string>;

const MAX_VARIANTS = 16;

/**
 * The path of a segment URI (absolute or root-relative), without query or fragment: the key that
 * ties a source segment to the line of every stream's manifest. Plain string work, as the hot path
 * calls it for every break segment it renders.
 */
export function segmentPath(uri: string): string {
  let start = 0;
  const scheme = uri.indexOf('://');
  if (scheme !== -1 && scheme < 10) {
    start = scheme + 3;
    while (start < uri.length && !'/?#'.includes(uri[start]!)) start++;
    if (start === uri.length || uri[start] !== '/') return '/';
  }
  const q = uri.indexOf('?', start);
  const h = uri.indexOf('#', start);
  const end = q === -1 ? (h === -1 ? uri.length : h) : h === -1 ? q : Math.min(q, h);
  return start === 0 && end === uri.length ? uri : uri.slice(start, end);
}

/**
 * Variant and rendition playlist URIs of a master playlist, resolved against it, in the master's
 * order. Audio renditions are composed too (the ad's sound); subtitles and captions are not media
 * to squeeze.
 */
export function masterVariants(text: string, base: string): string[] {
  return masterUris(text, base, { renditions: { except: ['SUBTITLES', 'CLOSED-CAPTIONS'] }, limit: MAX_VARIANTS }).map(
    (u) => u.url,
  );
}

/** Every segment of a media playlist; `anchor` places those without program date-time (lib/hls segmentTimes). */
export function mediaSegments(text: string, base: string, anchor?: SequenceAnchor): SourcePlaylist {
  const p = readMedia(text);
  const times = segmentTimes(p, anchor);
  const segments: SourceSegment[] = [];
  p.segments.forEach((s, i) => {
    const uri = new URL(s.uri, base).toString();
    // Keyed by the path as written when it is absolute or root-relative (what the DAI variant carries), not a normalised form.
    const path =
      s.uri.startsWith('/') && !s.uri.startsWith('//')
        ? segmentPath(s.uri)
        : /^https?:\/\//i.test(s.uri)
          ? segmentPath(s.uri)
          : segmentPath(uri);
    segments.push({ uri, path, seq: p.mediaSequence + i, pdtMs: times[i], durationSec: s.duration });
  });
  return { uri: base, targetSec: p.targetDuration || 6, segments };
}

/** Reads the source (master → its variants, at most `maxVariants`) into media playlists; a variant that fails is skipped. */
export async function readSource(
  sourceUri: string,
  fetchText: FetchText,
  signal: AbortSignal,
  maxVariants = MAX_VARIANTS,
  anchor?: SequenceAnchor,
): Promise<SourcePlaylist[]> {
  const text = await fetchText(sourceUri, signal);
  const master = readMaster(text);
  if (!master.header) throw new Error('the source is not an HLS playlist');
  if (!master.variants.length) return [mediaSegments(text, sourceUri, anchor)];
  const variants = masterUris(master, sourceUri, {
    renditions: { except: ['SUBTITLES', 'CLOSED-CAPTIONS'] },
    limit: Math.min(maxVariants, MAX_VARIANTS),
  }).map((u) => u.url);
  const results = await Promise.allSettled(
    variants.map(async (v) => mediaSegments(await fetchText(v, signal), v, anchor)),
  );
  return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
}
