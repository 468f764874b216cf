/**
 * HLS Interstitials (RFC 8216bis Appendix D; `?interstitials=1`), pure: the content's media
 * playlists are served as the content has them (every URI made absolute: they are served from
 * elsewhere) and each pod becomes one `EXT-X-DATERANGE` of `CLASS="com.apple.hls.interstitial"`
 * in every media playlist, with the same attributes everywhere, whose `X-ASSET-LIST` names a JSON
 * list of the pod's ads (`{"ASSETS":[{"URI","DURATION"}]}`); the player (AVPlayer, hls.js ≥ 1.6)
 * plays them itself. A pod is placed where the inline stitcher would splice it (the first video
 * segment boundary at or after its cue point), so both modes report the same content offsets.
 *
 * A DATERANGE needs an `EXT-X-PROGRAM-DATE-TIME` in its playlist (RFC 8216bis §4.4.5.1): dates come
 * from the content's video playlist when it has them, else from a fixed epoch (the stitch's
 * creation time) written as a PROGRAM-DATE-TIME at the first segment of every playlist without one.
 * Attributes, as hls.js reads them (src/loader/interstitial-event.ts):
 * - `X-RESUME-OFFSET=0`: the ads are inserted, so the content resumes where it paused (absent, a
 *   player resumes the ad's duration later, which is for live, where the ad replaces content);
 * - `X-RESTRICT="SKIP,JUMP"`: no skipping an ad, no seeking past a break without playing it;
 * - `CUE="PRE"` / `CUE="POST"` for pre- and post-rolls (a point at 0 or at the end otherwise
 *   depends on the player's start position and end-of-stream handling);
 * - `PLANNED-DURATION`: the pod's ads, so a player lays out its timeline before it loads the list
 *   (hls.js takes DURATION, else PLANNED-DURATION). Not DURATION: that is the range the date range
 *   covers on the content's own timeline, which an inserted ad does not take, and date ranges of
 *   one CLASS must not overlap (RFC 8216 §4.3.2.7; hls-parser refuses a playlist where they do), as
 *   two breaks closer together than the first one's length would.
 */
import { HEADER_TAGS, programDateTimes } from '../../hls/media.js';
import { mapUriAttribute, playlistLines, tagName } from '../../hls/index.js';
import { StitchError } from '../errors.js';
import { uriResolver } from './master.js';
import type { SourceMedia } from './splice.js';
import {
  AdReader,
  boundaries,
  boundaryFor,
  durationOf,
  readContent,
  writeMaster,
  type HlsPodInput,
  type HlsSource,
  type StitchedAd,
  type StitchedPod,
} from './stitch.js';

export const INTERSTITIAL_CLASS = 'com.apple.hls.interstitial';

export interface InterstitialOptions {
  /** Date of the content's first segment when it carries no PROGRAM-DATE-TIME (ms since 1970). */
  epochMs: number;
  /** The asset list URL of the n-th pod (1-based), as the cache serves it. */
  assetListUrl: (n: number) => string;
  /** The asset list's file name in the session (`assets/{n}.json`). */
  assetListFile: (n: number) => string;
  maxSegments?: number;
}

export interface InterstitialHls {
  master: string;
  playlists: Map<string, string>;
  /** Asset list JSON by file name. */
  assetLists: Map<string, string>;
  /** Pods on the content timeline: `start` = `contentOffset`; ads follow one another from there. */
  pods: StitchedPod[];
  contentDuration: number;
  skipped: Array<{ podId: string; adId: string; reason: string }>;
}

const SAFE_ID = /^[A-Za-z0-9._:~+-]{1,64}$/;
const round3 = (n: number) => Math.round(n * 1000) / 1000;
const iso = (ms: number) => new Date(Math.round(ms)).toISOString();

/**
 * The content playlist as it is, URIs made absolute, a PROGRAM-DATE-TIME before the first segment
 * when it has none, and each DATERANGE before this playlist's segment at its pod's time (a post-roll's
 * before the last segment). Where it stands does not change what a DATERANGE means; one per
 * segment keeps it readable by parsers that keep one per segment (hls-parser), so a DATERANGE that
 * would share a segment moves to the nearest free one before it.
 */
function annotate(
  media: SourceMedia,
  text: string,
  epochMs: number,
  dateranges: Array<{ startSec: number; line: string }>,
): string {
  const resolve = uriResolver(media.url);
  const lines = playlistLines(text);
  const bounds = boundaries(media);
  const segments = bounds.length - 1;
  const before = new Map<number, string[]>();
  for (const d of dateranges) {
    let slot = Math.min(boundaryFor(bounds, d.startSec), segments - 1);
    while (slot > 0 && before.has(slot)) slot--;
    before.set(slot, [...(before.get(slot) ?? []), d.line]);
  }
  const out: string[] = [];
  let segment = 0;
  let opened = false;
  for (const line of lines) {
    const isUri = line.charCodeAt(0) !== 35;
    if (!opened && (isUri || !HEADER_TAGS.has(tagName(line)))) {
      // The first line of a segment.
      if (segment === 0 && !lines.some((l) => l.startsWith('#EXT-X-PROGRAM-DATE-TIME:')))
        out.push(`#EXT-X-PROGRAM-DATE-TIME:${iso(epochMs)}`);
      out.push(...(before.get(segment) ?? []));
      opened = true;
    }
    out.push(isUri ? resolve(line) : line.includes('URI="') ? mapUriAttribute(line, resolve) : line);
    if (isUri) {
      segment++;
      opened = false;
    }
  }
  return out.join('\n') + '\n';
}

