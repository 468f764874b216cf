/**
 * The content's ladder profile (issue 26): what an ad must look like to be stitched into the
 * content — container, video codec family, each rung's resolution and bandwidth, segment length,
 * audio — read from the manifests the stitch already fetched. Pure. Two contents with the same
 * profile share one conditioning of a creative, so the profile holds only what the renditions
 * depend on (no URL), and its key is a hash of it.
 *
 * HLS does not declare the audio sample rate: 48 kHz is assumed (docs/decisions.md, issue 26).
 */
import { createHash } from 'node:crypto';
import { attribute, readMedia, targetDuration } from '../hls/index.js';
import { attrOf, childElement, childElements } from '../xml/index.js';
import { readMpd } from '../dash/index.js';
import { parseMaster } from './hls/master.js';
import { videoFamily } from './hls/match.js';
import type { HlsSource } from './hls/stitch.js';

const isMap = (line: string) => line.startsWith('#EXT-X-MAP:');

export interface Rung {
  width: number;
  height: number;
  /** bits per second */
  bandwidth: number;
  /** The content rung's CODECS (HLS) or Representation@codecs (DASH), written on the ad's rung. */
  codecs: string;
}

export interface LadderProfile {
  protocol: 'hls' | 'dash';
  container: 'ts' | 'fmp4';
  video: 'avc' | 'hevc';
  /** Frames per second when the content declares it. */
  fps?: number;
  rungs: Rung[];
  /** Target segment length: every ad segment stays at or under the content's target duration. */
  segmentSec: number;
  /** Null: the content has no audio. `demuxed`: audio in its own playlist / AdaptationSet. */
  audio: { codecs: string; channels: number; sampleRate: number; demuxed: boolean; language?: string } | null;
}

const DEFAULT_SAMPLE_RATE = 48_000;
const MAX_RUNGS = 8;

/** A short stable key of a profile (the cache key's second half). */
export function profileKey(p: LadderProfile): string {
  return createHash('sha256').update(JSON.stringify(p)).digest('hex').slice(0, 20);
}

function family(codecs: string[]): LadderProfile['video'] | undefined {
  const f = videoFamily(codecs);
  return f === 'avc' || f === 'hevc' ? f : f === '' ? 'avc' : undefined;
}

/** The profile of an HLS content (its master and media playlists); undefined when its video cannot be conditioned to (AV1, VP9, Dolby Vision). */
export function hlsProfile(content: HlsSource): LadderProfile | undefined {
  const master = parseMaster(content.url, content.master);
  const variants = master.variants.filter((v) => v.height > 0 && v.width > 0);
  const first = master.variants[0];
  if (!first) return undefined;
  const video = family(first.codecs);
  if (!video) return undefined;
  const seen = new Set<string>();
  const rungs: Rung[] = [];
  for (const v of variants.length ? variants : [first]) {
    const k = `${v.width}x${v.height}@${v.bandwidth}`;
    if (seen.has(k) || rungs.length >= MAX_RUNGS) continue;
    seen.add(k);
    rungs.push({ width: v.width || 1280, height: v.height || 720, bandwidth: v.bandwidth, codecs: v.codecs.join(',') });
  }
  const text = content.playlists.get(first.uri) ?? '';
  const media = readMedia(text);
  const target = targetDuration(text) ?? 6;
  const firstSeg = media.segments.find((seg) => seg.duration > 0)?.duration ?? target;
  // An EXT-X-MAP anywhere (even after the segments it would apply to) says the media is fMP4.
  const container = media.segments.some((seg) => seg.map !== undefined) || media.tail.some(isMap) ? 'fmp4' : 'ts';
  const fps = Number(attribute(first.attrs, 'FRAME-RATE')) || undefined;
  const audioRendition = master.renditions.find(
    (r) => r.type === 'AUDIO' && r.uri && (!first.audio || r.groupId === first.audio),
  );
  const audioCodec = first.codecs.find((c) => /^(mp4a|ac-3|ec-3)/i.test(c));
  const audio =
    audioRendition || audioCodec
      ? {
          codecs: audioCodec ?? 'mp4a.40.2',
          channels: Number.parseInt(audioRendition?.channels ?? '2', 10) || 2,
          sampleRate: DEFAULT_SAMPLE_RATE,
          demuxed: audioRendition !== undefined,
          ...(audioRendition?.language ? { language: audioRendition.language } : {}),
        }
      : null;
  return {
    protocol: 'hls',
    container,
    video,
    ...(fps ? { fps } : {}),
    rungs,
    segmentSec: segmentLength(firstSeg, target),
    audio,
  };
}

