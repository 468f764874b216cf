/**
 * Slate (issue 26 part 3): what fills a pod up to its planned length (MediaTailor's "fill with
 * slate"), pure. The planned length of a pod is the sum of its decided ads' VAST durations (a VOD
 * VMAP states no break length of its own); what it has is the length of the ads that will play, read
 * from their manifests. The slate's conditioned renditions are cut to whole segments nearest the
 * gap (never less than one); a slate shorter than the gap fills only its own length.
 */
import { playlistLines, readMedia } from '../hls/index.js';
import { formatIsoDuration, mpdRootAttribute, parseIsoDuration } from '../dash/index.js';
import { parseMaster } from './hls/master.js';
import type { HlsSource } from './hls/stitch.js';

/** Gaps shorter than this are not filled (a creative a few frames shorter than its VAST duration). */
export const MIN_FILL_SEC = 0.5;

const extinfs = (text: string) => readMedia(text).segments.map((s) => s.duration);

/** Seconds an ad source plays: its first variant's segments (HLS), the MPD's duration (DASH). */
export function sourceSeconds(source: HlsSource | string): number {
  if (typeof source === 'string') return parseIsoDuration(mpdRootAttribute(source, 'mediaPresentationDuration')) ?? 0;
  const first = parseMaster(source.url, source.master).variants[0];
  const text = first ? source.playlists.get(first.uri) : source.master;
  return extinfs(text ?? '').reduce((s, d) => s + d, 0);
}

/** How many leading segments of these durations come nearest to `sec` (at least one). */
function segmentsFor(durations: number[], sec: number): number {
  let at = 0;
  let n = 0;
  for (const d of durations) {
    if (n > 0 && at + d / 2 > sec) break;
    at += d;
    n++;
  }
  return n;
}

/** A VOD media playlist cut after its first `n` segments. */
function cutPlaylist(text: string, n: number): string {
  const out: string[] = [];
  let seen = 0;
  for (const line of playlistLines(text)) {
    if (line === '#EXT-X-ENDLIST') continue;
    if (line.startsWith('#EXTINF:') && ++seen > n) break;
    out.push(line);
  }
  return [...out, '#EXT-X-ENDLIST', ''].join('\n');
}

/** The slate's HLS renditions cut to the gap: every playlist keeps the segments covering the same time. */
export function slateHls(slate: HlsSource, gapSec: number): { source: HlsSource; seconds: number } {
  const first = parseMaster(slate.url, slate.master).variants[0];
  const durations = extinfs((first && slate.playlists.get(first.uri)) ?? '');
  const n = segmentsFor(durations, gapSec);
  const seconds = durations.slice(0, n).reduce((s, d) => s + d, 0);
  const playlists = new Map<string, string>();
  for (const [url, text] of slate.playlists) playlists.set(url, cutPlaylist(text, segmentsFor(extinfs(text), seconds)));
  return { source: { url: slate.url, master: slate.master, playlists }, seconds };
}

/** The slate's MPD (ours, one Period) cut to whole segments nearest the gap: the Period's duration says where it ends. */
export function slateMpd(mpd: string, gapSec: number, segmentSec: number): { mpd: string; seconds: number } {
  const total = sourceSeconds(mpd);
  const count = Math.max(1, Math.round(gapSec / segmentSec));
  const seconds = Math.min(total, Math.round(count * segmentSec * 1000) / 1000);
  const iso = formatIsoDuration(seconds);
  const text = mpd
    .replace(/mediaPresentationDuration="[^"]*"/, `mediaPresentationDuration="${iso}"`)
    .replace(
      /<Period\b([^>]*)>/,
      (_m, attrs: string) => `<Period${attrs.replace(/\sduration="[^"]*"/, '')} duration="${iso}">`,
    );
  return { mpd: text, seconds };
}
