/**
 * REDIS_URL's three forms (docs/design.md §17):
 *
 * - `redis://[user:pass@]host:port[/db]` (or `rediss://`): one server;
 * - `redis+cluster://[user:pass@]host1:port1,host2:port2,…` (or `rediss+cluster://`): a Redis
 *   Cluster, any of its nodes as seeds (the client discovers the rest);
 * - `redis+sentinel://[user:pass@]host1:port1,host2:port2,…/master-name[/db]`: a primary found
 *   through Sentinel (the password is the data nodes'; sentinels without auth).
 */
export interface RedisNode {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; username?: string; password?: string; tls: boolean }
  | {
      kind: 'sentinel';
      sentinels: RedisNode[];
      name: string;
      db: number;
      username?: string;
      password?: string;
      tls: boolean;
    };

const MULTI = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#]+)(\/[^?#]*)?$/;

export function parseRedisUrl(url: string): RedisTarget {
  const m = MULTI.exec(url);
  if (!m) {
    if (!/^rediss?:\/\//.test(url))
      throw new Error('REDIS_URL must start with redis://, rediss://, redis+cluster:// or redis+sentinel://');
    return { kind: 'single', url };
  }
  const [, scheme, kind, auth, hostList, path] = m;
  const tls = scheme === 'rediss';
  const nodes = hostList!.split(',').map(parseNode);
  const [user, pass] = auth === undefined ? [] : splitAuth(auth);
  const creds = { ...(user ? { username: user } : {}), ...(pass ? { password: pass } : {}) };
  if (kind === 'cluster') return { kind: 'cluster', nodes, tls, ...creds };
  const [name, db] = (path ?? '').split('/').filter(Boolean);
  if (!name) throw new Error('a redis+sentinel:// URL names the primary: redis+sentinel://host:port,…/master-name');
  const dbNumber = db === undefined ? 0 : Number(db);
  if (!Number.isInteger(dbNumber) || dbNumber < 0) throw new Error(`REDIS_URL: ${db} is not a database number`);
  return { kind: 'sentinel', sentinels: nodes, name: decodeURIComponent(name), db: dbNumber, tls, ...creds };
}

function parseNode(hostPort: string): RedisNode {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(hostPort.trim());
  if (!m) throw new Error(`REDIS_URL: ${hostPort} is not host:port`);
  const port = m[2] === undefined ? 6379 : Number(m[2]);
  if (port < 1 || port > 65535) throw new Error(`REDIS_URL: ${hostPort} has no valid port`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function splitAuth(auth: string): [string, string] {
  const i = auth.indexOf(':');
  return i < 0
    ? ['', decodeURIComponent(auth)]
    : [decodeURIComponent(auth.slice(0, i)), decodeURIComponent(auth.slice(i + 1))];
}

/** The URL with its credentials hidden, for logs and errors. */
export function redactRedisUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
