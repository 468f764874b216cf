/** Entry point of `npm start`: load and validate config, start the service, stop cleanly on SIGTERM/SIGINT. */
import { loadConfig, ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { startService, type Service } from '../lib/app.js';
import { UwsLoadError } from '../lib/http/uws.js';

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
  const log = createLogger(config.logLevel);
  let service: Service | undefined;
  let stopping = false;
  const stop = (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(code || 1), config.shutdownGraceMs + STOP_PARTS_MS).unref();
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
