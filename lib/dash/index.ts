export { rewriteMpd, type MpdResult } from './rewrite.js';
export { trimMpdWindow, type MpdTrimOptions } from './trim.js';
export { parseXsDuration, parseIsoDuration, formatIsoDuration } from './duration.js';
export { readMpd, periodTimings, mpdRootAttribute, MPD_MAX_BYTES, type MpdDocument, type PeriodTiming } from './mpd.js';
