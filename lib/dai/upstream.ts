/**
 * The upstream client of the manifest proxy: one undici Pool per origin, driven through
 * `dispatch` with a lean handler (no Readable, no fetch Response): body chunks go straight to the
 * caller's sink as they arrive. Explicit connect/headers/body timeouts, an overall deadline, a
 * response-size cap, and the body is always consumed or aborted.
 */
import { Pool, type Dispatcher, type buildConnector } from 'undici';

export interface UpstreamOptions {
  deadlineMs: number;
  connections?: number;
  maxResponseSize?: number;
  connectTimeoutMs?: number;
  /** A connector that checks every connection (OutboundPolicy.connector), for origins named by configuration data. */
  connect?: buildConnector.connector;
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
  start(status: number): boolean;
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

  constructor(
    origin: string,
    private readonly opts: UpstreamOptions,
  ) {
    this.origin = new URL(origin).origin;
    this.pool = new Pool(this.origin, {
      connections: opts.connections ?? 256,
      pipelining: 1,
      connect: opts.connect ?? { timeout: opts.connectTimeoutMs ?? Math.min(2000, opts.deadlineMs) },
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
    const exchange = new UpstreamExchange(sink, this.opts.deadlineMs);
    this.pool.dispatch({ path, method: 'GET', headers }, exchange);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * One upstream request as undici's core handler (`onConnect`/`onHeaders`/`onData`/`onComplete`/
 * `onError`, the interface undici's own client drives; Dispatcher.md): one object per request
 * instead of a closure per callback, and the raw response headers are never parsed into an
 * object, since the proxy copies none of them.
 */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  private abortRequest: ((err: Error) => void) | undefined;
  private status = 0;
  private keep = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly sink: UpstreamSink,
    private readonly deadlineMs: number,
  ) {
    this.timer = setTimeout(() => this.expire(), deadlineMs);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    if (this.settled) abort(new UpstreamError('timeout', 'deadline passed before the request started'));
  }

  onHeaders(statusCode: number): boolean {
    if (statusCode < 200) return true; // 1xx informational
    this.status = statusCode;
    this.keep = this.sink.start(statusCode);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.keep && !this.settled) this.sink.data(chunk);
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(err: Error): void {
    this.finish(classify(err));
  }

  private expire(): void {
    const err = new UpstreamError('timeout', `upstream did not answer within ${this.deadlineMs} ms`);
    this.abortRequest?.(err);
    this.finish(err);
  }

  private finish(err?: UpstreamError): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (err) this.sink.error(err);
    else this.sink.end(this.status);
  }
}

function classify(err: Error): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_CODES.has(code)) return new UpstreamError('timeout', `upstream timed out (${code})`);
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new UpstreamError('too-large', 'upstream response exceeds the size limit');
  return new UpstreamError('failed', `upstream request failed: ${code || err.message}`);
}
