/**
 * The viewer's address for the ad request: `X-Device-Ip` when it is an IP address; else, when the
 * connection comes from a trusted proxy (TRUSTED_PROXIES, loopback by default), the first address
 * of `X-Forwarded-For` (the client as the outermost proxy saw it); else the socket's peer.
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
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
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

export function clientIp(deviceIp: string, forwardedFor: string, peer: string, trusted: BlockList): string {
  const device = deviceIp.trim();
  if (device && isIP(device)) return plain(device);
  const socket = plain(peer);
  if (forwardedFor && isTrusted(trusted, socket)) {
    const first = forwardedFor.split(',', 1)[0]!.trim();
    if (isIP(first)) return plain(first);
  }
  return socket;
}
