/**
 * The client's address, believed from trusted hops only (issue 24 item 3). `X-Device-Ip` (the ad
 * manager's server calling on a viewer's behalf) and `X-Forwarded-For` (a CDN or reverse proxy)
 * are read only when the connection comes from a peer in TRUSTED_PROXIES; from anyone else the
 * socket's peer is the client, whatever it sends. The operator lists the ad manager's and the
 * CDN's ranges there (empty by default: nobody is trusted). One answer serves every use: rate-limit
 * keys, the `vip` of ad requests, the upstream's geo (`X-Forwarded-For`) and a stream's client_ip.
 */
import { BlockList, isIP } from 'node:net';

/** `10.0.0.0/8, 127.0.0.1, ::1` → a BlockList; throws on an entry that is neither an IP nor a CIDR. */
export function trustedProxies(spec: string): BlockList {
  const list = new BlockList();
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [addr, bits] = entry.split('/');
    const family = isIP(addr ?? '');
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32))
      throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    list.addSubnet(addr!, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`: uWS reports IPv4 peers of a dual-stack socket mapped. */
function plain(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

function isTrusted(list: BlockList, ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

/** At most this many `X-Forwarded-For` hops are walked (a longer list is cut at its right end). */
const MAX_HOPS = 16;

/**
 * From a trusted peer: its `X-Device-Ip` when that is an IP address; else `X-Forwarded-For` read
 * from the right, skipping trusted hops, up to the first address a trusted hop did not add (what a
 * client writes into the header itself sits left of that and is ignored); else the peer.
 */
export function clientIp(deviceIp: string, forwardedFor: string, peer: string, trusted: BlockList): string {
  const socket = plain(peer);
  if (!isTrusted(trusted, socket)) return socket;
  const device = deviceIp.trim();
  if (device && isIP(device)) return plain(device);
  if (!forwardedFor) return socket;
  const hops = forwardedFor.split(',');
  let client = socket;
  for (let i = hops.length - 1; i >= 0 && i >= hops.length - MAX_HOPS; i--) {
    const hop = hops[i]!.trim();
    if (!isIP(hop)) break; // a malformed entry: trust stops at the last good hop
    client = plain(hop);
    if (!isTrusted(trusted, client)) break;
  }
  return client;
}
