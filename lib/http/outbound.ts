/**
 * Outbound fetches to URLs that come from data (feed URIs, beacon targets, ad wrappers) rather than
 * from configuration (DESIGN.md §7): the host is resolved once and the connection goes to the
 * checked address; private, loopback, link-local and other special ranges are refused unless
 * ALLOW_PRIVATE_OUTBOUND=true. Redirects are not followed.
 */
import dns from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent } from 'undici';

const blocked = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 127], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['::ffff:0:0', 96]] as const) blocked.addSubnet(net, bits, 'ipv6');

export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  code = 'OUTBOUND_REFUSED';
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  return family === 0 || blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Whether a URL that came from data (a VAST creative the transcoder will fetch) points at a public
 * host: http(s), and every address its name resolves to is public (unless private ones are allowed).
 */
export async function isPublicUrl(url: string, allowPrivate: boolean): Promise<boolean> {
  let host: string;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
    host = u.hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  if (allowPrivate) return true;
  if (isIP(host)) return !isPrivateAddress(host);
  try {
    const addresses = await dns.promises.lookup(host, { all: true });
    return addresses.length > 0 && addresses.every((a) => !isPrivateAddress(a.address));
  } catch {
    return false;
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** An undici Agent whose connections only reach public addresses (unless allowed). */
export function guardedAgent(allowPrivate: boolean, opts: { timeoutMs: number; maxResponseSize: number }): Agent {
  const lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad && !allowPrivate) return callback(new OutboundRefused(`${hostname} resolves to a private address (${bad.address})`), []);
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
  return new Agent({
    connect: { timeout: Math.min(opts.timeoutMs, 5000), lookup: lookup as never },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    maxResponseSize: opts.maxResponseSize,
    connections: 16,
  });
}
