/**
 * Several processes on one port (`WORKERS=N`, or `auto` = one per core): this process supervises,
 * each worker runs the whole service. uWS listens with SO_REUSEPORT, so the kernel spreads
 * connections over the workers. The memory state store is per process, so more than one worker
 * needs Redis; without DATABASE_URL the supervisor runs the embedded PostgreSQL once and hands
 * its URL to every worker. A worker that dies is started again (after a pause that grows while it
 * keeps dying young). SIGTERM/SIGINT stop the workers (each drains), then the database.
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { Config } from './config/index.js';
import type { Logger } from './log/index.js';
import { persistentSecret } from './config/secrets.js';
import { startEmbeddedPostgres, type EmbeddedServer } from './store/embedded-pg.js';

/** How many workers WORKERS asks for: unset or 1 → 1 (no supervisor), `auto` → cores. */
export function workerCount(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 1;
  if (raw.trim() === 'auto') return os.availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new Error(`WORKERS=${raw}: a whole number from 1 to 256, or auto`);
  return n;
}

/** Why WORKERS > 1 cannot run with this configuration, or null. */
export function clusterProblem(config: Config, workers: number): string | null {
  if (workers <= 1) return null;
  if (!config.redisUrl)
    return `WORKERS=${workers} needs REDIS_URL: the in-memory state store is per process, so streams, breaks and limits would differ between workers`;
  if (config.port === 0)
    return `WORKERS=${workers} needs a fixed PORT (with PORT=0 each worker would listen on another port)`;
  return null;
}

const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A worker that lived this long is healthy again: its next restart waits the minimum. */
const HEALTHY_AFTER_MS = 30_000;

export async function supervise(
  config: Config,
  log: Logger,
  workers: number,
  script: string,
  execArgv: string[],
): Promise<void> {
  // Shared secrets are created once here, not raced by N workers.
  if (!config.jwtSecret) persistentSecret(config.dataDir, 'jwt-secret');
  if (!config.beaconSecret) persistentSecret(config.dataDir, 'beacon-secret');
  let embedded: EmbeddedServer | undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, WORKERS: '1', SQZ_WORKER: '1' };
  if (!config.databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir, log);
    const c = embedded.connection;
    // libpq's environment names the server (the embedded one listens on a Unix socket, which a URL cannot name).
    Object.assign(env, {
      PGHOST: c.host,
      PGPORT: String(c.port),
      PGUSER: c.user,
      DATABASE_URL: `postgres:///${encodeURIComponent(c.database)}`,
    });
  }

  const children = new Map<number, { child: ChildProcess; startedAt: number; delay: number }>();
  let stopping = false;
  const start = (slot: number, delay = RESTART_MIN_MS) => {
    const child = fork(script, [], { env: { ...env, WORKER_ID: String(slot) }, execArgv, stdio: 'inherit' });
    children.set(slot, { child, startedAt: Date.now(), delay });
    log.info({ worker: slot, pid: child.pid }, 'worker started');
    child.on('exit', (code, signal) => {
      if (stopping) return;
      const entry = children.get(slot);
      const lived = Date.now() - (entry?.startedAt ?? 0);
      const wait =
        lived > HEALTHY_AFTER_MS ? RESTART_MIN_MS : Math.min(RESTART_MAX_MS, (entry?.delay ?? RESTART_MIN_MS) * 2);
      log.error({ worker: slot, pid: child.pid, code, signal, restartInMs: wait }, 'worker exited; starting it again');
      setTimeout(() => !stopping && start(slot, wait), wait).unref();
    });
  };
  for (let slot = 1; slot <= workers; slot++) start(slot);

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, workers: children.size }, 'stopping the workers');
    const exits = [...children.values()].map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    );
    const hard = setTimeout(
      () => [...children.values()].forEach(({ child }) => child.kill('SIGKILL')),
      config.shutdownDrainMs + config.shutdownGraceMs + 5000,
    );
    await Promise.all(exits);
    clearTimeout(hard);
    await embedded?.stop();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
