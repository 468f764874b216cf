export { rewriteMpd, type MpdResult } from './rewrite.js';
export { trimMpdWindow, parseXsDuration, type MpdTrimOptions } from './trim.js';
