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

/** Receives one upstream response. Exactly one of end and error is called, once. */
export interface UpstreamSink {
  /** Called once with the final status; return false to discard the body (still consumed). */
  start(status: number, headers: Record<string, string | string[] | undefined>): boolean;
  data(chunk: Buffer): void;
  /** The response is complete (its body consumed). */
  end(status: number): void;
  /** Connect or read failure, a timeout, the size cap, or the overall deadline. */
  error(err: UpstreamError): void;
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

  /**
   * GETs path (with its query) and streams the body into sink. Callbacks, not a promise: this is
   * the hot path of every manifest request, and undici's dispatch is callback-driven already.
   */
  get(path: string, headers: Record<string, string>, sink: UpstreamSink): void {
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    let keep = false;
    let settled = false;
    const finish = (err?: UpstreamError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) sink.error(err);
      else sink.end(status);
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
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function classify(err: Error): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_CODES.has(code)) return new UpstreamError('timeout', `upstream timed out (${code})`);
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new UpstreamError('too-large', 'upstream response exceeds the size limit');
  return new UpstreamError('failed', `upstream request failed: ${code || err.message}`);
}
