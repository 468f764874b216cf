/**
 * The shapes the hot path's text forms leave to their line-based references, stated independently
 * of them (lib/hls/trim-text.ts, breaks.ts): tests compare these with the fallback counters
 * (lib/hls/stats.ts), so a fast path that quietly stops being taken fails a test.
 */
import { HEADER_TAGS } from '../../lib/hls/media.js';
import { splitLines } from '../../lib/hls/index.js';

const tagOf = (line: string) => line.split(':', 1)[0]!;

/** A header tag after another tag line before the first URI (comments such as USP's `## Created with` do this). */
export function lateHeaderTag(text: string): boolean {
  let pastHeader = false;
  for (const l of splitLines(text)) {
    if (!l.startsWith('#')) return false;
    if (!HEADER_TAGS.has(tagOf(l))) pastHeader = true;
    else if (pastHeader) return true;
  }
  return false;
}

/** A playlist with cue tags of its own (a DAI pod, an origin's cue): breaks render it line by line (lib/hls/breaks.ts). */
export function carriesCues(text: string): boolean {
  return splitLines(text).some((l) => l.startsWith('#EXT-X-CUE'));
}

/** The header tags before the first other line. */
function headerLines(lines: string[]): string[] {
  const end = lines.findIndex((l) => !HEADER_TAGS.has(tagOf(l)));
  return end === -1 ? lines : lines.slice(0, end);
}

/** Whether the header has a tag that makes the text a media playlist to the rewriter (RFC 8216 §4.3.3). */
export function kindInHeader(text: string): boolean {
  return headerLines(splitLines(text)).some((l) =>
    ['#EXT-X-TARGETDURATION', '#EXT-X-MEDIA-SEQUENCE', '#EXT-X-DISCONTINUITY-SEQUENCE'].includes(tagOf(l)),
  );
}

/** Whether a live-window trim of this (rewritten) media playlist goes to the reference, for any window. */
export function trimNeedsReference(text: string): boolean {
  if (lateHeaderTag(text)) return true;
  const lines = splitLines(text);
  const live =
    !lines.some((l) => l === '#EXT-X-ENDLIST' || tagOf(l) === '#EXT-X-SKIP' || l === '#EXT-X-PLAYLIST-TYPE:VOD') &&
    lines.some((l) => !l.startsWith('#'));
  const header = headerLines(lines);
  const twice = (tag: string) => header.filter((l) => tagOf(l) === tag).length > 1;
  return (
    live &&
    (lines.some((l) => tagOf(l) === '#EXT-X-BYTERANGE') ||
      twice('#EXT-X-MEDIA-SEQUENCE') ||
      twice('#EXT-X-DISCONTINUITY-SEQUENCE'))
  );
}

/** Raw text the offsets trim reads as it is: `#EXTM3U` first, LF lines, none blank, padded or starting with a non-ASCII character. */
export function normalised(raw: string): boolean {
  if (!raw.startsWith('#EXTM3U\n') || !raw.endsWith('\n')) return false;
  return splitLines(raw).every(
    (l) => l.length > 0 && l.charCodeAt(0) > 32 && l.charCodeAt(0) < 128 && !/[\r \t\v\f]$/.test(l),
  );
}
