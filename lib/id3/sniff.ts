/**
 * Which container a segment is, by its bytes alone (never its name): MPEG-TS (ISO/IEC 13818-1
 * §2.4.3.2, sync byte 0x47 every 188 bytes, after a possible leading offset), packed audio (a
 * leading ID3 tag, ADTS, MPEG audio or AC-3 sync), ISO BMFF (a known top-level box type).
 */
import { id3TagLength } from './tag.js';
import type { Container } from './types.js';

const TS_PACKET = 188;
const BMFF_TOP = new Set(['ftyp', 'styp', 'moof', 'emsg', 'sidx', 'moov', 'prft', 'free', 'skip']);

function isTsAt(buf: Buffer, o: number): boolean {
  if (buf[o] !== 0x47 || o + TS_PACKET > buf.length) return false;
  // Three syncs in a row when the buffer is that long; a lone packet counts when it is all there is.
  let seen = 0;
  for (let p = o; p < buf.length && seen < 3; p += TS_PACKET, seen++) if (buf[p] !== 0x47) return false;
  return seen >= 3 || o + seen * TS_PACKET >= buf.length;
}

function isAudioSync(buf: Buffer, o: number): boolean {
  if (o + 2 > buf.length) return false;
  const a = buf[o]!;
  const b = buf[o + 1]!;
  if (a === 0x0b && b === 0x77) return true; // AC-3 / E-AC-3 syncword (ATSC A/52 §5.3)
  // ADTS (layer 00) and MPEG audio (layer ≠ 00) share the 0xFFE/0xFFF frame sync.
  return a === 0xff && (b & 0xe0) === 0xe0 && ((b & 0x06) === 0 ? (b & 0xf0) === 0xf0 : true);
}

export function sniffContainer(buf: Buffer): Container {
  if (buf.length >= 8 && BMFF_TOP.has(buf.toString('latin1', 4, 8))) return 'isobmff';
  const ts = Math.min(TS_PACKET, buf.length);
  for (let o = 0; o < ts; o++) if (isTsAt(buf, o)) return 'ts';
  if (id3TagLength(buf, 0) || isAudioSync(buf, 0)) return 'packed-audio';
  return 'unknown';
}
