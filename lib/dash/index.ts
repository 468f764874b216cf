export { rewriteMpd, type MpdResult } from './rewrite.js';
