/**
 * Paths of the squeezeback player flow (docs/design.md §9):
 *   /squeezeback/{asset_id}/master.m3u8               → the event's source master
 *   /squeezeback/{asset_id}/{stream_id}/{path}        → a variant of it on the event's origin
 * `{path}` is the variant's path relative to the master's directory, or `~/` + its absolute path
 * on the same origin. Only the event's configuration names the host: a path can never point the
 * service at another one. Each segment is percent-decoded and checked: no `/` or `\` in it (so no
 * `%2f`), no NUL or other control characters, no dot segments (`..` or `%2e%2e`), no empty segments,
 * no malformed escapes. What passes is re-encoded in one canonical form (`%41` → `A`, a space →
 * `%20`, as a URL's pathname writes it): the origin gets that form, and the micro-cache one key.
 */
import { badRequest } from '../http/problem.js';

export const PREFIX = '/squeezeback/';
/** The first path segment that marks an origin-root path (a variant outside the master's directory). */
export const ROOT_MARK = '~';
const MAX_PATH = 2048;
const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@%-]+$/;
/** Characters a canonical segment keeps as they are; every other one is percent-encoded. */
const PLAIN = /[A-Za-z0-9._~!$&'()*+,;=:@-]/;
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\x00-\x1f\x7f/\\]/;
const STREAM_ID = /^[1-9][0-9]{8}$/;

export type PlayerPath =
  { kind: 'master'; assetId: string } | { kind: 'variant'; assetId: string; streamId: string; rest: string[] };

export function parsePlayerPath(url: string): PlayerPath {
  if (!url.startsWith(PREFIX)) throw badRequest('not a squeezeback path');
  if (url.length > MAX_PATH) throw badRequest('path too long');
  const segments = url.slice(PREFIX.length).split('/').map(canonicalSegment);
  const assetId = segments[0]!;
  if (segments.length === 2 && segments[1] === 'master.m3u8') return { kind: 'master', assetId };
  if (segments.length < 3)
    throw badRequest('expected /squeezeback/{asset_id}/master.m3u8 or /squeezeback/{asset_id}/{stream_id}/{path}');
  const rest = segments.slice(2);
  if (!rest[rest.length - 1]!.toLowerCase().endsWith('.m3u8'))
    throw badRequest('only playlists are served here: segments come from the origin');
  // A stream id that is not 9 digits was never handed out: it is unknown, not malformed.
  return { kind: 'variant', assetId, streamId: STREAM_ID.test(segments[1]!) ? segments[1]! : '', rest };
}

/** A path segment decoded, checked and re-encoded in its canonical form; 400 for anything that could leave its segment. */
export function canonicalSegment(seg: string): string {
  if (!seg) throw badRequest('empty path segment');
  if (!SEGMENT.test(seg)) throw badRequest('the path contains characters that are not allowed');
  let decoded = seg;
  if (seg.includes('%')) {
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      throw badRequest('malformed percent-encoding in the path');
    }
  }
  if (decoded === '.' || decoded === '..') throw badRequest('dot segments are not allowed');
  if (FORBIDDEN.test(decoded)) throw badRequest('the path contains encoded slashes, backslashes or control characters');
  if (decoded === seg) return seg;
  let out = '';
  for (const ch of decoded) out += PLAIN.test(ch) ? ch : encodeURIComponent(ch);
  return out;
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
