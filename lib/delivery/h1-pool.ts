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
 * with two lengths, is refused (§6.3: request smuggling). The syntax is llhttp's strict mode (what
 * Node's http client and undici accept): CRLF line ends only, token header names, no obs-fold, no
 * control bytes in values; test/delivery/h1-pool-differential.test.ts holds the two to the same
 * decisions. Sockets come from the outbound policy's connector, so every connection is checked
 * where it is made.
 *
 * Pairing is strict (docs/decisions.md, issue 24): a response is handed to the request in flight
 * only if its bytes came after that request was written and nothing beyond its framing came with
 * it. Bytes with no request in flight, or past a response's end in the same read, mean the server
 * and this client disagree on which answer is whose: the connection is closed, and the request
 * those bytes arrived with fails rather than take an answer that may be someone else's. A stray
 * that arrives alone, after the next request went out, looks exactly like that request's answer
 * (HTTP/1.1 carries no request id): that window stays, as for every HTTP/1.1 client. What bounds
 * it: once an origin has been caught sending bytes nobody asked for, the pool turns *cautious* for
 * `cautiousMs` (renewed by each further catch): its idle connections are closed and every
 * connection closes after one response, so no answer can reach a later request on the same
 * connection and a chain of shifted answers ends at its next response. The normal path pays one
 * boolean test per response for it (docs/decisions.md, "The HTTP/1.1 window").
 */
import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { readHead } from './h1-head.js';

/** What one request hears. Exactly one of end and error is called, once, unless the caller aborted. */
export interface H1Handler {
  /**
   * The final status (1xx are skipped); return false to drop the body (it is still read).
   * lastModified: the response's Last-Modified value as sent (VOD answers are dated by it, issue 27).
   */
  status(code: number, lastModified?: string): boolean;
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
  /** After the origin sent bytes nobody asked for: how long no connection is reused (default 60 s). */
  cautiousMs?: number;
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

const LF = 0x0a;
const CR = 0x0d;
const MAX_HEAD = 16 * 1024;
const MAX_LINE = 4096;

// The pieces of llhttp's strict syntax (RFC 9112 §4, §5, §7.1) for the rarer reads: a head split
// across reads, trailers, chunk extensions. A whole head is checked byte by byte (h1-head.ts).
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]"; // tchar (RFC 9110 §5.6.2)
const STATUS_LINE = 'HTTP/1\\.[01] \\d{3}(?: [^\\r\\n]*)?\\r\\n';
/** A header line: a token name, a colon, a value free of control bytes but HTAB. */
const FIELD = `${TOKEN}+:[\\t\\x20-\\x7e\\x80-\\xff]*`;
const QUOTED = '"(?:[\\t\\x20\\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t\\x20-\\x7e\\x80-\\xff])*"';
const EXT_VALUE = `=(?:${TOKEN}*|${QUOTED})`;

/** The complete lines of a head still arriving. */
const HEAD_PREFIX = new RegExp(`^${STATUS_LINE}(?:${FIELD}\\r\\n)*$`);
/** One trailer line without its CRLF (a header line, RFC 9112 §7.1.2). */
const TRAILER_SYNTAX = new RegExp(`^${FIELD}$`);
/**
 * Chunk extensions after the size (RFC 9112 §7.1.1) as llhttp's strict mode reads them: no
 * whitespace; a name, or none before an `=`; a token or quoted value, possibly empty.
 */