/** The content with each pod as an interstitial. Throws StitchError when the content cannot be used. */
export function interstitialHls(content: HlsSource, pods: HlsPodInput[], opts: InterstitialOptions): InterstitialHls {
  const maxSegments = opts.maxSegments ?? 100_000;
  const { master, outputs, video, bounds, contentDuration } = readContent(content, maxSegments);

  // Dates of the video boundaries: the content's own, else the epoch's.
  const segs = video.playlist.segments;
  const dates = programDateTimes(segs);
  const tagged = dates.findIndex((d) => d !== undefined);
  const epochMs = tagged === -1 ? opts.epochMs : dates[tagged]! - bounds[tagged]! * 1000;
  const dateAt = (i: number) => {
    if (i < segs.length && dates[i] !== undefined) return dates[i]!;
    if (i > 0 && dates[i - 1] !== undefined) return dates[i - 1]! + segs[i - 1]!.duration * 1000;
    return epochMs + bounds[i]! * 1000;
  };

  // Each ad's duration from its first variant; an ad whose HLS cannot be read is left out.
  const reader = new AdReader(maxSegments);
  const skipped: InterstitialHls['skipped'] = [];
  const laid: Array<{ at: number; ids: string[]; ads: Array<{ id: string; uri: string; duration: number }> }> = [];
  for (const pod of [...pods].sort((a, b) => a.offsetSec - b.offsetSec)) {
    const at = boundaryFor(bounds, pod.offsetSec);
    const ads: Array<{ id: string; uri: string; duration: number }> = [];
    for (const ad of pod.ads) {
      try {
        const first = reader.master(ad.source).variants[0]!;
        ads.push({ id: ad.id, uri: ad.source.url, duration: durationOf(reader.playlist(ad.source, first.uri)) });
      } catch (err) {
        if (!(err instanceof StitchError)) throw err;
        skipped.push({ podId: pod.id, adId: ad.id, reason: err.message });
      }
    }
    if (!ads.length) continue;
    const last = laid[laid.length - 1];
    if (last && last.at === at) {
      last.ids.push(pod.id);
      last.ads.push(...ads);
    } else laid.push({ at, ids: [pod.id], ads });
  }

  const assetLists = new Map<string, string>();
  const dateranges: Array<{ startSec: number; line: string }> = [];
  const stitchedPods: StitchedPod[] = laid.map((e, i) => {
    const n = i + 1;
    const offset = bounds[e.at]!;
    let t = offset;
    const ads: StitchedAd[] = e.ads.map((ad) => {
      const out = { id: ad.id, start: t, duration: ad.duration };
      t += ad.duration;
      return out;
    });
    const duration = t - offset;
    assetLists.set(
      opts.assetListFile(n),
      JSON.stringify({ ASSETS: e.ads.map((ad) => ({ URI: ad.uri, DURATION: round3(ad.duration) })) }),
    );
    // The ID is a quoted string shared by every playlist: the break's id when it is plain, else its number.
    const id = e.ids.join('+');
    const attrs = [
      `ID="${SAFE_ID.test(id) ? id : `break-${n}`}"`,
      `CLASS="${INTERSTITIAL_CLASS}"`,
      `START-DATE="${iso(dateAt(e.at))}"`,
      `PLANNED-DURATION=${round3(duration)}`,
      `X-ASSET-LIST="${opts.assetListUrl(n)}"`,
      'X-RESUME-OFFSET=0',
      'X-RESTRICT="SKIP,JUMP"',
    ];
    if (e.at === 0) attrs.push('CUE="PRE"');
    else if (e.at === bounds.length - 1) attrs.push('CUE="POST"');
    dateranges.push({ startSec: offset, line: `#EXT-X-DATERANGE:${attrs.join(',')}` });
    return { ids: e.ids, contentOffset: offset, start: offset, duration, ads };
  });

  const playlists = new Map<string, string>();
  for (const o of outputs) {
    const text = content.playlists.get(o.content.url) ?? content.master;
    playlists.set(o.name, annotate(o.content, text, epochMs, dateranges));
  }
  return {
    master: writeMaster(master, outputs, new Map()),
    playlists,
    assetLists,
    pods: stitchedPods,
    contentDuration,
    skipped,
  };
}
