export { mapUriAttribute, attribute, tagName, tagValue } from './lines.js';
export { UriRewriter, isAbsolute, type UriRules } from './uris.js';
export { PlaylistRewriter, rewritePlaylist, joinLines, type PlaylistKind } from './rewrite.js';
export { parseMedia, programDateTimes, type MediaPlaylist, type Segment } from './media.js';
export { trimLiveWindow, trimMedia, type TrimOptions } from './trim.js';
export { applyBreak, applyBreakText, applyBreakToMedia, type BreakWindow, type BreakResult } from './breaks.js';
export { trimText, trimThenRewrite } from './trim-text.js';
export { splitLines } from './rewrite.js';
export { mapMasterUris, type MappedMaster } from './master.js';