const CHUNK_EXT = new RegExp(`^(?:;(?:${TOKEN}+(?:${EXT_VALUE})?|${EXT_VALUE}))*$`);

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
    req.handler.error(
      new H1Error(
        'closed',
        this.sawByte ? 'the connection closed mid-response' : 'the connection closed before a response',
      ),
    );
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
      // Unsolicited bytes (not a late answer to an aborted request): this origin sends strays.
      if (!req) this.pool.suspect();
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
          // Empty lines before a status line are skipped, as llhttp skips them (RFC 9112 §2.2).
          while (buf[at] === CR || buf[at] === LF) if (++at === buf.length) return;
          // The earliest blank line ends the head. Lines end CRLF only: a bare LF is refused at once
          // (llhttp's strict mode), never read as a terminator nor waited past until the deadline.
          const end = buf.indexOf('\r\n\r\n', at, 'latin1');
          if (end === -1) {
            if (!headSoFar(buf, at)) return this.fail('protocol', 'a malformed response head');
            return this.hold(buf, at, MAX_HEAD, 'the response head is over 16 KiB');
          }
          if (end + 4 - at > MAX_HEAD) return this.fail('protocol', 'the response head is over 16 KiB');
          const next = this.head(buf, at, end + 4);
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
          const lf = buf.indexOf(LF, at);
          if (lf === -1) return this.hold(buf, at, MAX_LINE, 'a chunk size line is too long');
          const size = lf > at && buf[lf - 1] === CR ? chunkSize(buf.toString('latin1', at, lf - 1)) : -1;
          if (size < 0) return this.fail('protocol', 'a malformed chunk size');
          if (this.bodyBytes + size > this.pool.opts.maxResponseSize)
            return this.fail('too-large', 'the response exceeds the size limit');
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
          // Exactly CRLF after a chunk's data (llhttp's strict mode refuses a bare LF or anything else).
          if (buf[at] !== CR || (at + 1 < buf.length && buf[at + 1] !== LF))
            return this.fail('protocol', 'no CRLF after a chunk');
          if (at + 1 === buf.length) return this.hold(buf, at, 1, 'no CRLF after a chunk');
          at += 2;
          this.state = State.ChunkSize;
          break;
        }
        case State.Trailers: {
          const lf = buf.indexOf(LF, at);
          if (lf === -1) return this.hold(buf, at, MAX_HEAD, 'the trailers are over 16 KiB');
          if (lf === at || buf[lf - 1] !== CR) return this.fail('protocol', 'a malformed trailer');
          const empty = lf === at + 1;
          if (!empty && !TRAILER_SYNTAX.test(buf.toString('latin1', at, lf - 1)))
            return this.fail('protocol', 'a malformed trailer');
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
    const { status, http10, length, chunked, connectionClose, connectionKeepAlive, lastModified, fault } = readHead(
      buf,
      at,
      end,
    );
    if (status === -1 || (fault && status >= 100)) {
      this.fail('protocol', fault); // its syntax, else its framing
      return -1;
    }
    if (status < 100) {
      this.fail('protocol', 'a malformed status line');
      return -1;
    }
    this.keepAlive = http10 ? connectionKeepAlive : !connectionClose;
    if (status < 200) {
      // An informational answer that closes the connection leaves no room for the real one (llhttp: HPE_CLOSED_CONNECTION).
      if (status === 101 || !this.keepAlive) {
        this.fail(
          'protocol',
          status === 101 ? 'an unexpected protocol switch' : 'an informational response that closes the connection',
        );
        return -1;
      }
      return end; // informational: the real head follows
    }
    const req = this.req!;
    this.keep = req.handler.status(status, lastModified);
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

  /**
   * The response ended at buf[at]. Bytes after it in the same read were sent before this request's
   * answer was complete, yet no request is waiting for them: either they are a stray response, or
   * what was just framed was one and they are this request's real answer. Nobody can tell which,
   * so the request fails and the connection closes; it is reused only when nothing is left over.
   */
  private complete(buf: Buffer, at: number): void {
    if (at !== buf.length) {
      this.pool.suspect();
      return this.fail('protocol', "bytes beyond the response's framing");
    }
    const req = this.req!;
    this.state = State.Head;
    this.finish(req);
    // Cautious (the origin sent strays lately): one response per connection, so none can be taken by a later request.
    if (this.keepAlive && !this.pool.cautious) this.pool.release(this);
    else this.socket?.destroy();
  }
}

/**
 * Whether the complete lines of an unfinished head (buf from `from`) could start a valid one. Run
 * only when a head is split across reads: a bare LF, a bare CR or a malformed line is refused when
 * it arrives instead of waiting for a blank line that may never come (until the deadline).
 */
function headSoFar(buf: Buffer, from: number): boolean {
  const lf = buf.lastIndexOf(LF);
  if (lf < from) return true;
  return HEAD_PREFIX.test(buf.toString('latin1', from, lf + 1));
}

/** A chunk-size line's size without its CRLF (RFC 9112 §7.1: hex, then extensions after ';'), or -1. */
function chunkSize(line: string): number {
  const semi = line.indexOf(';');
  const hex = semi === -1 ? line : line.slice(0, semi);
  if (!/^[0-9a-fA-F]{1,16}$/.test(hex) || (semi !== -1 && !CHUNK_EXT.test(line.slice(semi)))) return -1;
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
  /** No connection is reused until `cautiousUntil` (the origin sent bytes nobody asked for). */
  cautious = false;
  private cautiousUntil = 0;
  /** Times this origin was caught sending bytes no request accounts for. */
  suspicions = 0;

  constructor(
    origin: string,
    readonly opts: H1PoolOptions,
  ) {
    const u = new URL(origin);
    this.host = u.host;
    this.target = {
      hostname: u.hostname.replace(/^\[|\]$/g, ''),
      host: u.host,
      protocol: u.protocol,
      port: u.port,
      servername: u.hostname,
    };
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

  /**
   * The origin sent bytes no request accounts for (on an idle connection, or past a response's
   * framing): it may also send a stray that arrives alone after a newer request went out, which
   * nothing can tell from that request's answer. For `cautiousMs` no connection is reused: the idle
   * ones close now, busy ones after their response. Off the normal path (called only on a catch).
   */
  suspect(): void {
    this.suspicions++;
    this.cautious = true;
    this.cautiousUntil = Date.now() + (this.opts.cautiousMs ?? 60_000);
    for (const conn of this.idle.splice(0)) conn.destroy();
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
    if (this.cautious && now >= this.cautiousUntil) this.cautious = false;
    for (const conn of this.conns) if (conn.req && conn.req.deadline <= now) conn.req.expire();
    for (const req of this.dialling) if (req.deadline <= now) req.expire();
    for (let i = this.queueHead; i < this.queue.length; i++)
      if (this.queue[i]!.deadline <= now) this.queue[i]!.expire();
    if (now - this.lastIdleSweep < Math.min(1000, this.opts.idleMs / 2)) return;
    this.lastIdleSweep = now;
    const cutoff = now - this.opts.idleMs;
    while (this.idle.length && this.idle[0]!.idleSince < cutoff) this.idle.shift()!.destroy();
  }
}
