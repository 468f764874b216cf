/**
 * The client's address, believed from trusted hops only (issue 24 item 3). `X-Device-Ip` (the ad
 * manager's server calling on a viewer's behalf) and `X-Forwarded-For` (a CDN or reverse proxy)
 * are read only when the connection comes from a peer in TRUSTED_PROXIES; from anyone else the
 * socket's peer is the client, whatever it sends. The operator lists the ad manager's and the
 * CDN's ranges there (empty by default: nobody is trusted). One answer serves every use: rate-limit
 * keys, the `vip` of ad requests, the upstream's geo (`X-Forwarded-For`) and a stream's client_ip.
 */
import { BlockList, isIPv6 } from 'node:net';
import { addressText, latin1Bytes, type HttpResponse } from './uws.js';

/** The header's name as bytes, for uWS's getHeader (lib/http/uws.ts). */
export const FORWARDED_FOR = latin1Bytes('x-forwarded-for');

/**
 * The trusted hops (TRUSTED_PROXIES). IPv4 ranges are checked by hand on the parsed address: this
 * runs on every manifest request behind a CDN (the peer, then each X-Forwarded-For hop), and a
 * node:net BlockList check builds a SocketAddress per call (~2 µs, 4 % of the rig's CPU profile,
 * issue 31). IPv6 ranges, rare in practice, stay with a BlockList.
 */
export class TrustedHops {
  /** Pairs of [first, last] IPv4 addresses as numbers. */
  private readonly v4: number[] = [];
  private readonly v6 = new BlockList();
  private hasV6 = false;

  addV4(first: number, last: number): void {
    this.v4.push(first, last);
  }

  addV6(addr: string, prefix: number): void {
    this.v6.addSubnet(addr, prefix, 'ipv6');
    this.hasV6 = true;
  }

  get empty(): boolean {
    return this.v4.length === 0 && !this.hasV6;
  }

  /** Whether ip (a plain IPv4 or an IPv6 address) is a trusted hop. */
  has(ip: string): boolean {
    const a = dottedQuad(ip);
    if (a >= 0) return this.hasV4(a);
    return this.hasV6 && isIPv6(ip) && this.v6.check(ip, 'ipv6');
  }

  /** Whether the IPv4 address of this value (0 … 2^32 − 1) is a trusted hop. */
  hasV4(a: number): boolean {
    const r = this.v4;
    for (let i = 0; i < r.length; i += 2) if (a >= r[i]! && a <= r[i + 1]!) return true;
    return false;
  }
}

/**
 * `a.b.c.d` → its value (0 … 2^32 − 1), or −1 when ip is not a dotted quad in the form node:net's
 * isIPv4 accepts (four decimal parts 0–255, no leading zeros).
 */
export function dottedQuad(ip: string): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
      continue;
    }
    if (c < 48 || c > 57 || (digits > 0 && part === 0)) return -1;
    part = part * 10 + (c - 48);
    if (++digits > 3 || part > 255) return -1;
  }
  return dots === 3 && digits > 0 ? value * 256 + part : -1;
}

function isAddress(ip: string): boolean {
  return dottedQuad(ip) >= 0 || isIPv6(ip);
}

/** `10.0.0.0/8, 127.0.0.1, ::1` → the trusted hops; throws on an entry that is neither an IP nor a CIDR. */
export function trustedProxies(spec: string): TrustedHops {
  const hops = new TrustedHops();
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [addr = '', bits] = entry.split('/');
    const v4 = dottedQuad(addr);
    const v6 = v4 < 0 && isIPv6(addr);
    const max = v6 ? 128 : 32;
    const prefix = bits === undefined ? max : Number(bits);
    if ((v4 < 0 && !v6) || !/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max)
      throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    if (v6) hops.addV6(addr, prefix);
    else {
      const size = 2 ** (32 - prefix);
      const first = Math.floor(v4 / size) * size;
      hops.addV4(first, first + size - 1);
    }
  }
  return hops;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`: uWS reports IPv4 peers of a dual-stack socket mapped. */
function plain(ip: string): string {
  return ip.startsWith('::ffff:') && dottedQuad(ip.slice(7)) >= 0 ? ip.slice(7) : ip;
}

/** At most this many `X-Forwarded-For` hops are walked (a longer list is cut at its right end). */
const MAX_HOPS = 16;

/**
 * From a trusted peer: its `X-Device-Ip` when that is an IP address; else `X-Forwarded-For` read
 * from the right, skipping trusted hops, up to the first address a trusted hop did not add (what a
 * client writes into the header itself sits left of that and is ignored); else the peer.
 */
export function clientIp(deviceIp: string, forwardedFor: string, peer: string, trusted: TrustedHops): string {
  const socket = plain(peer);
  if (trusted.empty || !trusted.has(socket)) return socket;
  const device = deviceIp.trim();
  if (device && isAddress(device)) return plain(device);
  if (!forwardedFor) return socket;
  const hops = forwardedFor.split(',');
  let client = socket;
  for (let i = hops.length - 1; i >= 0 && i >= hops.length - MAX_HOPS; i--) {
    const hop = hops[i]!.trim();
    if (!isAddress(hop)) break; // a malformed entry: trust stops at the last good hop
    client = plain(hop);
    if (!trusted.has(client)) break;
  }
  return client;
}

/**
 * The IPv4 address (0 … 2^32 − 1) of a peer as uWS hands it in binary: 4 bytes, or 16 where a
 * dual-stack socket maps an IPv4 peer as ::ffff:a.b.c.d (RFC 4291 §2.5.5.2); -1 for an IPv6 peer.
 */
export function peerIPv4(bytes: ArrayBuffer): number {
  const b = new Uint8Array(bytes);
  let at = 0;
  if (b.length === 16) {
    for (let i = 0; i < 10; i++) if (b[i] !== 0) return -1;
    if (b[10] !== 0xff || b[11] !== 0xff) return -1;
    at = 12;
  } else if (b.length !== 4) return -1;
  return b[at]! * 0x1000000 + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
}

/** An IPv4 address's value as a dotted quad. */
export function quadText(a: number): string {
  return `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
}

/**
 * clientIp of a uWS request without X-Device-Ip (the manifest proxy's viewer for the DAI host's
 * geo), the peer read in binary: its text form costs uWS an inet_ntop (sprintf) and an ArrayBuffer
 * decoded here, per request (issue 31), and behind a CDN the answer is the X-Forwarded-For hop.
 */
export function viewerOf(res: HttpResponse, forwardedFor: string, trusted: TrustedHops): string {
  const v4 = peerIPv4(res.getRemoteAddress());
  if (v4 < 0) return clientIp('', forwardedFor, addressText(res.getRemoteAddressAsText()), trusted);
  if (!trusted.hasV4(v4)) return quadText(v4);
  if (forwardedFor && !forwardedFor.includes(',')) {
    // One hop, as a CDN edge sends it: what clientIp's walk would take, when it is an address.
    const hop = forwardedFor.trim();
    if (isAddress(hop)) return plain(hop);
  }
  return clientIp('', forwardedFor, quadText(v4), trusted);
}
