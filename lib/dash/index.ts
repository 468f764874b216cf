export { rewriteMpd, type MpdResult } from './rewrite.js';
export { trimMpdWindow, type MpdTrimOptions } from './trim.js';
