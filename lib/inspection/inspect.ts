/**
 * One ID3 inspection (issue 13; spec "ID3 tag inspection" rule 3): reads the manifest, finds its
 * ad pods (./hls-pods.ts, ./dash-pods.ts), fetches every pod segment with bounded concurrency and
 * reads its tags with lib/id3. Memory stays bounded: each of the `concurrency` slots holds one
 * segment's bytes at a time, dropped as soon as its tags are read; media playlists are read one
 * at a time and only their pods are kept.
 * A segment that fails carries an `error`; it never fails the job. The job's own limits (segment
 * cap, deadline) leave the segments not reached with an error saying so, and the outcome's
 * `error` says what was cut.
 */
import {
  dashAdPod,
  dashPeriod,
  dashRendition,
  dashSegment,
  extractTags,
  hlsAdPod,
  hlsPlaylist,
  hlsRendition,
  hlsSegment,
  mpdEventTags,
  segmentIndexAt,
  type AdPod,
  type Id3TagResult,
} from '../id3/index.js';
import { findHlsPods, isMasterPlaylist, masterRenditions, type HlsPod } from './hls-pods.js';
import { findDashPods } from './dash-pods.js';
import { deadline } from '../errors/deadline.js';

export interface InspectSource {
  url: string;
  /** The manifest is a pod manifest: all of it is one pod. */
  wholePod: boolean;
}

export interface InspectDeps {
  fetchText(url: string, signal: AbortSignal): Promise<string>;
  fetchBytes(url: string, signal: AbortSignal): Promise<Buffer>;
  /** Inline-pod rule for playlists without cue tags: is this segment URI (as written) an ad's? */
  isAdUri(uri: string): boolean;
}

export interface InspectLimits {
  concurrency: number;
  maxSegments: number;
  segmentTimeoutMs: number;
}

export const DEFAULT_LIMITS: InspectLimits = { concurrency: 4, maxSegments: 2000, segmentTimeoutMs: 15_000 };

export interface InspectOutcome {
  ad_pods: AdPod[];
  /** Set when limits cut the job short (the pods are still reported). */
  error?: string;
}

export class InspectError extends Error {
  override name = 'InspectError';
}

/** A segment to read and what was read: the result is built from these once all are done. */
interface Slot {
  url: string;
  tags: Id3TagResult[];
  error?: string;
}

const NOT_INSPECTED_CAP = 'not inspected: the job reached its segment cap';
const NOT_INSPECTED_TIME = 'not inspected: the job reached its time limit';

function nameOf(url: string): string {
  const path = new URL(url).pathname;
  return path.slice(path.lastIndexOf('/') + 1) || path;
}

export async function inspect(
  source: InspectSource,
  deps: InspectDeps,
  limits: InspectLimits,
  signal: AbortSignal,
): Promise<InspectOutcome> {
  const text = await deps.fetchText(source.url, signal);
  const head = text.trimStart();
  const slots: Slot[] = [];
  const take = (url: string): Slot => {
    const s: Slot =
      slots.length < limits.maxSegments ? { url, tags: [] } : { url: '', tags: [], error: NOT_INSPECTED_CAP };
    slots.push(s);
    return s;
  };
  let build: () => AdPod[];
  if (head.startsWith('#EXTM3U')) build = await planHls(source, text, deps, signal, take);
  else if (head.startsWith('<') && text.includes('<MPD')) build = planDash(source, text, limits, take);
  else throw new InspectError('the manifest is neither an HLS playlist nor an MPD');

  await readSegments(slots, deps, limits, signal);
  const out: InspectOutcome = { ad_pods: build() };
  const cut = slots.length - limits.maxSegments;
  const late = slots.filter((s) => s.error === NOT_INSPECTED_TIME).length;
  if (cut > 0)
    out.error = `the pods hold ${slots.length} segments; only the first ${limits.maxSegments} were inspected`;
  else if (late > 0) out.error = `the job reached its time limit; ${late} segments were not inspected`;
  return out;
}

