/**
 * Entry point of `npm start`: load and validate config, start the service, stop cleanly on
 * SIGTERM/SIGINT. With WORKERS > 1 this process supervises that many workers (lib/supervisor.ts).
 */
import { fileURLToPath } from 'node:url';
import { loadConfig, ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { startService, type Service } from '../lib/app.js';
import { UwsLoadError } from '../lib/http/uws.js';
import { clusterProblem, supervise, workerCount } from '../lib/supervisor.js';

/** After the drain (SHUTDOWN_GRACE_MS), the parts get this long to stop before the process exits anyway. */
const STOP_PARTS_MS = 5000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  let workers: number;
  try {
    workers = workerCount(process.env['WORKERS']);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const problem = clusterProblem(config, workers);
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(2);
  }
  const root = createLogger(config.logLevel);
  const log = process.env['SQZ_WORKER'] ? root.child({ worker: Number(process.env['WORKER_ID']) }) : root;
  if (workers > 1) {
    await supervise(
      config,
      root.child({ role: 'supervisor' }),
      workers,
      fileURLToPath(import.meta.url),
      process.execArgv,
    );
    return;
  }
  let service: Service | undefined;
  let stopping = false;
  const stop = (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(code || 1), config.shutdownDrainMs + config.shutdownGraceMs + STOP_PARTS_MS).unref();
    void (service?.close() ?? Promise.resolve()).then(
      () => process.exit(code),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception');
    stop('uncaughtException', 1);
  });
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
  try {
    service = await startService(config, log);
  } catch (err) {
    if (err instanceof UwsLoadError) log.fatal(err.message);
    else log.fatal({ err }, 'start-up failed');
    process.exit(1);
  }
  if (stopping) await service.close();
}

void main();
