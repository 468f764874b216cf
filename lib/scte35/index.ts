/** SCTE-35 decoding and HLS cue reading: pure functions, no I/O. */
export { decodeSplice, tryDecodeSplice, type DecodeOptions, type DecodeResult } from './section.js';
export { Scte35Error, type Scte35ErrorCode } from './errors.js';
export { crc32Mpeg2 } from './crc.js';
export type { Scte35Payload } from './encoding.js';
export type * from './types.js';
export {
  readHlsCues,
  type HlsCue,
  type HlsCueReading,
  type SegmentCues,
  type CueDialect,
  type CueKind,
} from './hls-cues.js';
export { classifySection, type Classified } from './classify.js';
