/**
 * ID3 in packed audio (HLS RFC 8216 §3.4; "HTTP Live Streaming: Timed Metadata" for the PRIV
 * owner): an AAC ADTS / MP3 / AC-3 elementary stream starts with an ID3 tag whose PRIV
 * `com.apple.streaming.transportStreamTimestamp` holds 8 bytes, the low 33 bits the 90 kHz PTS of
 * the first audio frame. Later tags may sit between frames: their time is that PTS plus the ADTS
 * frames before them (1024 samples per raw data block); across MP3 / AC-3 frames, which are not
 * walked, the last known time.
 */
import { id3TagLength, parseId3Tag } from './tag.js';
import { tagResults } from './tag-result.js';
import { PTS_TIMESCALE, type Id3Tag, type Id3TagResult } from './types.js';

export const TS_TIMESTAMP_OWNER = 'com.apple.streaming.transportStreamTimestamp';

const ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** The 33-bit PTS of a transportStreamTimestamp PRIV in the tag, if it has one. */
export function transportStreamTimestamp(tag: Id3Tag): number | undefined {
  for (const f of tag.frames) {
    if (f.id === 'PRIV' && f.description === TS_TIMESTAMP_OWNER && f.data && f.data.length >= 8) {
      return (f.data.readUInt8(3) % 2) * 2 ** 32 + f.data.readUInt32BE(4);
    }
  }
  return undefined;
}

/** Samples of the ADTS frame at `p` and its length, when one is there (ISO/IEC 13818-7 §6.2). */
function adtsFrame(buf: Buffer, p: number): { length: number; samples: number; rate: number } | undefined {
  if (p + 7 > buf.length || buf[p] !== 0xff || (buf[p + 1]! & 0xf6) !== 0xf0) return undefined;
  const rate = ADTS_RATES[(buf[p + 2]! >> 2) & 0x0f];
  const length = ((buf[p + 3]! & 0x03) << 11) | (buf[p + 4]! << 3) | (buf[p + 5]! >> 5);
  if (!rate || length < 7) return undefined;
  return { length, samples: 1024 * ((buf[p + 6]! & 0x03) + 1), rate };
}

export function packedAudioTags(buf: Buffer): Id3TagResult[] {
  const out: Id3TagResult[] = [];
  let base: number | undefined;
  let ticks = 0; // 90 kHz ticks of audio since `base`
  let held: Id3Tag[] = []; // tags met before any timestamp: they take the first one found
  const emit = (tags: Id3Tag[], at = (base ?? 0) + ticks) =>
    out.push(...tagResults(tags, { timescale: PTS_TIMESCALE, presentation_time: Math.round(at) }));
  for (let p = 0; p < buf.length;) {
    const len = id3TagLength(buf, p);
    if (len) {
      const tag = parseId3Tag(buf, p)!;
      const ts = transportStreamTimestamp(tag);
      if (ts !== undefined) {
        base = ts;
        ticks = 0;
        emit(held, ts);
        held = [];
      }
      if (base === undefined) held.push(tag);
      else emit([tag]);
      p += len;
      continue;
    }
    const adts = adtsFrame(buf, p);
    if (adts) {
      ticks += (adts.samples * PTS_TIMESCALE) / adts.rate;
      p += adts.length;
      continue;
    }
    const next = buf.indexOf('ID3', p + 1, 'latin1');
    if (next < 0) break;
    p = next;
  }
  emit(held, 0); // never a timestamp: time unknown, reported as 0
  return out;
}
