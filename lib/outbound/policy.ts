/**
 * The one outbound policy (docs/design.md §7, §13): every fetch the service makes on its own account
 * (ad requests, VAST/VMAP wrappers, beacons, MRSS pulls, source playlists, ID3 segments, stitching
 * sources, the transcoder) goes through an Agent built here, and the check runs in that Agent's
 * connector, so it holds for every connection: IP literals (which never reach a DNS lookup), names
 * (resolved once; the socket connects to the address that was checked, so a second answer cannot
 * rebind it) and any redirect hop a caller might follow.
 *
 * - http and https only;
 * - configured collaborators (DAI host, content origin, ad server, transcoder) are allowed by name,
 *   wherever they resolve;
 * - every other host must resolve only to global unicast addresses (./address.ts), unless
 *   ALLOW_PRIVATE_OUTBOUND is on (tests, demos, local set-ups).
 * A refusal is logged once per host and reason (then at most every few minutes) and counted.
 */
import dns from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { blockedRange } from './address.js';
import type { Logger } from '../log/index.js';
import type { Registry, Counter } from '../metrics/index.js';

export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  readonly code = 'OUTBOUND_REFUSED';
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`outbound request to ${host} refused: ${reason}`);
  }
}

export type Lookup = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface OutboundPolicyOptions {
  allowPrivate: boolean;
  /** Base URLs (or host[:port]) of the configured collaborators; empty entries are ignored. */
  trusted: ReadonlyArray<string | undefined>;
  log?: Logger;
  metrics?: Registry;
  /** The resolver (tests inject one); dns.lookup by default. */
  lookup?: Lookup;
}

export interface AgentOptions {
  timeoutMs: number;
  maxResponseSize: number;
  connections?: number;
}

const SCHEMES = new Set(['http:', 'https:']);
const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };
const LOG_EVERY_MS = 5 * 60_000;

function hostKey(spec: string): string {
  const u = new URL(spec.includes('://') ? spec : `http://${spec}`);
  return u.host.toLowerCase();
}

type ConnectOptions = Parameters<buildConnector.connector>[0];
type ConnectCallback = Parameters<buildConnector.connector>[1];

export class OutboundPolicy {
  readonly allowPrivate: boolean;
  private readonly trusted: Set<string>;
  private readonly lookup: Lookup;
  private readonly logged = new Map<string, number>();
  private readonly refusedCounter: Counter | undefined;
  private readonly agents: Agent[] = [];

  constructor(private readonly opts: OutboundPolicyOptions) {
    this.allowPrivate = opts.allowPrivate;
    this.trusted = new Set(opts.trusted.filter((t): t is string => !!t).map(hostKey));
    this.lookup = opts.lookup ?? (dns.lookup as unknown as Lookup);
    this.refusedCounter = opts.metrics
      ?.counter('outbound_refused_total', 'Outbound connections refused by the outbound policy')
      .with();
  }

  /** Whether host[:port] (as in URL.host) names a configured collaborator. */
  isTrusted(host: string): boolean {
    return this.trusted.has(host.toLowerCase());
  }

  /**
   * The checks that need no DNS, before a request is queued: a parseable http(s) URL, and an IP
   * literal in an allowed range. Throws OutboundRefused; answers the parsed URL.
   */
  assertUrl(url: string): URL {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw this.refuse('(unparseable URL)', 'not a URL');
    }
    if (!SCHEMES.has(u.protocol)) throw this.refuse(u.host || u.protocol, `scheme ${u.protocol} is not allowed`);
    if (!this.isTrusted(u.host)) {
      const reason = this.addressProblem(u.hostname.replace(/^\[|\]$/g, ''));
      if (reason) throw this.refuse(u.host, reason);
    }
    return u;
  }

  /** Whether a URL handed to someone else (the transcoder fetches creatives) passes the policy. */
  async allows(url: string): Promise<boolean> {
    let u: URL;
    try {
      u = this.assertUrl(url);
    } catch {
      return false;
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (this.allowPrivate || this.isTrusted(u.host) || isIP(host)) return true;
    return new Promise((resolve) =>
      this.lookup(host, { all: true }, (err, addresses) => {
        if (err || addresses.length === 0) return resolve(false);
        const bad = addresses.find((a) => blockedRange(a.address));
        if (bad) this.refuse(u.host, `resolves to a ${blockedRange(bad.address)} address (${bad.address})`);
        resolve(!bad);
      }),
    );
  }

  /** An undici Agent whose every connection is checked by this policy. Closed by close(). */
  agent(opts: AgentOptions): Agent {
    const agent = new Agent({
      connect: this.connector(Math.min(opts.timeoutMs, 5000)),
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      maxResponseSize: opts.maxResponseSize,
      connections: opts.connections ?? 16,
    });
    this.agents.push(agent);
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all(this.agents.splice(0).map((a) => a.close().catch(() => undefined)));
  }

  /**
   * The connector: trusted names connect as they are; every other connection is checked first.
   * plainSocket: extra options for plain-TCP (`http:`) sockets only, such as `onread` (a TLS socket
   * is left as it is).
   */
  connector(timeoutMs: number, plainSocket: Partial<buildConnector.BuildOptions> = {}): buildConnector.connector {
    const checkedLookup = (
      hostname: string,
      options: dns.LookupOptions,
      callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
    ) => {
      this.lookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, []);
        if (!addresses.length)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        const bad = this.allowPrivate ? undefined : addresses.find((a) => blockedRange(a.address));
        if (bad)
          return callback(
            this.refuse(hostname, `resolves to a ${blockedRange(bad.address)} address (${bad.address})`),
            [],
          );
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
    const checked = {
      tls: buildConnector({ timeout: timeoutMs, lookup: checkedLookup } as buildConnector.BuildOptions),
      http: buildConnector({
        ...plainSocket,
        timeout: timeoutMs,
        lookup: checkedLookup,
      } as buildConnector.BuildOptions),
    };
    const trusted = {
      tls: buildConnector({ timeout: timeoutMs }),
      http: buildConnector({ ...plainSocket, timeout: timeoutMs } as buildConnector.BuildOptions),
    };
    return (options: ConnectOptions, callback: ConnectCallback) => {
      const port = options.port && options.port !== DEFAULT_PORT[options.protocol] ? `:${options.port}` : '';
      const host = (options.hostname.includes(':') ? `[${options.hostname}]` : options.hostname) + port;
      if (!SCHEMES.has(options.protocol))
        return callback(this.refuse(host, `scheme ${options.protocol} is not allowed`), null);
      const kind = options.protocol === 'http:' ? 'http' : 'tls';
      if (this.isTrusted(host)) return trusted[kind](options, callback);
      // net.connect skips the lookup for an IP literal, so literals are checked here.
      const problem = isIP(options.hostname) ? this.addressProblem(options.hostname) : null;
      if (problem) return callback(this.refuse(host, problem), null);
      return checked[kind](options, callback);
    };
  }

  private addressProblem(host: string): string | null {
    if (this.allowPrivate || !isIP(host)) return null;
    const range = blockedRange(host);
    return range ? `${host} is a ${range} address` : null;
  }

  private refuse(host: string, reason: string): OutboundRefused {
    const err = new OutboundRefused(host, reason);
    this.refusedCounter?.inc();
    const key = `${host} ${reason}`;
    const now = Date.now();
    const last = this.logged.get(key);
    if (last === undefined || now - last > LOG_EVERY_MS) {
      if (this.logged.size > 10_000) this.logged.clear();
      this.logged.set(key, now);
      this.opts.log?.warn({ host, reason }, 'outbound request refused');
    }
    return err;
  }
}
