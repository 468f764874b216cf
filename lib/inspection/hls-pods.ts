/**
 * Where the ad pods of an HLS stream are (issue 13): the renditions of a master playlist, and the
 * pods of a media playlist. Pure: strings in, plain objects out.
 *
 * A pod is, in order of precedence:
 * 1. the segments from a cue-out to its cue-in, in any dialect `readHlsCues` classifies
 *    (EXT-X-CUE-OUT/-CONT/-IN, DATERANGE SCTE35-OUT/-IN, OATCLS, Adobe, Elemental…). A CONT
 *    outside a pod opens one (the window began inside a break); a pod still open at the end of
 *    the playlist ends at its announced duration when it has one, else at the last segment;
 * 2. when the playlist carries no cue-out or cue-in at all (Google's inline pods): each maximal run
 *    of consecutive segments whose URI is on an ad host (`isAdUri`; discontinuities between the ads
 *    of one pod do not split it);
 * 3. a pod manifest (`wholePlaylist`): every segment of the playlist is one pod.
 */
import { masterUris, readMaster } from '../hls/index.js';
import { readHlsCues, type SegmentCues } from '../scte35/index.js';

export interface PodSegment {
  /** The URI as the playlist writes it. */
  uri: string;
  sequence: number;
  durationSec: number;
}

export interface HlsPod {
  /**
   * Seconds into the presentation as the playlist gives it (the EXTINF sum before the pod's first
   * segment), as DASH's `start_time_sec` is the Period's start in the presentation (issue 25).
   */
  startSec: number;
  /** Wall-clock start (epoch seconds): the first segment's program date-time, when it has one. */
  startEpochSec?: number;
  segments: PodSegment[];
}

export interface PodRules {
  /** Inline-pod rule: whether a segment URI (as written) is an ad's. */
  isAdUri?: (uri: string) => boolean;
  /** The playlist is a pod manifest: all of it is one pod. */
  wholePlaylist?: boolean;
}

export interface RenditionRef {
  /** The URI as the master writes it. */
  name: string;
  /** Resolved against the master's URL. */
  url: string;
  bandwidth?: number;
}

const EPSILON = 1e-3;

/** A master: a variant stream, or a rendition with a URI (lib/hls readMaster). */
export function isMasterPlaylist(text: string): boolean {
  const m = readMaster(text);
  return m.variants.length > 0 || m.renditions.some((r) => r.uri);
}

/**
 * Every variant (EXT-X-STREAM-INF) and rendition with a URI (EXT-X-MEDIA: audio, subtitles,
 * closed captions have none) of a master, variants first, each URL once (lib/hls masterUris).
 * I-frame playlists are left out: they address byte ranges of the variants' own segments.
 */
export function masterRenditions(master: string, masterUrl: string): RenditionRef[] {
  return masterUris(master, masterUrl, { order: 'variants-first' }).map(({ uri, url, bandwidth }) =>
    bandwidth === undefined ? { name: uri, url } : { name: uri, url, bandwidth },
  );
}

function podSegment(s: SegmentCues): PodSegment {
  return { uri: s.uri, sequence: s.media_sequence, durationSec: s.duration };
}

/** The pods of a media playlist, in presentation order. */
export function findHlsPods(playlist: string, rules: PodRules = {}): HlsPod[] {
  const { segments } = readHlsCues(playlist);
  const offsets: number[] = [];
  let t = 0;
  for (const s of segments) {
    offsets.push(t);
    t += s.duration;
  }
  const startOf = (i: number): HlsPod => {
    const pdt = segments[i]!.program_date_time_ms;
    return pdt !== undefined
      ? { startSec: offsets[i]!, startEpochSec: pdt / 1000, segments: [] }
      : { startSec: offsets[i]!, segments: [] };
  };
  if (rules.wholePlaylist) return segments.length ? [{ ...startOf(0), segments: segments.map(podSegment) }] : [];
  const hasCues = segments.some((s) => s.cues.some((c) => c.kind === 'out' || c.kind === 'in'));
  if (!hasCues) return rules.isAdUri ? inlinePods(segments, rules.isAdUri, startOf) : [];

  const pods: HlsPod[] = [];
  let open: HlsPod | undefined;
  let openDuration: number | undefined;
  const close = () => {
    if (open && open.segments.length) pods.push(open);
    open = undefined;
  };
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    // In line order: a cue-in before a cue-out on one segment is back-to-back pods; a cue-out then
    // a cue-in (`CUE-OUT:0`, `CUE-IN`) is an empty break, a splice point without a pod.
    for (const cue of s.cues) {
      if (cue.kind === 'in') close();
      else if (cue.kind === 'out' || (cue.kind === 'cont' && !open)) {
        close();
        open = startOf(i);
        openDuration =
          cue.duration_sec !== undefined && cue.duration_sec > 0
            ? cue.duration_sec - (cue.kind === 'cont' ? (cue.elapsed_sec ?? 0) : 0)
            : undefined;
      }
    }
    if (open) open.segments.push(podSegment(s));
  }
  // No cue-in in the playlist: the announced duration bounds the pod, if there is one.
  if (open) {
    const last: HlsPod = open;
    if (openDuration !== undefined) last.segments = upTo(last.segments, openDuration);
    close();
  }
  return pods;
}

/** The leading segments that fill `durationSec`. */
function upTo(segments: PodSegment[], durationSec: number): PodSegment[] {
  let sum = 0;
  const kept: PodSegment[] = [];
  for (const seg of segments) {
    if (sum >= durationSec - EPSILON) break;
    kept.push(seg);
    sum += seg.durationSec;
  }
  return kept;
}

function inlinePods(
  segments: SegmentCues[],
  isAdUri: (uri: string) => boolean,
  startOf: (i: number) => HlsPod,
): HlsPod[] {
  const pods: HlsPod[] = [];
  let current: HlsPod | undefined;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (!isAdUri(s.uri)) {
      current = undefined;
      continue;
    }
    if (!current) {
      current = startOf(i);
      pods.push(current);
    }
    current.segments.push(podSegment(s));
  }
  return pods;
}
