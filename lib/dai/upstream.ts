/**
 * The upstream client of the manifest proxy: one undici Pool per origin, driven through
 * `dispatch` with a lean handler (no Readable, no fetch Response): body chunks go straight to the
 * caller's sink as they arrive. Explicit connect/headers/body timeouts, an overall deadline, a
 * response-size cap, and the body is always consumed or aborted.
 */
import { Pool, type Dispatcher } from 'undici';

export interface UpstreamOptions {
  deadlineMs: number;
  connections?: number;
  maxResponseSize?: number;
  connectTimeoutMs?: number;
}

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly code: 'timeout' | 'failed' | 'too-large',
    message: string,
  ) {
    super(message);
  }
}

export interface UpstreamSink {
  /** Called once with the final status; return false to discard the body (still consumed). */
  start(status: number, headers: Record<string, string | string[] | undefined>): boolean;
  data(chunk: Buffer): void;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export class Upstream {
  private readonly pool: Pool;
  readonly origin: string;

  constructor(origin: string, private readonly opts: UpstreamOptions) {
    this.origin = new URL(origin).origin;
    this.pool = new Pool(this.origin, {
      connections: opts.connections ?? 256,
      pipelining: 1,
      connect: { timeout: opts.connectTimeoutMs ?? Math.min(2000, opts.deadlineMs) },
      headersTimeout: opts.deadlineMs,
      bodyTimeout: opts.deadlineMs,
      keepAliveTimeout: 30_000,
      maxResponseSize: opts.maxResponseSize ?? 16 * 1024 * 1024,
    });
  }

  /** GETs path (with its query) and streams the body into sink; resolves with the status once the body ended. */
  get(path: string, headers: Record<string, string>, sink: UpstreamSink): Promise<number> {
    return new Promise((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let status = 0;
      let keep = false;
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(status);
      };
      const timer = setTimeout(() => {
        const err = new UpstreamError('timeout', `upstream did not answer within ${this.opts.deadlineMs} ms`);
        controller?.abort(err);
        finish(err);
      }, this.opts.deadlineMs);
      this.pool.dispatch(
        { path, method: 'GET', headers },
        {
          onRequestStart: (c) => {
            controller = c;
            if (settled) c.abort(new UpstreamError('timeout', 'deadline passed before the request started'));
          },
          onResponseStart: (_c, statusCode, resHeaders) => {
            if (statusCode < 200) return; // 1xx informational
            status = statusCode;
            keep = sink.start(statusCode, resHeaders);
          },
          onResponseData: (_c, chunk) => {
            if (keep && !settled) sink.data(chunk);
          },
          onResponseEnd: () => finish(),
          onResponseError: (_c, err) => finish(classify(err)),
        },
      );
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function classify(err: Error): Error {
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_CODES.has(code)) return new UpstreamError('timeout', `upstream timed out (${code})`);
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new UpstreamError('too-large', 'upstream response exceeds the size limit');
  return new UpstreamError('failed', `upstream request failed: ${code || err.message}`);
}
