/**
 * Paths of the squeezeback player flow (DESIGN.md §9):
 *   /squeezeback/{asset_id}/master.m3u8               → the event's source master
 *   /squeezeback/{asset_id}/{stream_id}/{path}        → a variant of it on the event's origin
 * `{path}` is the variant's path relative to the master's directory, or `~/` + its absolute path
 * on the same origin. Only the event's configuration names the host: a path can never point the
 * service at another one. Segments are checked against a strict character set: no percent-encoding
 * (so no `%2f`, `%00`), no dot or empty segments, no backslashes or control characters.
 */
import { badRequest } from '../http/problem.js';

export const PREFIX = '/squeezeback/';
/** The first path segment that marks an origin-root path (a variant outside the master's directory). */
export const ROOT_MARK = '~';
const MAX_PATH = 2048;
const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/;
const STREAM_ID = /^[1-9][0-9]{8}$/;

export type PlayerPath = { kind: 'master'; assetId: string } | { kind: 'variant'; assetId: string; streamId: string; rest: string[] };

export function parsePlayerPath(url: string): PlayerPath {
  if (!url.startsWith(PREFIX)) throw badRequest('not a squeezeback path');
  if (url.length > MAX_PATH) throw badRequest('path too long');
  const segments = url.slice(PREFIX.length).split('/');
  for (const seg of segments) {
    if (!seg) throw badRequest('empty path segment');
    if (seg === '.' || seg === '..') throw badRequest('dot segments are not allowed');
    if (!SEGMENT.test(seg)) throw badRequest('the path contains characters or encodings that are not allowed');
  }
  const assetId = segments[0]!;
  if (segments.length === 2 && segments[1] === 'master.m3u8') return { kind: 'master', assetId };
  if (segments.length < 3) throw badRequest('expected /squeezeback/{asset_id}/master.m3u8 or /squeezeback/{asset_id}/{stream_id}/{path}');
  const rest = segments.slice(2);
  if (!rest[rest.length - 1]!.toLowerCase().endsWith('.m3u8')) throw badRequest('only playlists are served here: segments come from the origin');
  // A stream id that is not 9 digits was never handed out: it is unknown, not malformed.
  return { kind: 'variant', assetId, streamId: STREAM_ID.test(segments[1]!) ? segments[1]! : '', rest };
}

/** The directory of the master on its origin (`/live/ev/master.m3u8` → `/live/ev/`). */
export function masterDir(master: URL): string {
  return master.pathname.slice(0, master.pathname.lastIndexOf('/') + 1);
}

/** The origin path (with the leading `/`) a variant path names. */
export function originPath(rest: string[], dir: string): string {
  return rest[0] === ROOT_MARK ? '/' + rest.slice(1).join('/') : dir + rest.join('/');
}

/**
 * The player-facing path of a variant URI of the master, relative to the master's URL (so it
 * resolves under /squeezeback/{asset_id}/), with `sid` standing for the stream id; a URI on another
 * host is left as it is (the origin sent the player there; the service does not follow).
 */
export function variantPath(uri: string, master: URL, dir: string, sid: string): string {
  let u: URL;
  try {
    u = new URL(uri, master);
  } catch {
    return uri;
  }
  if (u.origin !== master.origin || u.hash) return uri;
  const rel = u.pathname.startsWith(dir) ? u.pathname.slice(dir.length) : `${ROOT_MARK}${u.pathname}`;
  return `${sid}/${rel}${u.search}`;
}
