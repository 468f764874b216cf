export {
  mapUriAttribute,
  attribute,
  tagName,
  tagValue,
  normalizeLineEnds,
  numberedLines,
  playlistLines,
  targetDuration,
} from './lines.js';
export { UriRewriter, isAbsolute, resolveUri, uriResolver, type UriRules } from './uris.js';
export { PlaylistRewriter, rewritePlaylist, joinLines, type PlaylistKind } from './rewrite.js';
export {
  parseMedia,
  readMedia,
  programDateTimes,
  segmentTimes,
  type MediaPlaylist,
  type Segment,
  type SequenceAnchor,
} from './media.js';
export { trimLiveWindow, trimMedia, type TrimOptions } from './trim.js';
export {
  applyBreak,
  applyBreakText,
  applyBreakToMedia,
  type BreakWindow,
  type BreakResult,
  type SourceCues,
  type SqueezedUri,
} from './breaks.js';
export { trimText, trimThenRewrite } from './trim-text.js';
export { splitLines } from './rewrite.js';
export { textPathStats, textPathSnapshot, type TextPathStats } from './stats.js';
export {
  mapMasterUris,
  isMediaPlaylist,
  singleVariantMaster,
  readMaster,
  masterUris,
  type MappedMaster,
  type MasterRead,
  type MasterVariant,
  type MasterRendition,
  type MasterUri,
  type MasterUriOptions,
} from './master.js';