/** The profile of a static MPD's first Period; undefined when it has no video we can encode. */
export function dashProfile(mpd: string): LadderProfile | undefined {
  const root = readMpd(mpd)?.root;
  if (!root) return undefined;
  const period = childElement(root, 'Period');
  if (!period) return undefined;
  const rungs: Rung[] = [];
  let video: LadderProfile['video'] | undefined;
  let fps: number | undefined;
  let segmentSec: number | undefined;
  let audio: LadderProfile['audio'] = null;
  for (const set of childElements(period, 'AdaptationSet')) {
    const type = attrOf(set, 'contentType') ?? attrOf(set, 'mimeType')?.split('/')[0];
    const template = childElement(set, 'SegmentTemplate');
    for (const rep of childElements(set, 'Representation')) {
      const kind = type ?? attrOf(rep, 'mimeType')?.split('/')[0];
      const codecs = attrOf(rep, 'codecs') ?? attrOf(set, 'codecs') ?? '';
      segmentSec ??= templateSeconds(childElement(rep, 'SegmentTemplate') ?? template);
      if (kind === 'video' && rungs.length < MAX_RUNGS) {
        video ??= family([codecs]);
        fps ??= frameRate(attrOf(rep, 'frameRate') ?? attrOf(set, 'frameRate'));
        rungs.push({
          width: Number(attrOf(rep, 'width') ?? attrOf(set, 'width')) || 1280,
          height: Number(attrOf(rep, 'height') ?? attrOf(set, 'height')) || 720,
          bandwidth: Number(attrOf(rep, 'bandwidth')) || 2_000_000,
          codecs,
        });
      } else if (kind === 'audio' && !audio) {
        const channels =
          childElement(rep, 'AudioChannelConfiguration') ?? childElement(set, 'AudioChannelConfiguration');
        const lang = attrOf(set, 'lang');
        audio = {
          codecs: codecs || 'mp4a.40.2',
          channels: Number(channels ? attrOf(channels, 'value') : 2) || 2,
          sampleRate:
            Number(attrOf(rep, 'audioSamplingRate') ?? attrOf(set, 'audioSamplingRate')) || DEFAULT_SAMPLE_RATE,
          demuxed: true,
          ...(lang ? { language: lang } : {}),
        };
      }
    }
  }
  if (!video || !rungs.length) return undefined;
  return {
    protocol: 'dash',
    container: 'fmp4',
    video,
    ...(fps ? { fps } : {}),
    rungs,
    segmentSec: segmentLength(segmentSec ?? 4, Infinity),
    audio,
  };
}

/** The content's segment length, whole milliseconds, 1 s at least, never above the target duration. */
function segmentLength(sec: number, target: number): number {
  return Math.max(1, Math.min(target, Math.round(sec * 1000) / 1000));
}

function templateSeconds(t: ReturnType<typeof childElement>): number | undefined {
  if (!t) return undefined;
  const scale = Number(attrOf(t, 'timescale') ?? 1) || 1;
  const d = Number(attrOf(t, 'duration'));
  if (d > 0) return d / scale;
  const s = childElement(childElement(t, 'SegmentTimeline') ?? t, 'S');
  const sd = s ? Number(attrOf(s, 'd')) : NaN;
  return sd > 0 ? sd / scale : undefined;
}

function frameRate(v: string | undefined): number | undefined {
  if (!v) return undefined;
  const [n, d] = v.split('/').map(Number);
  const r = d ? n! / d : n!;
  return r > 0 && r < 300 ? Math.round(r * 1000) / 1000 : undefined;
}

/**
 * An ad's conditioned renditions for a profile, as the conditioning service answers the stitcher:
 * ready (the manifests, read from the object store, at their public URL), or not this time —
 * queued or running (`pending`), failed and waiting out its back-off (`failed`), or over a cap
 * (`refused`) — with the job it names in the warning.
 */
export type ConditionedAd =
  | { state: 'ready'; key: string; url: string; hls?: HlsSource; mpd?: string }
  | { state: 'pending' | 'failed' | 'refused'; job?: string; detail: string };