/** Reads the pods of every rendition; returns the builder of the HLS result. */
async function planHls(
  source: InspectSource,
  text: string,
  deps: InspectDeps,
  signal: AbortSignal,
  take: (url: string) => Slot,
): Promise<() => AdPod[]> {
  const rules = source.wholePod ? { wholePlaylist: true } : { isAdUri: deps.isAdUri };
  const renditions = isMasterPlaylist(text)
    ? masterRenditions(text, source.url)
    : [{ name: nameOf(source.url), url: source.url }];
  const read: Array<{ name: string; bandwidth?: number; pods: Array<{ pod: HlsPod; slots: Slot[] }>; error?: string }> =
    [];
  for (const r of renditions) {
    let media: string;
    try {
      media = r.url === source.url ? text : await deps.fetchText(r.url, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      read.push({ name: r.name, pods: [], error: (err as Error).message });
      continue;
    }
    const pods = findHlsPods(media, rules).map((pod) => ({
      pod,
      slots: pod.segments.map((s) => take(resolve(s.uri, r.url))),
    }));
    read.push(r.bandwidth === undefined ? { name: r.name, pods } : { name: r.name, bandwidth: r.bandwidth, pods });
  }
  const playlist = nameOf(source.url);
  return () => {
    // Pods are matched across renditions by their order in each playlist; the first rendition
    // that has pod k gives its start time.
    const count = Math.max(0, ...read.map((r) => r.pods.length));
    const out: AdPod[] = [];
    for (let k = 0; k < count; k++) {
      const first = read.find((r) => r.pods[k])!.pods[k]!;
      const rendtions = read
        .filter((r) => r.pods[k])
        .map((r) => {
          const { pod, slots } = r.pods[k]!;
          return hlsRendition(
            r.name,
            pod.segments.map((s, i) => hlsSegment(s.uri, s.sequence, slots[i]!.tags, slots[i]!.error)),
            r.bandwidth,
          );
        });
      out.push(hlsAdPod(k, first.pod.startSec, [hlsPlaylist(playlist, rendtions)], first.pod.startEpochSec));
    }
    return out;
  };
}

/** Plans the segments of every ad Period's Representations; returns the builder of the DASH result. */
function planDash(
  source: InspectSource,
  text: string,
  limits: InspectLimits,
  take: (url: string) => Slot,
): () => AdPod[] {
  const pods = findDashPods(text, source.url, { limit: limits.maxSegments + 1, allAds: source.wholePod });
  const planned = pods.map((pod) => ({
    pod,
    periods: pod.periods.map((p) => ({
      period: p,
      renditions: p.renditions.map((r) => ({ rendition: r, slots: r.segments.map((s) => take(s.url)) })),
    })),
  }));
  return () =>
    planned.map(({ pod, periods }, k) =>
      dashAdPod(
        k,
        pod.startSec,
        periods.map(({ period, renditions }) =>
          dashPeriod(
            period.name,
            renditions.map(({ rendition, slots }) => {
              const events: Id3TagResult[][] = rendition.segments.map(() => []);
              // MPD events (ISO/IEC 23009-1 §5.10.2) go to the segment they fall in (the nearest one outside all).
              if (events.length) {
                const starts = rendition.segments.map((s) => s.startSec);
                const durations = rendition.segments.map((s) => s.durationSec);
                for (const e of period.events) {
                  let i = segmentIndexAt(e.sec, starts, durations);
                  if (i < 0) i = e.sec < starts[0]! ? 0 : events.length - 1;
                  events[i]!.push(...mpdEventTags(e.event));
                }
              }
              return dashRendition(
                rendition.name,
                rendition.segments.map((s, i) =>
                  dashSegment(s.name, [...slots[i]!.tags, ...events[i]!], slots[i]!.error),
                ),
              );
            }),
          ),
        ),
        pod.startEpochSec,
      ),
    );
}

function resolve(uri: string, base: string): string {
  try {
    return new URL(uri, base).toString();
  } catch {
    return '';
  }
}

/** Reads every slot with `concurrency` workers; each holds one segment's bytes at a time. */
async function readSegments(
  slots: Slot[],
  deps: InspectDeps,
  limits: InspectLimits,
  signal: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < slots.length) {
      const slot = slots[next++]!;
      if (slot.error) continue;
      if (signal.aborted) {
        slot.error = NOT_INSPECTED_TIME;
        continue;
      }
      if (!slot.url) {
        slot.error = 'the segment URI cannot be resolved';
        continue;
      }
      const limit = deadline(limits.segmentTimeoutMs, signal);
      try {
        const bytes = await deps.fetchBytes(slot.url, limit.signal);
        slot.tags = extractTags(bytes).tags;
      } catch (err) {
        slot.error = signal.aborted ? NOT_INSPECTED_TIME : (err as Error).message || 'the segment could not be read';
      } finally {
        limit.clear();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limits.concurrency) }, worker));
}
