/** ID3 timed metadata from media segments and MPDs (docs/design.md §8): pure, on Buffers and strings. */
export { extractTags, type ExtractOptions } from './extract.js';
export { sniffContainer } from './sniff.js';
export { parseId3Tag, parseId3Tags, id3TagLength } from './tag.js';
export { tagResults, frameResult } from './tag-result.js';
export { tsTimedMetadata } from './ts.js';
export { packedAudioTags, transportStreamTimestamp, TS_TIMESTAMP_OWNER } from './packed-audio.js';
export { emsgTags, parseEmsg, ID3_EMSG_SCHEMES, type Emsg, type IsobmffOptions } from './isobmff.js';
export { mpdEvents, mpdEventsOf, mpdEventTags, segmentIndexAt, type MpdEvent } from './mpd-events.js';
export * from './result.js';
export {
  PTS_TIMESCALE,
  type Container,
  type ExtractResult,
  type Id3Frame,
  type Id3Tag,
  type Id3TagResult,
  type TagTime,
} from './types.js';
