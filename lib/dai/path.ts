/**
 * `/dai/manifest/{path}` → the upstream path on DAI_HOST. The path can never pick another host:
 * it is checked against a strict character set after decoding only an encoded colon (stream ids
 * like `uuid:LOC` arrive either way); any other percent-encoding, dot segments, empty segments
 * (`//`), `@`, backslashes and control characters are refused.
 */
import { badRequest } from '../http/problem.js';

export const MANIFEST_PREFIX = '/dai/manifest';
const MAX_PATH = 2048;

import type { ManifestKind } from '../delivery/manifest-fetch.js';
import { checkQuery } from '../delivery/query.js';

export type { ManifestKind };

export interface ManifestTarget {
  /** Upstream path and query, starting with '/'. */
  upstreamPath: string;
  streamId?: string;
  assetKey?: string;
  /** From the name (spec rules 2–3); the body may still prove a .m3u8 to be the other kind. */
  kind: ManifestKind;
}

const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:-]+$/;

/** The part of a target that depends on the path alone (cached by the proxy). */
export type PathTarget = Omit<ManifestTarget, 'upstreamPath'> & { path: string };

export function parsePath(url: string): PathTarget {
  if (!url.startsWith(`${MANIFEST_PREFIX}/`)) throw badRequest('not a manifest path');
  let path = url.slice(MANIFEST_PREFIX.length);
  if (path.length > MAX_PATH) throw badRequest('path too long');
  path = path.replace(/%3a/gi, ':');
  const segments = path.slice(1).split('/');
  for (const seg of segments) {
    if (!seg) throw badRequest('empty path segment');
    if (seg === '.' || seg === '..') throw badRequest('dot segments are not allowed');
    if (!SEGMENT.test(seg)) throw badRequest('the path contains characters or encodings that are not allowed');
  }
  const after = (name: string): string | undefined => {
    const i = segments.indexOf(name);
    return i !== -1 && i + 1 < segments.length ? segments[i + 1] : undefined;
  };
  const last = segments[segments.length - 1]!.toLowerCase();
  if (!last.endsWith('.m3u8') && !last.endsWith('.mpd')) throw badRequest('only .m3u8 and .mpd manifests are proxied');
  const kind: ManifestKind = last.endsWith('.mpd') ? 'mpd' : last.includes('master') ? 'master' : 'media';
  const target: PathTarget = { path, kind };
  const streamId = after('stream') ?? after('streams');
  const assetKey = after('event');
  if (streamId) target.streamId = streamId;
  if (assetKey) target.assetKey = assetKey;
  return target;
}

export function parseManifestPath(url: string, query: string): ManifestTarget {
  checkQuery(query);
  const { path, ...rest } = parsePath(url);
  return { upstreamPath: query ? `${path}?${query}` : path, ...rest };
}
