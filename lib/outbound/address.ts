/**
 * Which IP addresses an outbound fetch may never reach (docs/design.md §7): everything that is not
 * global unicast. IPv4 after the IANA special-purpose registry (RFC 6890 and updates); IPv6
 * likewise, with every form that embeds an IPv4 address (mapped, compatible, NAT64, 6to4) judged
 * by the address it embeds.
 *
 * Written out rather than with node:net's BlockList: a BlockList holding `::ffff:0:0/96` matches
 * every IPv4 address (it compares IPv4 addresses in their mapped form), which refused every public
 * IPv4 host while private outbound was off.
 */
import { isIPv6 } from 'node:net';
import { dottedQuad } from '../http/client-ip.js';

type V4Range = readonly [base: number, bits: number, label: string];

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

const V4_RANGES: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'cgnat'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'benchmarking'],
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function v4Label(addr: number): string | null {
  for (const [base, bits, label] of V4_RANGES) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((addr & mask) >>> 0 === base) return label;
  }
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad included). */
function parseV6(ip: string): number[] {
  let s = ip.toLowerCase();
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  const colon = s.lastIndexOf(':');
  if (s.includes('.', colon)) {
    const quad = dottedQuad(s.slice(colon + 1));
    s = `${s.slice(0, colon + 1)}${(quad >>> 16).toString(16)}:${(quad & 0xffff).toString(16)}`;
  }
  const groups = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const [head, rest] = s.split('::') as [string, string | undefined];
  const left = groups(head);
  if (rest === undefined) return left;
  const right = groups(rest);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function v6Label(g: number[]): string | null {
  const [a, b, c, d, e, f, h, i] = g as [number, number, number, number, number, number, number, number];
  const embedded = ((h << 16) | i) >>> 0;
  const zeroHead = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (zeroHead && f === 0) {
    if (h === 0 && i === 0) return 'unspecified';
    if (h === 0 && i === 1) return 'loopback';
    return 'ipv4-compatible'; // ::a.b.c.d, deprecated by RFC 4291 §2.5.5.1: never a real target
  }
  if (zeroHead && f === 0xffff) return v4Label(embedded); // RFC 4291 §2.5.5.2 IPv4-mapped
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return v4Label(embedded); // RFC 6052 NAT64
  if (a === 0x64 && b === 0xff9b && c === 1) return 'nat64-local'; // RFC 8215
  if (a === 0x100 && b === 0 && c === 0 && d === 0) return 'discard'; // RFC 6666
  if (a === 0x2001 && b === 0) return 'teredo'; // RFC 4380: embeds an obfuscated IPv4 server and client
  if (a === 0x2001 && b === 0x0db8) return 'documentation';
  if (a === 0x2002) return v4Label(((b << 16) | c) >>> 0); // RFC 3056 6to4
  if ((a & 0xfe00) === 0xfc00) return 'ula';
  if ((a & 0xffc0) === 0xfe80) return 'link-local';
  if ((a & 0xffc0) === 0xfec0) return 'site-local';
  if ((a & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/**
 * Why `ip` may not be a target (`loopback`, `private`, `link-local`, …), or null for a global
 * unicast address. Anything that is not an IP address at all is refused as `not-an-ip`.
 */
export function blockedRange(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const quad = dottedQuad(bare);
  if (quad >= 0) return v4Label(quad);
  if (isIPv6(bare)) return v6Label(parseV6(bare));
  return 'not-an-ip';
}
