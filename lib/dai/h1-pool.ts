/**
 * A lean HTTP/1.1 client for the manifest hot path: keep-alive connections to one origin, one
 * request at a time on each (no pipelining), GET only. It exists because undici's Pool costs
 * about a tenth of a distinct-stream request's CPU (its request object and validation, the
 * dispatcher queue, a wasm→JS call per header that nobody here reads); this one writes one
 * preformatted head and reads the status, framing and body with `indexOf` over the bytes
 * (docs/decisions.md "A lean upstream client", with the race against undici that kept it).
 *
 * Framing follows RFC 9112 §6: no body for 1xx/204/304; `Transfer-Encoding: chunked` (§7.1),
 * else `Content-Length`, else the body runs to the connection's close. A response with both, or
 * with two different lengths, is refused (§6.3: request smuggling). Sockets come from the
 * outbound policy's connector, so every connection is checked where it is made.
 */
import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';

/** What one request hears. Exactly one of end and error is called, once, unless the caller aborted. */
export interface H1Handler {
  /** The final status (1xx are skipped); return false to drop the body (it is still read). */
  status(code: number): boolean;
  /** Body bytes; a chunk stays valid until end() or error() returns (copy it to keep it longer). */
  data(chunk: Buffer): void;
  end(): void;
  error(err: H1Error): void;
}

export class H1Error extends Error {
  override name = 'H1Error';
  constructor(
    readonly code: 'connect' | 'closed' | 'protocol' | 'too-large' | 'aborted' | 'timeout',
    message: string,
  ) {
    super(message);
  }
}

export interface H1PoolOptions {
  connect: buildConnector.connector;
  /** Open connections at most; requests beyond wait in order. */
  connections: number;
  maxResponseSize: number;
  /** An idle connection is closed after this long (before the server's own keep-alive timeout, usually). */
  idleMs: number;
  /** How often deadlines are checked (default 50 ms: a request ends at most this late). */
  sweepMs?: number;
}

/** A request as written: its head, its deadline, and where it stands. */
export class H1Request {
  /** Set by abort(), or once the handler heard its end or error. */
  done = false;
  /** Tried once more on a fresh connection when a reused one failed before any byte came back. */
  retried = false;
  conn: Connection | undefined;

  /**
   * @param deadline the time (Date.now()) by which it must have ended; the pool's sweep fails it
   *   with a `timeout` then. One timestamp instead of a timer per request: arming and clearing a
   *   timer was a visible share of a distinct request's CPU.
   */
  constructor(
    readonly head: string,
    readonly handler: H1Handler,
    readonly deadline = Infinity,
  ) {}

  /** Stops the request: the connection it was on is closed, not reused; the handler hears nothing more. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    this.conn?.destroy();
  }

  /** The deadline passed: the handler hears a timeout, and the connection is closed. */
  expire(): void {
    if (this.done) return;
    this.abort();
    this.handler.error(new H1Error('timeout', 'the deadline passed'));
  }
}

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailers,
  UntilClose,
}

/**
 * Plain-TCP connections read into one shared buffer (net's `onread`), so a read allocates nothing:
 * by default every read is a fresh 64 KiB allocation shrunk to what arrived, an ArrayBuffer per
 * upstream response for V8 to track and free. Reads run one at a time on this thread and the
 * parser is done with the bytes when the callback returns, except for body bytes that must outlive
 * it, which are copied (see Connection.body). TLS sockets keep Node's own buffers ('data' events).
 */
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);
const CONNECTION = Symbol('h1-pool connection');
type PoolSocket = Socket & { [CONNECTION]?: Connection };

/** Options for the connector's plain sockets (OutboundPolicy.connector's plainSocket). */
export const H1_SOCKET_OPTIONS = Object.freeze({
  onread: Object.freeze({
    buffer: () => READ_BUFFER,
    callback(this: PoolSocket, nread: number, buf: Buffer): boolean {
      this[CONNECTION]?.read(buf.subarray(0, nread), true);
      return true; // keep reading
    },
  }),
});

const CRLF = 0x0a; // lines end at LF; a CR before it is dropped (RFC 9112 §2.2 lets a recipient accept a bare LF)
const MAX_HEAD = 16 * 1024;
const MAX_LINE = 4096;

class Connection {
  socket: Socket | undefined;
  req: H1Request | undefined;
  idleSince = 0;
  /** Responses completed on this connection: a reused one may have been closed by the server while idle. */
  served = 0;
  private state = State.Head;
  private pending: Buffer | undefined;
  private remaining = 0;
  private bodyBytes = 0;
  private keep = false;
  private keepAlive = true;
  private sawByte = false;
  /** Whether the bytes being parsed are READ_BUFFER's. */
  private shared = false;

