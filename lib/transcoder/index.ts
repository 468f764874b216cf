/**
 * The reference transcoder (docs/design.md §12): `startTranscoder` builds the service and its HTTP
 * server; `npm run transcoder` (bin/transcoder.ts) and the tests start it the same way.
 */
import type http from 'node:http';
import type { Logger } from '../log/index.js';
import { OutboundPolicy } from '../outbound/index.js';
import type { TranscoderConfig } from './config.js';
import { createTranscoderServer } from './server.js';
import { Transcoder } from './service.js';

export { loadTranscoderConfig, type TranscoderConfig } from './config.js';
export { Transcoder } from './service.js';

export interface RunningTranscoder {
  url: string;
  transcoder: Transcoder;
  server: http.Server;
  close(): Promise<void>;
}

export async function startTranscoder(config: TranscoderConfig, log: Logger): Promise<RunningTranscoder> {
  const policy = new OutboundPolicy({ allowPrivate: config.allowPrivate, trusted: [], log });
  const transcoder = new Transcoder({ ...config, publicUrl: config.publicUrl }, policy);
  const server = await new Promise<http.Server>((resolve, reject) => {
    const s = createTranscoderServer(transcoder, {
      corsOrigins: config.corsOrigins,
      retentionSec: config.retentionSec,
      log,
    });
    s.once('error', reject);
    s.listen(config.port, config.host, () => resolve(s));
  }).catch(async (err: unknown) => {
    await transcoder.close();
    await policy.close();
    throw err;
  });
  const port = (server.address() as { port: number }).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${port}`;
  // The public URL is only known once listening (port 0 in tests); the service reads it per job.
  transcoder.opts.publicUrl = config.publicUrl || url;
  await transcoder.clearTmp();
  transcoder
    .checkFfmpeg()
    .catch((err: Error) =>
      log.error({ err: err.message }, 'ffmpeg is not usable: squeeze jobs will answer 503 until it is'),
    );
  return {
    url,
    transcoder,
    server,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await transcoder.close();
      await policy.close();
    },
  };
}
