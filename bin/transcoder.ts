/** Entry point of `npm run transcoder`: the reference transcoder (lib/transcoder), configured from the environment. */
import { ConfigError } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { loadTranscoderConfig, startTranscoder, type RunningTranscoder } from '../lib/transcoder/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadTranscoderConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel).child({ part: 'transcoder' });
  let running: RunningTranscoder | undefined;
  const stop = (signal: string) => {
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), 10_000).unref();
    void (running?.close() ?? Promise.resolve()).then(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    running = await startTranscoder(config, log);
  } catch (err) {
    log.fatal({ err }, 'start-up failed');
    process.exit(1);
  }
  log.info(
    {
      url: running.url,
      publicUrl: running.transcoder.opts.publicUrl,
      dataDir: config.dataDir,
      concurrency: config.concurrency,
    },
    'transcoder listening',
  );
}

void main();