  constructor(private readonly pool: H1Pool) {}

  attach(socket: PoolSocket): void {
    this.socket = socket;
    socket[CONNECTION] = this;
    socket.on('data', (chunk: Buffer) => this.read(chunk, false)); // TLS, or a socket made without H1_SOCKET_OPTIONS
    socket.on('error', () => undefined); // 'close' follows and settles the request
    socket.on('close', () => this.closed());
  }

  send(req: H1Request): void {
    this.req = req;
    req.conn = this;
    this.state = State.Head;
    this.bodyBytes = 0;
    this.sawByte = false;
    this.keepAlive = true;
    this.socket!.write(req.head, 'latin1');
  }

  destroy(): void {
    this.socket?.destroy();
  }

  private closed(): void {
    const req = this.req;
    this.req = undefined;
    this.socket = undefined;
    this.pool.lost(this);
    if (!req || req.done) return;
    if (this.state === State.UntilClose) return this.finish(req);
    if (!this.sawByte && this.served > 0 && !req.retried) {
      // The server closed an idle connection just as the request went out: GET is safe to repeat.
      req.retried = true;
      req.conn = undefined;
      this.pool.enqueue(req);
      return;
    }
    req.done = true;
    req.handler.error(new H1Error('closed', this.sawByte ? 'the connection closed mid-response' : 'the connection closed before a response'));
  }

  private fail(code: H1Error['code'], message: string): void {
    const req = this.req;
    this.req = undefined;
    this.socket?.destroy();
    if (req && !req.done) {
      req.done = true;
      req.handler.error(new H1Error(code, message));
    }
  }

  private finish(req: H1Request): void {
    this.req = undefined;
    this.served++;
    if (!req.done) {
      req.done = true;
      req.handler.end();
    }
  }

