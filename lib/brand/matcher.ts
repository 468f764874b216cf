/**
 * Brand-recognition matching (docs/design.md §3). `match_value` wildcards: `*` any run, `?` one
 * character. Header names and hostnames compare case-insensitively, hostnames without port.
 * When several rules match, the most specific wins: fewest wildcards, then the longest literal,
 * then type order query_param, header, hostname, then the oldest rule.
 * Rules are compiled once into a pre-sorted index; matching is a linear glob scan, no regex.
 */
export type MatchType = 'query_param' | 'header' | 'hostname';

export interface BrandRule {
  id: number;
  brand_name: string;
  match_type: MatchType;
  match_name: string;
  match_value: string;
}

export interface MatchInput {
  headers?: Record<string, string | string[]>;
  query?: Record<string, string | string[]> | string;
  hostname?: string;
}

const typeOrder: Record<MatchType, number> = { query_param: 0, header: 1, hostname: 2 };

interface Compiled {
  rule: BrandRule;
  pattern: string;
  wildcards: number;
  literal: number;
}

/** Glob match with `*` and `?`, greedy with backtracking to the last star: O(n·m) worst case, no regex. */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const c = pattern.charCodeAt(p);
    if (p < pattern.length && (c === 63 /* ? */ || c === text.charCodeAt(t))) {
      p++;
      t++;
    } else if (c === 42 /* * */) {
      star = p++;
      mark = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (pattern.charCodeAt(p) === 42) p++;
  return p === pattern.length;
}

function compile(rule: BrandRule): Compiled {
  let wildcards = 0;
  for (const ch of rule.match_value) if (ch === '*' || ch === '?') wildcards++;
  const pattern = rule.match_type === 'hostname' ? rule.match_value.toLowerCase() : rule.match_value;
  return { rule, pattern, wildcards, literal: rule.match_value.length - wildcards };
}

function bySpecificity(a: Compiled, b: Compiled): number {
  return (
    a.wildcards - b.wildcards ||
    b.literal - a.literal ||
    typeOrder[a.rule.match_type] - typeOrder[b.rule.match_type] ||
    a.rule.id - b.rule.id
  );
}

/** `example.com:8080` → `example.com`, `[::1]:80` → `::1`, lower-cased. */
export function normalizeHostname(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(1, end);
  }
  const colon = h.indexOf(':');
  if (colon !== -1 && h.indexOf(':', colon + 1) === -1) h = h.slice(0, colon);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/**
 * The forwarded hostname: explicit, else X-Forwarded-Host, else the host= of X-Forwarded /
 * Forwarded, else a bare host in X-Forwarded (`X-Forwarded: brand.example.com`, as the spec's
 * "X-Forwarded-Host / X-Forwarded header" allows: recognised like `host=`, issue 25).
 */
export function forwardedHostname(input: MatchInput, headers: Map<string, string[]>): string | undefined {
  if (input.hostname) return normalizeHostname(input.hostname);
  const xfh = headers.get('x-forwarded-host')?.[0];
  if (xfh) return normalizeHostname(xfh.split(',')[0]!);
  for (const name of ['x-forwarded', 'forwarded']) {
    const v = headers.get(name)?.[0];
    const m = v && /(?:^|[;,\s])host="?([^";,\s]+)"?/i.exec(v);
    if (m) return normalizeHostname(m[1]!);
  }
  const bare = headers.get('x-forwarded')?.[0]?.split(',')[0]!.trim();
  if (bare && !bare.includes('=') && BARE_HOST.test(bare)) return normalizeHostname(bare);
  return undefined;
}

/** A host[:port] or [IPv6]:port, nothing else (a bare X-Forwarded value). */
const BARE_HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

function lowerHeaders(headers: MatchInput['headers']): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of Object.entries(headers ?? {})) {
    const list = out.get(k.toLowerCase()) ?? [];
    list.push(...(Array.isArray(v) ? v : [v]));
    out.set(k.toLowerCase(), list);
  }
  return out;
}

function queryValues(query: MatchInput['query']): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (typeof query === 'string') {
    for (const [k, v] of new URLSearchParams(query.startsWith('?') ? query.slice(1) : query))
      out.set(k, [...(out.get(k) ?? []), v]);
    return out;
  }
  for (const [k, v] of Object.entries(query ?? {})) out.set(k, Array.isArray(v) ? v : [v]);
  return out;
}

export class BrandMatcher {
  private readonly byHeader = new Map<string, Compiled[]>();
  private readonly byQuery = new Map<string, Compiled[]>();
  private readonly hostnames: Compiled[] = [];
  readonly size: number;

  constructor(rules: BrandRule[]) {
    const compiled = rules.map(compile).sort(bySpecificity);
    for (const c of compiled) {
      if (c.rule.match_type === 'hostname') this.hostnames.push(c);
      else {
        const index = c.rule.match_type === 'header' ? this.byHeader : this.byQuery;
        const name = c.rule.match_type === 'header' ? c.rule.match_name.toLowerCase() : c.rule.match_name;
        index.set(name, [...(index.get(name) ?? []), c]);
      }
    }
    this.size = compiled.length;
  }

  /** The winning rule for a request, or undefined. */
  resolve(input: MatchInput): BrandRule | undefined {
    let best: Compiled | undefined;
    const consider = (candidates: Compiled[] | undefined, values: string[] | undefined) => {
      if (!candidates || !values) return;
      for (const c of candidates) {
        if (best && bySpecificity(c, best) >= 0) return; // sorted: nothing later can win
        if (values.some((v) => globMatch(c.pattern, v))) {
          best = c;
          return;
        }
      }
    };
    const headers = lowerHeaders(input.headers);
    for (const [name, values] of queryValues(input.query)) consider(this.byQuery.get(name), values);
    for (const [name, values] of headers) consider(this.byHeader.get(name), values);
    const host = forwardedHostname(input, headers);
    if (host !== undefined) consider(this.hostnames, [host]);
    return best?.rule;
  }
}
