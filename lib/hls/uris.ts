/**
 * URI rewriting rules of the DAI proxy (spec "DAI proxy: manifests" rules 2–6; docs/design.md §4).
 * Prefix checks and slices only: no URL parsing on the common paths.
 */
export interface UriRules {
  /** The DAI provider's base URL, e.g. https://dai.google.com */
  daiHost: string;
  /** Where proxied playlists live: `${PUBLIC_BASE_URL}/dai/manifest` */
  proxyBase: string;
  /** Base URL for root-relative segment URIs (the event's content origin, else CONTENT_ORIGIN, else the DAI host). */
  contentOrigin: string;
  /** The upstream playlist URL, against which document-relative URIs resolve (RFC 8216 §4.1). */
  playlistUrl: string;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export function isAbsolute(uri: string): boolean {
  return SCHEME.test(uri) || uri.startsWith('//');
}

/**
 * A playlist URI resolved against the playlist it is in (RFC 8216 §4.1), for every reader off the
 * hot path (stitching, the break worker's source, the cue monitor, ID3 inspection): a URI with a
 * scheme comes back untouched, byte for byte (it names what the upstream wrote); undefined when
 * nothing resolves it, and each caller says what that means to it.
 */
export function resolveUri(uri: string, base: string): string | undefined {
  if (SCHEME.test(uri)) return uri;
  try {
    return new URL(uri, base).href;
  } catch {
    return undefined;
  }
}

/** A relative reference URL would not change: starts with a name character, only URL-safe characters after. */
const PLAIN = /^[\w~!$&'()*+,;=@-][\w.~!$&'()*+,;=:@%/?-]*$/;

/**
 * resolveUri for the many segment URIs of one playlist: a plain relative name (the usual case)
 * is joined to the playlist's directory without a URL parse; anything else goes through URL.
 */
export function uriResolver(base: string): (uri: string) => string | undefined {
  const noQuery = base.split(/[?#]/)[0]!;
  const dir = noQuery.slice(0, noQuery.lastIndexOf('/') + 1);
  return (uri) => {
    if (SCHEME.test(uri)) return uri;
    return PLAIN.test(uri) && !uri.includes('/.') ? dir + uri : resolveUri(uri, base);
  };
}

/** The two spellings of a DAI host's prefix; one host per service, so remembered. */
const prefixCache = new Map<string, string[]>();

function daiPrefixes(daiHost: string): string[] {
  let p = prefixCache.get(daiHost);
  if (!p) {
    const host = daiHost.replace(/^https?:\/\//i, '').toLowerCase();
    p = [`https://${host}`, `http://${host}`];
    if (prefixCache.size > 64) prefixCache.clear();
    prefixCache.set(daiHost, p);
  }
  return p;
}

export class UriRewriter {
  private readonly prefixes: string[];
  private base: string | undefined;
  /** Whether a document-relative URI was resolved: the output then depends on the playlist's own URL. */
  resolvedRelative = false;

  constructor(private readonly rules: UriRules) {
    this.prefixes = daiPrefixes(rules.daiHost);
  }

  /** The directory of the playlist URL, for document-relative URIs (rare: computed on first use). */
  private get docBase(): string {
    if (this.base === undefined) {
      const noQuery = this.rules.playlistUrl.split('?')[0]!;
      this.base = noQuery.slice(0, noQuery.lastIndexOf('/') + 1);
    }
    return this.base;
  }

  /** Length of the DAI-host prefix of the absolute URI at text[pos], or 0. */
  daiPrefixLength(text: string, pos = 0): number {
    for (const p of this.prefixes) {
      if (text.charCodeAt(pos + p.length) === 47 /* / */ && text.slice(pos, pos + p.length).toLowerCase() === p)
        return p.length;
    }
    return 0;
  }

  /** Whether text[pos, end) starts with a URI scheme (`name:`), without slicing. */
  hasScheme(text: string, pos: number, end: number): boolean {
    for (let i = pos; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 58 /* : */) return i > pos;
      const alpha = (c | 32) >= 97 && (c | 32) <= 122;
      if (!(alpha || (i > pos && ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)))) return false;
    }
    return false;
  }

  /** Master playlists: DAI-host and root-relative variant/rendition URIs go through the proxy. */
  master(uri: string): string {
    const n = this.daiPrefixLength(uri);
    if (n) return this.rules.proxyBase + uri.slice(n);
    if (uri.charCodeAt(0) === 47 && uri.charCodeAt(1) !== 47) return this.rules.proxyBase + uri;
    return uri; // other hosts untouched; document-relative URIs already resolve under the proxy path
  }

  /** Media playlists: root-relative → content origin; document-relative → absolute upstream; absolute (DAI ads) untouched. */
  media(uri: string): string {
    if (uri.charCodeAt(0) === 47) return uri.charCodeAt(1) === 47 ? uri : this.rules.contentOrigin + uri;
    if (isAbsolute(uri)) return uri;
    this.resolvedRelative = true;
    if (uri.startsWith('./') || uri.includes('../')) {
      try {
        return new URL(uri, this.rules.playlistUrl).href;
      } catch {
        return uri; // nothing it resolves to (`\\?../a.ts` reads as a host-less `//?../a.ts`): left as it is
      }
    }
    return this.docBase + uri;
  }
}