  /** shared: chunk is a view of READ_BUFFER, overwritten by the next read of any connection. */
  read(chunk: Buffer, shared: boolean): void {
    const req = this.req;
    if (!req || req.done) {
      // Bytes nobody asked for (or for an aborted request): the connection's framing is lost.
      this.socket?.destroy();
      return;
    }
    this.sawByte = true;
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
      shared = false;
    }
    this.shared = shared;
    let at = 0;
    while (at < buf.length && this.req) {
      switch (this.state) {
        case State.Head: {
          const end = headEnd(buf, at);
          if (end === -1 || end - at > MAX_HEAD) return this.hold(buf, at, end === -1 ? MAX_HEAD : 0, 'the response head is over 16 KiB');
          const next = this.head(buf, at, end);
          if (next === -1) return;
          at = next;
          break;
        }
        case State.Length: {
          const n = Math.min(this.remaining, buf.length - at);
          if (!this.body(buf, at, at + n, n === this.remaining)) return;
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) return this.complete(buf, at);
          break;
        }
        case State.UntilClose: {
          if (!this.body(buf, at, buf.length, false)) return;
          at = buf.length;
          break;
        }
        case State.ChunkSize: {
          const lf = buf.indexOf(CRLF, at);
          if (lf === -1) return this.hold(buf, at, MAX_LINE, 'a chunk size line is too long');
          const size = chunkSize(buf.toString('latin1', at, lf));
          if (size < 0) return this.fail('protocol', 'a malformed chunk size');
          at = lf + 1;
          this.remaining = size;
          this.state = size === 0 ? State.Trailers : State.ChunkData;
          break;
        }
        case State.ChunkData: {
          const n = Math.min(this.remaining, buf.length - at);
          if (!this.body(buf, at, at + n, false)) return;
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = State.ChunkEnd;
          break;
        }
        case State.ChunkEnd: {
          const lf = buf.indexOf(CRLF, at);
          if (lf === -1) return this.hold(buf, at, 2, 'no line end after a chunk');
          if (lf - at > 1 || (lf - at === 1 && buf[at] !== 0x0d)) return this.fail('protocol', 'no line end after a chunk');
          at = lf + 1;
          this.state = State.ChunkSize;
          break;
        }
        case State.Trailers: {
          const lf = buf.indexOf(CRLF, at);
          if (lf === -1) return this.hold(buf, at, MAX_HEAD, 'the trailers are over 16 KiB');
          const empty = lf === at || (lf === at + 1 && buf[at] === 0x0d);
          at = lf + 1;
          if (empty) return this.complete(buf, at);
          break;
        }
      }
    }
  }

  /** Keeps an unfinished head or line for the next chunk, up to max bytes. */
  private hold(buf: Buffer, at: number, max: number, tooLong: string): void {
    if (buf.length - at > max) return this.fail('protocol', tooLong);
    this.pending = Buffer.from(buf.subarray(at)); // a copy: the socket's buffer is not ours to keep
  }

  /** Parses the head in buf[at, end) (end = after its blank line); returns where the body starts, or -1. */
  private head(buf: Buffer, at: number, end: number): number {
    const text = buf.toString('latin1', at, end);
    // Status line: HTTP/1.x SP 3DIGIT (RFC 9112 §4).
    if (!text.startsWith('HTTP/1.') || text.charCodeAt(8) !== 0x20) {
      this.fail('protocol', 'the answer is not HTTP/1.x');
      return -1;
    }
    const status = Number(text.slice(9, 12));
    if (!(status >= 100 && status <= 999) || !/^\d{3}$/.test(text.slice(9, 12))) {
      this.fail('protocol', 'a malformed status line');
      return -1;
    }
    const http10 = text.charCodeAt(7) === 0x30;
    let length = -1;
    let chunked = false;
    let connection = '';
    let line = text.indexOf('\n') + 1;
    while (line < text.length) {
      const lf = text.indexOf('\n', line);
      const stop = lf === -1 ? text.length : lf;
      const colon = text.indexOf(':', line);
      if (colon !== -1 && colon < stop) {
        const len = colon - line;
        // Only the framing headers are read (by their name's length first); the rest are never turned into strings.
        if (len === 14 || len === 17 || len === 10) {
          const name = text.slice(line, colon).toLowerCase();
          const value = text.slice(colon + 1, stop).trim();
          if (name === 'content-length') {
            if (!/^\d{1,15}$/.test(value) || (length !== -1 && length !== Number(value))) {
              this.fail('protocol', 'a malformed or repeated Content-Length');
              return -1;
            }
            length = Number(value);
          } else if (name === 'transfer-encoding') {
            if (value.toLowerCase() !== 'chunked' || chunked) {
              this.fail('protocol', `an unsupported Transfer-Encoding: ${value.slice(0, 40)}`);
              return -1;
            }
            chunked = true;
          } else if (name === 'connection') connection = value.toLowerCase();
        }
      }
      line = stop + 1;
    }
    if (chunked && length !== -1) {
      this.fail('protocol', 'both Transfer-Encoding and Content-Length');
      return -1;
    }
    if (status < 200) {
      if (status === 101) {
        this.fail('protocol', 'an unexpected protocol switch');
        return -1;
      }
      return end; // informational: the real head follows
    }
    this.keepAlive = http10 ? connection.includes('keep-alive') : !connection.includes('close');
    const req = this.req!;
    this.keep = req.handler.status(status);
    if (req.done) return -1; // the handler gave up (its deadline)
    if (status === 204 || status === 304 || length === 0) {
      this.complete(buf, end);
      return -1;
    }
    if (chunked) this.state = State.ChunkSize;
    else if (length > 0) {
      if (length > this.pool.opts.maxResponseSize) {
        this.fail('too-large', 'the response exceeds the size limit');
        return -1;
      }
      this.state = State.Length;
      this.remaining = length;
    } else {
      this.state = State.UntilClose;
      this.keepAlive = false;
    }
    return end;
  }

  /**
   * Hands body bytes to the handler; false when the size cap was passed (the request failed).
   * last: the response ends with these bytes, in this read. A handler may hold a chunk until the
   * response's end: bytes of the shared read buffer are copied unless the end comes in this read.
   */
  private body(buf: Buffer, from: number, to: number, last: boolean): boolean {
    if (to === from) return true;
    this.bodyBytes += to - from;
    if (this.bodyBytes > this.pool.opts.maxResponseSize) {
      this.fail('too-large', 'the response exceeds the size limit');
      return false;
    }
    if (this.keep) {
      const view = from === 0 && to === buf.length ? buf : buf.subarray(from, to);
      this.req!.handler.data(this.shared && !last ? Buffer.from(view) : view);
    }
    return !this.req!.done;
  }

  /** The response ended at buf[at]: the connection goes back to the pool when nothing is left over. */
  private complete(buf: Buffer, at: number): void {
    const req = this.req!;
    const reusable = this.keepAlive && at === buf.length;
    this.state = State.Head;
    this.finish(req);
    if (reusable) this.pool.release(this);
    else this.socket?.destroy();
  }
}

/** Where the head starting at from ends (just past its blank line), or -1. */
function headEnd(buf: Buffer, from: number): number {
  const crlf = buf.indexOf('\r\n\r\n', from, 'latin1');
  if (crlf !== -1) return crlf + 4;
  const lf = buf.indexOf('\n\n', from, 'latin1');
  return lf === -1 ? -1 : lf + 2;
}

