/**
 * The upstream client of the manifest proxy: one lean keep-alive pool per origin (h1-pool.ts; it
 * replaced undici's Pool here after a measured race, docs/decisions.md), body chunks straight to
 * the caller's sink as they arrive. Explicit connect timeout, an overall deadline, a
 * response-size cap, and the body is always consumed or the connection closed.
 */
import { buildConnector } from 'undici';
import { H1_SOCKET_OPTIONS, H1Pool, H1Request, type H1Error, type H1Handler } from './h1-pool.js';

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
    /** Public: answered to the client, so it never names an address or a URL. */
    message: string,
    /** For the log only: the socket-level reason (it may name internal addresses). */
    readonly internal?: string,
  ) {
    super(message);
  }
}

/** Receives one upstream response. Exactly one of end and error is called, once. */
export interface UpstreamSink {
  /** Called once with the final status (and the upstream's Last-Modified, as sent); return false to discard the body (still consumed). */
  start(status: number, lastModified?: string): boolean;
  /** Body bytes; a chunk stays valid until end() or error() returns (copy it to keep it longer). */
  data(chunk: Buffer): void;
  /** The response is complete (its body consumed). */
  end(status: number): void;
  /** Connect or read failure, a timeout, the size cap, or the overall deadline. */
  error(err: UpstreamError): void;
}

/** Header values go into the request head as written: one that could end a line or is not text is dropped. */
const SAFE_VALUE = /^[\x20-\x7e\t]*$/;
const SAFE_PATH = /^\/[\x21-\x7e]*$/;
const SAFE_QUERY = /^[\x21-\x7e]*$/;
/** Paths remembered as checked, per pool: a manifest path recurs (its query is what changes per request). */
const SAFE_PATHS_KEPT = 10_000;

/** A constant header set's request lines, encoded once per object (the hot path sends one set on every request). */
const encodedHeaders = new WeakMap<object, string>();

function headerLines(headers: Readonly<Record<string, string>>): string {
  let lines = encodedHeaders.get(headers);
  if (lines === undefined) {
    lines = '';
    for (const name in headers) {
      const value = headers[name]!;
      if (SAFE_VALUE.test(value)) lines += `${name}: ${value}\r\n`;
    }
    if (Object.isFrozen(headers)) encodedHeaders.set(headers, lines);
  }
  return lines;
}

export class Upstream {
  /** What a connector's plain sockets need for this client (OutboundPolicy.connector's plainSocket). */
  static readonly socketOptions = H1_SOCKET_OPTIONS;
  private readonly pool: H1Pool;
  readonly origin: string;
  private readonly hostLine: string;
  private readonly safePaths = new Set<string>();

  constructor(
    origin: string,
    private readonly opts: UpstreamOptions,
  ) {
    this.origin = new URL(origin).origin;
    const connectTimeout = opts.connectTimeoutMs ?? Math.min(2000, opts.deadlineMs);
    this.pool = new H1Pool(this.origin, {
      connections: opts.connections ?? 256,
      connect:
        opts.connect ??
        buildConnector({ ...H1_SOCKET_OPTIONS, timeout: connectTimeout } as buildConnector.BuildOptions),
      maxResponseSize: opts.maxResponseSize ?? 16 * 1024 * 1024,
      idleMs: 30_000,
    });
    this.hostLine = `\r\nhost: ${this.pool.host}\r\n`;
  }

  /**
   * GETs path?query and streams the body into sink. headers: a constant set (encoded once per
   * object); forwardedFor: the viewer's address, sent as X-Forwarded-For. The path and the query
   * are checked apart: a path is checked once while remembered (a regular expression over a
   * manifest path and a unique query cost ~1,100 instructions of a distinct request, issue 31).
   * Callbacks, not a promise: this is the hot path of every manifest request.
   */
  get(
    path: string,
    headers: Readonly<Record<string, string>>,
    sink: UpstreamSink,
    forwardedFor = '',
    query = '',
  ): void {
    if (!this.safePath(path) || (query && !SAFE_QUERY.test(query))) {
      sink.error(new UpstreamError('failed', 'the upstream path holds characters a request line cannot carry'));
      return;
    }
    let head = query
      ? `GET ${path}?${query} HTTP/1.1${this.hostLine}${headerLines(headers)}`
      : `GET ${path} HTTP/1.1${this.hostLine}${headerLines(headers)}`;
    if (forwardedFor && SAFE_VALUE.test(forwardedFor)) head += `x-forwarded-for: ${forwardedFor}\r\n`;
    this.pool.enqueue(
      new H1Request(`${head}\r\n`, new UpstreamExchange(sink, this.opts.deadlineMs), Date.now() + this.opts.deadlineMs),
    );
  }

  private safePath(path: string): boolean {
    if (this.safePaths.has(path)) return true;
    if (!SAFE_PATH.test(path)) return false;
    if (this.safePaths.size >= SAFE_PATHS_KEPT) this.safePaths.clear();
    this.safePaths.add(path);
    return true;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** One upstream request's translation to the sink: one object per request, no closures. */
class UpstreamExchange implements H1Handler {
  private code = 0;
  private settled = false;

  constructor(
    private readonly sink: UpstreamSink,
    private readonly deadlineMs: number,
  ) {}

  status(code: number, lastModified?: string): boolean {
    this.code = code;
    return this.sink.start(code, lastModified);
  }

  data(chunk: Buffer): void {
    if (!this.settled) this.sink.data(chunk);
  }

  end(): void {
    this.finish();
  }

  error(err: H1Error): void {
    this.finish(this.classify(err));
  }

  private finish(err?: UpstreamError): void {
    if (this.settled) return;
    this.settled = true;
    if (err) this.sink.error(err);
    else this.sink.end(this.code);
  }

  private classify(err: H1Error): UpstreamError {
    if (err.code === 'timeout')
      return new UpstreamError('timeout', `upstream did not answer within ${this.deadlineMs} ms`);
    return classify(err);
  }
}

function classify(err: H1Error): UpstreamError {
  if (err.code === 'too-large') return new UpstreamError('too-large', 'upstream response exceeds the size limit');
  if (err.code === 'connect' && /timeout/i.test(err.message))
    return new UpstreamError('timeout', `upstream connect timed out`);
  return new UpstreamError('failed', 'the upstream request failed', err.message);
}
