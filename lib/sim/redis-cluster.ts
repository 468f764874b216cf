/**
 * Real local Redis topologies for the cluster tests and the scale bench (docs/design.md §17), from
 * Debian's redis-server on free ports: a Redis Cluster of three primaries and three replicas joined
 * by `redis-cli --cluster create`, with a short node timeout so a killed primary's replica takes
 * over in a second or two; and a primary, a replica and one sentinel. One copy for both users: the
 * test helper (test/helpers/redis-cluster.ts) adds tap's skip and teardown, the bench calls stop().
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LocalCluster {
  ports: number[];
  /** A `redis+cluster://` URL naming every node as a seed. */
  url: string;
  cli(port: number, ...args: string[]): Promise<string>;
  /** The port of the primary that serves `key`'s slot. */
  primaryOf(key: string): Promise<number>;
  kill(port: number): void;
  /** Waits until every live node reports cluster_state:ok. */
  settled(deadlineMs: number): Promise<void>;
  /** Kills every node and removes the data folder. */
  stop(): void;
}

export interface LocalSentinel {
  url: string;
  primaryPort: number;
  cli(port: number, ...args: string[]): Promise<string>;
  kill(port: number): void;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function commandExists(cmd: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${cmd}`]).then(
    () => true,
    () => false,
  );
}

/** True when redis-server and redis-cli are installed (Debian's redis-server package has both). */
export async function redisToolsPresent(): Promise<boolean> {
  return (await commandExists('redis-server')) && (await commandExists('redis-cli'));
}

const cliOn = async (port: number, ...args: string[]) =>
  (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout.trim();

/**
 * Resolves once every replica of the primary on `port` has acknowledged the primary's replication
 * offset as of the call: the writes made before it are on the replicas. (A WAIT sent from
 * redis-cli counts only that connection's own writes, none, so it proves nothing.)
 */
export async function replicasCaughtUp(port: number, deadlineMs = 10_000): Promise<void> {
  const offset = Number(/master_repl_offset:(\d+)/.exec(await cliOn(port, 'info', 'replication'))?.[1] ?? NaN);
  await until(
    `the replicas of :${port} to reach offset ${offset}`,
    async () => {
      const info = await cliOn(port, 'info', 'replication');
      const acked = [...info.matchAll(/^slave\d+:.*offset=(\d+)/gm)].map((m) => Number(m[1]));
      return acked.length > 0 && acked.every((o) => o >= offset);
    },
    deadlineMs,
  );
}

async function until(what: string, check: () => Promise<boolean>, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a cluster of 3 primaries + 3 replicas; on a failure half-way every node started is killed. */
export async function startRedisCluster(): Promise<LocalCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-cluster-'));
  // Each node's cluster bus gets a free port of its own: by default it is the port + 10000, which
  // for an ephemeral port above 55535 does not exist (the node then never starts) and below it may
  // be taken. Twelve distinct ports: six for clients, six for the buses.
  const taken = new Set<number>();
  while (taken.size < 12) taken.add(await freePort());
  const all = [...taken];
  const ports = all.slice(0, 6);
  const busOf = new Map(ports.map((p, i) => [p, all[6 + i]!]));
  const procs = new Map<number, ChildProcess>();
  const stop = () => {
    for (const p of procs.values()) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const args = [
        '--port',
        String(port),
        '--cluster-port',
        String(busOf.get(port)),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        // A replica that has not synced yet, or lost its primary a while ago on a busy machine, would
        // refuse to take over; tests kill primaries seconds after the cluster forms.
        '--cluster-replica-validity-factor',
        '0',
        '--repl-diskless-sync-delay',
        '0',
      ];
      args.push('--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no');
      procs.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
    }
    await until(
      'the six nodes to answer',
      async () => (await Promise.all(ports.map((p) => cliOn(p, 'ping')))).every((r) => r === 'PONG'),
      20_000,
    );
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    const live = () => ports.filter((p) => procs.get(p)?.exitCode === null && !procs.get(p)?.killed);
    const settled = (deadlineMs: number) =>
      until(
        'cluster_state:ok on every node',
        async () =>
          (await Promise.all(live().map((p) => cliOn(p, 'cluster', 'info')))).every((r) =>
            r.includes('cluster_state:ok'),
          ),
        deadlineMs,
      );
    await settled(30_000);
    // cluster_state:ok says nothing of replication: wait until every replica holds its primary's data.
    await until(
      'every replica to finish its first sync',
      async () => {
        const roles = await Promise.all(ports.map((p) => cliOn(p, 'info', 'replication')));
        const replicas = roles.filter((r) => r.includes('role:slave'));
        return replicas.length === 3 && replicas.every((r) => r.includes('master_link_status:up'));
      },
      30_000,
    );
    return {
      ports,
      url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
      cli: cliOn,
      settled,
      stop,
      kill: (port) => procs.get(port)?.kill('SIGKILL'),
      async primaryOf(key) {
        const slot = Number(await cliOn(live()[0]!, 'cluster', 'keyslot', key));
        const nodes = (await cliOn(live()[0]!, 'cluster', 'nodes')).split('\n');
        for (const line of nodes) {
          const f = line.split(' ');
          if (!f[2]?.includes('master') || f[2].includes('fail')) continue;
          for (const range of f.slice(8)) {
            const [a, b] = range.split('-').map(Number);
            if (slot >= a! && slot <= (b ?? a!)) return Number(/:(\d+)@/.exec(f[1]!)![1]);
          }
        }
        throw new Error(`no primary serves slot ${slot}`);
      },
    };
  } catch (err) {
    stop();
    throw err;
  }
}

/** A primary, one replica and one sentinel (quorum 1) that fails over a second after the primary stops answering. */
export async function startRedisSentinel(): Promise<LocalSentinel> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-sentinel-'));
  const [primary, replica, sentinel] = [await freePort(), await freePort(), await freePort()];
  const procs = new Map<number, ChildProcess>();
  const stop = () => {
    for (const p of procs.values()) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const server = (port: number, ...extra: string[]) =>
      procs.set(
        port,
        spawn(
          'redis-server',
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--dir',
            dir,
            '--save',
            '',
            '--appendonly',
            'no',
            '--repl-diskless-sync-delay',
            '0',
            ...extra,
          ],
          { stdio: 'ignore' },
        ),
      );
    server(primary!);
    server(replica!, '--replicaof', '127.0.0.1', String(primary));
    const conf = path.join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sentinel}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor sqz 127.0.0.1 ${primary} 1`,
        'sentinel down-after-milliseconds sqz 1000',
        'sentinel failover-timeout sqz 3000',
        '',
      ].join('\n'),
    );
    procs.set(sentinel!, spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
    await until(
      'the sentinel to see the replica',
      async () => (await cliOn(sentinel!, 'sentinel', 'replicas', 'sqz')).includes(String(replica)),
      20_000,
    );
    // The sentinel lists the replica as soon as it connects, before its first full sync ends; a
    // primary killed then leaves a replica with an empty dataset to promote (seen under load).
    await until(
      'the replica to finish its first sync',
      async () => (await cliOn(replica!, 'info', 'replication')).includes('master_link_status:up'),
      30_000,
    );
    return {
      url: `redis+sentinel://127.0.0.1:${sentinel}/sqz`,
      primaryPort: primary!,
      cli: cliOn,
      stop,
      kill: (port) => procs.get(port)?.kill('SIGKILL'),
    };
  } catch (err) {
    stop();
    throw err;
  }
}
