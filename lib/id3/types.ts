/**
 * Shapes shared by the ID3 / emsg readers (docs/design.md §8). Results never hold a view into the
 * input buffer: strings, numbers and base64 only, so a 2 MB segment can be dropped at once.
 */

/** One ID3v2 frame, decoded as far as its id says (ID3v2.4 structure §4, frames §4.2). */
export interface Id3Frame {
  /** Frame id: four characters (`TXXX`, `PRIV`, `TIT2`…), three for v2.2 tags (`TXX`, `TT2`). */
  id: string;
  /** TXXX / WXXX description, PRIV owner identifier. */
  description?: string;
  /** Text frames: the text (several values joined with `/`); URL frames: the URL. */
  value?: string;
  /** PRIV payload and every frame kept as binary (GEOB, APIC, compressed or encrypted frames…): a copy. */
  data?: Buffer;
}

export interface Id3Tag {
  /** Major version: 2, 3 or 4. */
  version: number;
  frames: Id3Frame[];
}

/** When a tag applies: `presentation_time / timescale` seconds on the media timeline. */
export interface TagTime {
  timescale: number;
  presentation_time: number;
}

/** One frame of one tag as the inspection result reports it (spec "ID3 inspection result"). */
export interface Id3TagResult {
  frame?: string;
  description?: string;
  value: string;
  /** Base64 of the frame's binary payload (PRIV bytes, GEOB…), or of a non-ID3 event's bytes. */
  data?: string;
  metadata: TagTime;
}

export type Container = 'ts' | 'packed-audio' | 'isobmff' | 'unknown';

export interface ExtractResult {
  container: Container;
  tags: Id3TagResult[];
}

/** 90 kHz: the MPEG-2 systems clock every PES PTS and the HLS transportStreamTimestamp use. */
export const PTS_TIMESCALE = 90000;
