/**
 * Signed beacon URLs (docs/design.md §3 Beacons): every tracking URL handed to a player becomes
 * `{base}/beacon?u=&s=&e=&sig=`, and `/beacon` forwards only URLs it signed itself, so the
 * endpoint can never be used as an open relay. The MAC covers a JSON array of the three values,
 * an unambiguous encoding (no `a|b` vs `a|` + `|b` confusion).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Beacon {
  /** The original tracking URL (http or https). */
  url: string;
  streamId: string;
  /** impression | start | firstQuartile | midpoint | thirdQuartile | complete | … */
  event: string;
  /** The break the beacon belongs to: the same ad in a later break is a new impression. */
  breakId?: string;
  /** Epoch seconds after which the signed URL is refused (a URL cannot be replayed forever). */
  expires?: number;
}

export type BeaconVerdict = { ok: true; beacon: Beacon } | { ok: false; reason: string };

/** Longest query string verifyBeacon looks at; real tracking URLs stay far below it. */
export const MAX_BEACON_QUERY = 8 * 1024;

const SIG_RE = /^[A-Za-z0-9_-]{43}$/; // 32 bytes of HMAC-SHA256, base64url without padding

function mac(secret: string, b: Beacon): string {
  const fields: unknown[] = [b.url, b.streamId, b.event];
  if (b.breakId !== undefined || b.expires !== undefined) fields.push(b.breakId ?? '', b.expires ?? 0);
  return createHmac('sha256', secret).update(JSON.stringify(fields)).digest('base64url');
}

/** The signed beacon URL for one tracking URL. Throws only on an empty secret (a configuration error). */
export function beaconUrl(base: string, secret: string, b: Beacon): string {
  if (!secret) throw new TypeError('beaconUrl needs a non-empty secret');
  const root = base.replace(/\/+$/, '');
  const scope =
    b.breakId !== undefined || b.expires !== undefined
      ? `&b=${encodeURIComponent(b.breakId ?? '')}&x=${b.expires ?? 0}`
      : '';
  return `${root}/beacon?u=${encodeURIComponent(b.url)}&s=${encodeURIComponent(b.streamId)}&e=${encodeURIComponent(b.event)}${scope}&sig=${mac(secret, b)}`;
}

/** Form-style decoding (`+` is a space); undefined on malformed percent-encoding. */
function decode(v: string): string | undefined {
  try {
    return decodeURIComponent(v.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

const FIELDS = new Set(['u', 's', 'e', 'sig']);
const OPTIONAL = new Set(['b', 'x']);

/**
 * Checks a raw query string (without '?'). Unknown parameters are ignored (players and CDNs
 * append cache busters); a repeated known parameter is refused, so no two parsers can disagree on
 * which value was signed. Never throws.
 */
export function verifyBeacon(query: string, secret: string): BeaconVerdict {
  try {
    if (typeof query !== 'string') return { ok: false, reason: 'no query' };
    if (!secret) return { ok: false, reason: 'no secret configured' };
    if (query.length > MAX_BEACON_QUERY) return { ok: false, reason: 'query too large' };
    const got = new Map<string, string>();
    for (const part of query.split('&')) {
      if (!part) continue;
      const eq = part.indexOf('=');
      const name = decode(eq < 0 ? part : part.slice(0, eq));
      if (name === undefined) return { ok: false, reason: 'bad percent-encoding' };
      if (!FIELDS.has(name) && !OPTIONAL.has(name)) continue;
      if (got.has(name)) return { ok: false, reason: `duplicated parameter ${name}` };
      const value = decode(eq < 0 ? '' : part.slice(eq + 1));
      if (value === undefined) return { ok: false, reason: 'bad percent-encoding' };
      got.set(name, value);
    }
    for (const name of FIELDS) if (!got.get(name)) return { ok: false, reason: `missing parameter ${name}` };
    const beacon: Beacon = { url: got.get('u')!, streamId: got.get('s')!, event: got.get('e')! };
    if (got.has('b') || got.has('x')) {
      const expires = Number(got.get('x') ?? '0');
      if (!Number.isSafeInteger(expires) || expires < 0) return { ok: false, reason: 'bad expiry' };
      beacon.breakId = got.get('b') ?? '';
      beacon.expires = expires;
    }
    // Even a URL we signed is never forwarded unless it is http(s).
    let u: URL;
    try {
      u = new URL(beacon.url);
    } catch {
      return { ok: false, reason: 'u is not a URL' };
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, reason: 'u is not http(s)' };
    const sig = got.get('sig')!;
    if (!SIG_RE.test(sig)) return { ok: false, reason: 'bad signature' };
    // Compare the base64url text, not decoded bytes: the last character has unused bits, so two
    // different strings can decode to the same bytes.
    if (!timingSafeEqual(Buffer.from(sig, 'latin1'), Buffer.from(mac(secret, beacon), 'latin1')))
      return { ok: false, reason: 'bad signature' };
    if (beacon.expires && Date.now() / 1000 > beacon.expires) return { ok: false, reason: 'expired' };
    return { ok: true, beacon };
  } catch {
    return { ok: false, reason: 'malformed query' };
  }
}
