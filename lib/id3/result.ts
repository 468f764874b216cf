/**
 * The ad-pod entries of an ID3 inspection result (spec "ID3 inspection result"). The DASH form
 * is exactly the spec's: periods → `rendtions` (the interface's spelling, kept) → segments →
 * tags of `value` and `metadata {timescale, presentation_time}`. The HLS form is not shown by
 * the spec; ours mirrors it: playlists → `rendtions` (with bandwidth) → segments with their media
 * sequence number and, when a segment could not be read, an error instead of tags.
 */
import type { Id3TagResult, TagTime } from './types.js';

/** A tag as the result carries it; `frame`, `description` and `data` only where the source has them. */
export interface ResultTag {
  value: string;
  metadata: TagTime;
  frame?: string;
  description?: string;
  data?: string;
}

export interface DashSegment {
  name: string;
  tags: ResultTag[];
  /** Why the segment could not be read (its tags are then empty), as on the HLS form. */
  error?: string;
}
export interface DashRendition {
  name: string;
  segments: DashSegment[];
}
export interface DashPeriod {
  name: string;
  rendtions: DashRendition[];
}
export interface DashAdPod {
  break: number;
  /** Seconds into the presentation, in both forms (issue 25). */
  start_time_sec: number;
  /** The same start on the wall clock (epoch seconds), when the manifest says it (PDT; a live MPD's availabilityStartTime). */
  start_time_epoch_sec?: number;
  dash: DashPeriod[];
}

export interface HlsSegment {
  name: string;
  sequence: number;
  tags: ResultTag[];
  error?: string;
}
export interface HlsRendition {
  name: string;
  bandwidth?: number;
  segments: HlsSegment[];
}
export interface HlsPlaylist {
  name: string;
  rendtions: HlsRendition[];
}
export interface HlsAdPod {
  break: number;
  /** Seconds into the presentation, in both forms (issue 25). */
  start_time_sec: number;
  /** The same start on the wall clock (epoch seconds), when the manifest says it (PDT; a live MPD's availabilityStartTime). */
  start_time_epoch_sec?: number;
  hls: HlsPlaylist[];
}

export type AdPod = DashAdPod | HlsAdPod;

/** The result form of an extracted tag: a fresh object, fields in the spec's order, no undefined keys. */
export function resultTag(t: Id3TagResult): ResultTag {
  const out: ResultTag = {
    value: t.value,
    metadata: { timescale: t.metadata.timescale, presentation_time: t.metadata.presentation_time },
  };
  if (t.frame !== undefined) out.frame = t.frame;
  if (t.description !== undefined) out.description = t.description;
  if (t.data !== undefined) out.data = t.data;
  return out;
}

export function dashSegment(name: string, tags: readonly Id3TagResult[], error?: string): DashSegment {
  const out: DashSegment = { name, tags: tags.map(resultTag) };
  if (error !== undefined) out.error = error;
  return out;
}
export function dashRendition(name: string, segments: DashSegment[]): DashRendition {
  return { name, segments };
}
export function dashPeriod(name: string, rendtions: DashRendition[]): DashPeriod {
  return { name, rendtions };
}
export function dashAdPod(
  breakIndex: number,
  startTimeSec: number,
  periods: DashPeriod[],
  startEpochSec?: number,
): DashAdPod {
  return startEpochSec === undefined
    ? { break: breakIndex, start_time_sec: startTimeSec, dash: periods }
    : { break: breakIndex, start_time_sec: startTimeSec, start_time_epoch_sec: startEpochSec, dash: periods };
}

export function hlsSegment(name: string, sequence: number, tags: readonly Id3TagResult[], error?: string): HlsSegment {
  const out: HlsSegment = { name, sequence, tags: tags.map(resultTag) };
  if (error !== undefined) out.error = error;
  return out;
}
export function hlsRendition(name: string, segments: HlsSegment[], bandwidth?: number): HlsRendition {
  return bandwidth === undefined ? { name, segments } : { name, bandwidth, segments };
}
export function hlsPlaylist(name: string, rendtions: HlsRendition[]): HlsPlaylist {
  return { name, rendtions };
}
export function hlsAdPod(
  breakIndex: number,
  startTimeSec: number,
  playlists: HlsPlaylist[],
  startEpochSec?: number,
): HlsAdPod {
  return startEpochSec === undefined
    ? { break: breakIndex, start_time_sec: startTimeSec, hls: playlists }
    : { break: breakIndex, start_time_sec: startTimeSec, start_time_epoch_sec: startEpochSec, hls: playlists };
}
