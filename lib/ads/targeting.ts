/**
 * Ad targeting from a player's or an ad manager's query string: every parameter is targeting (an
 * `imafw_` prefix is stripped; a native name wins over its prefixed twin). Oversized query strings
 * are truncated, not rejected. Read by the DAI preroll ad tag and the squeezeback flow alike.
 */
const MAX_QUERY_BYTES = 8192;
const MAX_PARAMS = 200;
const PREFIX = 'imafw_';

function decode(s: string): string {
  if (s.indexOf('%') === -1 && s.indexOf('+') === -1) return s;
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/**
 * Targeting parameters from a raw query string, capped in size and count. A Map: names come from
 * outside (`__proto__` is just a name), and a null-prototype object would cost several times more.
 */
export function targetingFrom(rawQuery: string): Map<string, string> {
  const query =
    rawQuery.length > MAX_QUERY_BYTES
      ? rawQuery.slice(
          0,
          rawQuery.lastIndexOf('&', MAX_QUERY_BYTES) > 0 ? rawQuery.lastIndexOf('&', MAX_QUERY_BYTES) : MAX_QUERY_BYTES,
        )
      : rawQuery;
  const encoded = query.indexOf('%') !== -1 || query.indexOf('+') !== -1;
  const out = new Map<string, string>();
  let prefixed: Map<string, string> | undefined;
  let count = 0;
  // application/x-www-form-urlencoded by hand: URLSearchParams costs more than the rest of the request.
  for (let pos = 0; pos < query.length && count < MAX_PARAMS;) {
    let amp = query.indexOf('&', pos);
    if (amp === -1) amp = query.length;
    const eq = query.indexOf('=', pos);
    const hasValue = eq !== -1 && eq < amp;
    let rawName = query.slice(pos, hasValue ? eq : amp);
    let value = hasValue ? query.slice(eq + 1, amp) : '';
    pos = amp + 1;
    if (encoded) {
      rawName = decode(rawName);
      value = decode(value);
    }
    if (!rawName) continue;
    count++;
    if (rawName.length > PREFIX.length && rawName.startsWith(PREFIX))
      (prefixed ??= new Map()).set(rawName.slice(PREFIX.length), value);
    else out.set(rawName, value);
  }
  // A native name wins over its prefixed twin.
  if (prefixed) for (const [name, value] of prefixed) if (!out.has(name)) out.set(name, value);
  return out;
}