/** A chunk-size line's size (RFC 9112 §7.1: hex, optional extensions after ';'), or -1. */
function chunkSize(line: string): number {
  const semi = line.indexOf(';');
  const hex = (semi === -1 ? line : line.slice(0, semi)).trim();
  if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return -1;
  return parseInt(hex, 16);
}

export class H1Pool {
  private readonly idle: Connection[] = [];
  /** Every open connection (busy or idle), for the deadline sweep. */
  private readonly conns = new Set<Connection>();
  /** Requests waiting for their connection to be made. */
  private readonly dialling = new Set<H1Request>();
  private readonly queue: H1Request[] = [];
  private queueHead = 0;
  private open = 0;
  private closing = false;
  private readonly sweeper: NodeJS.Timeout;
  private readonly target: buildConnector.Options;
  private lastIdleSweep = 0;
  /** The Host header value for the origin (RFC 9112 §3.2). */
  readonly host: string;

  constructor(
    origin: string,
    readonly opts: H1PoolOptions,
  ) {
    const u = new URL(origin);
    this.host = u.host;
    this.target = { hostname: u.hostname.replace(/^\[|\]$/g, ''), host: u.host, protocol: u.protocol, port: u.port, servername: u.hostname };
    this.sweeper = setInterval(() => this.sweep(), opts.sweepMs ?? 50).unref();
  }

  /** Sends req on an idle connection, a new one, or after those in front of it. */
  enqueue(req: H1Request): void {
    if (this.closing) {
      req.done = true;
      req.handler.error(new H1Error('aborted', 'the client is closed'));
      return;
    }
    const conn = this.idle.pop();
    if (conn) return conn.send(req);
    if (this.open < this.opts.connections) return this.dial(req);
    this.queue.push(req);
  }

  /** A connection finished its response and may take the next request. */
  release(conn: Connection): void {
    const next = this.nextQueued();
    if (next) return conn.send(next);
    if (this.closing) return conn.destroy();
    conn.idleSince = Date.now();
    this.idle.push(conn);
  }

  /** A connection closed: it leaves the pool, and a waiting request may dial in its place. */
  lost(conn: Connection): void {
    this.open--;
    this.conns.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i !== -1) this.idle.splice(i, 1);
    const next = this.nextQueued();
    if (next) this.dial(next);
  }

  close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    for (const conn of this.idle.splice(0)) conn.destroy();
    for (let r = this.nextQueued(); r; r = this.nextQueued()) {
      r.done = true;
      r.handler.error(new H1Error('aborted', 'the client is closed'));
    }
    return Promise.resolve();
  }

  private nextQueued(): H1Request | undefined {
    while (this.queueHead < this.queue.length) {
      const r = this.queue[this.queueHead++]!;
      if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
        this.queue.splice(0, this.queueHead);
        this.queueHead = 0;
      }
      if (!r.done) return r;
    }
    return undefined;
  }

  private dial(req: H1Request): void {
    this.open++;
    const conn = new Connection(this);
    req.conn = conn;
    this.dialling.add(req);
    this.opts.connect(this.target, (err, socket) => {
      this.dialling.delete(req);
      if (err || !socket) {
        this.open--;
        req.conn = undefined;
        if (!req.done) {
          req.done = true;
          req.handler.error(new H1Error('connect', err?.message ?? 'no connection'));
        }
        const next = this.nextQueued();
        if (next) this.dial(next);
        return;
      }
      conn.attach(socket);
      this.conns.add(conn);
      if (req.done || this.closing) {
        // Its deadline passed while connecting: the connection serves whoever waits, or idles.
        if (this.closing) return conn.destroy();
        return this.release(conn);
      }
      conn.send(req);
    });
  }

  /** Fails the requests past their deadline (on a connection, dialling, or queued), and closes connections idle too long. */
  private sweep(): void {
    const now = Date.now();
    for (const conn of this.conns) if (conn.req && conn.req.deadline <= now) conn.req.expire();
    for (const req of this.dialling) if (req.deadline <= now) req.expire();
    for (let i = this.queueHead; i < this.queue.length; i++) if (this.queue[i]!.deadline <= now) this.queue[i]!.expire();
    if (now - this.lastIdleSweep < Math.min(1000, this.opts.idleMs / 2)) return;
    this.lastIdleSweep = now;
    const cutoff = now - this.opts.idleMs;
    while (this.idle.length && this.idle[0]!.idleSince < cutoff) this.idle.shift()!.destroy();
  }
}
