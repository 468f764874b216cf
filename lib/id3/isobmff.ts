/**
 * ID3 in fMP4 / CMAF: `emsg` boxes (ISO/IEC 23009-1 §5.10.3.3; AOM "Carriage of ID3 Timed
 * Metadata in CMAF" §3, scheme `https://aomedia.org/emsg/ID3`, and Apple's older
 * `https://developer.apple.com/streaming/emsg-id3`) whose message_data is a complete ID3 tag.
 * Every top-level box is walked (ISO/IEC 14496-12 §4.2: 64-bit largesize, size 0 = to the end)
 * because an emsg may sit between fragments. Our own reader: mux.js's parseEmsgBox ignores the
 * view's byteOffset (docs/design.md §8).
 */
import { parseId3Tags } from './tag.js';
import { tagResults } from './tag-result.js';
import type { Id3TagResult } from './types.js';

export const ID3_EMSG_SCHEMES = ['https://aomedia.org/emsg/ID3', 'https://developer.apple.com/streaming/emsg-id3'];

export interface Box {
  type: string;
  /** Payload bounds (after the header), clamped to the buffer. */
  start: number;
  end: number;
}

/** The boxes laid one after another in `buf[from, to)`; stops at the first impossible header. */
export function boxes(buf: Buffer, from = 0, to = buf.length): Box[] {
  const out: Box[] = [];
  for (let p = from; p + 8 <= to;) {
    let size = buf.readUInt32BE(p);
    let header = 8;
    if (size === 1) {
      if (p + 16 > to) break;
      const large = buf.readBigUInt64BE(p + 8);
      size = large > BigInt(to - p) ? to - p : Number(large);
      header = 16;
    } else if (size === 0) size = to - p;
    if (size < header) break;
    const end = Math.min(to, p + size);
    out.push({ type: buf.toString('latin1', p + 4, p + 8), start: p + header, end });
    p += size;
  }
  return out;
}

export interface Emsg {
  version: number;
  schemeIdUri: string;
  value: string;
  timescale: number;
  /** v0: presentation_time_delta; v1: presentation_time. */
  time: number;
  eventDuration: number;
  id: number;
  messageData: Buffer;
}

function cstring(buf: Buffer, p: number, end: number): [string, number] | undefined {
  const nul = buf.indexOf(0, p);
  if (nul < 0 || nul >= end) return undefined;
  return [buf.toString('utf8', p, nul), nul + 1];
}

/** Parse one emsg payload (FullBox: version, flags, then the v0 or v1 fields). */
export function parseEmsg(buf: Buffer, start: number, end: number): Emsg | undefined {
  if (start + 4 > end) return undefined;
  const version = buf[start]!;
  let p = start + 4;
  if (version === 0) {
    const scheme = cstring(buf, p, end);
    if (!scheme) return undefined;
    const value = cstring(buf, scheme[1], end);
    if (!value) return undefined;
    p = value[1];
    if (p + 16 > end) return undefined;
    return {
      version,
      schemeIdUri: scheme[0],
      value: value[0],
      timescale: buf.readUInt32BE(p),
      time: buf.readUInt32BE(p + 4),
      eventDuration: buf.readUInt32BE(p + 8),
      id: buf.readUInt32BE(p + 12),
      messageData: buf.subarray(p + 16, end),
    };
  }
  if (version === 1) {
    if (p + 20 > end) return undefined;
    const timescale = buf.readUInt32BE(p);
    const time = Number(buf.readBigUInt64BE(p + 4));
    const eventDuration = buf.readUInt32BE(p + 12);
    const id = buf.readUInt32BE(p + 16);
    const scheme = cstring(buf, p + 20, end);
    if (!scheme) return undefined;
    const value = cstring(buf, scheme[1], end);
    if (!value) return undefined;
    return {
      version,
      schemeIdUri: scheme[0],
      value: value[0],
      timescale,
      time,
      eventDuration,
      id,
      messageData: buf.subarray(value[1], end),
    };
  }
  return undefined;
}

/** baseMediaDecodeTime of the first traf's tfdt in a moof payload (ISO/IEC 14496-12 §8.8.12). */
export function moofDecodeTime(buf: Buffer, moof: Box): number | undefined {
  for (const traf of boxes(buf, moof.start, moof.end)) {
    if (traf.type !== 'traf') continue;
    for (const b of boxes(buf, traf.start, traf.end)) {
      if (b.type !== 'tfdt') continue;
      if (buf[b.start] === 1) return b.start + 12 <= b.end ? Number(buf.readBigUInt64BE(b.start + 4)) : undefined;
      return b.start + 8 <= b.end ? buf.readUInt32BE(b.start + 4) : undefined;
    }
  }
  return undefined;
}

export interface IsobmffOptions {
  /** The track's timescale (mdhd), when known and not the emsg's: tfdt is rescaled to the emsg's. */
  trackTimescale?: number;
}

/**
 * ID3 tags of every ID3-scheme emsg at the top level. v1 carries its presentation time; v0 a
 * delta from the earliest presentation time of the segment, taken as the following moof's tfdt
 * (the delta alone when no moof follows).
 */
export function emsgTags(buf: Buffer, opts: IsobmffOptions = {}): Id3TagResult[] {
  const top = boxes(buf);
  const out: Id3TagResult[] = [];
  top.forEach((box, i) => {
    if (box.type !== 'emsg') return;
    const e = parseEmsg(buf, box.start, box.end);
    if (!e || !ID3_EMSG_SCHEMES.includes(e.schemeIdUri)) return;
    let time = e.time;
    if (e.version === 0) {
      const moof = top.slice(i + 1).find((b) => b.type === 'moof');
      const tfdt = moof && moofDecodeTime(buf, moof);
      if (tfdt !== undefined) {
        const scale = opts.trackTimescale && e.timescale ? e.timescale / opts.trackTimescale : 1;
        time += Math.round(tfdt * scale);
      }
    }
    out.push(...tagResults(parseId3Tags(e.messageData), { timescale: e.timescale, presentation_time: time }));
  });
  return out;
}
