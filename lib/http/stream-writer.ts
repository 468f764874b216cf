/**
 * Streams a response body with backpressure. uWS `write` buffers what the socket cannot take and
 * returns false; the producer then waits for `onWritable` before sending more, so a slow client
 * never makes us hold more than one chunk beyond the socket buffer. With a known total size,
 * `tryEnd` is used instead so the response carries a Content-Length.
 */
import type { Exchange, HeaderPair, Headers } from './exchange.js';

export class StreamWriter {
  private waiting: (() => void) | undefined;
  private ended = false;

  constructor(private readonly ex: Exchange) {
    ex.onAbort(() => this.release());
  }

  get closed(): boolean {
    return this.ex.aborted || this.ended;
  }

  /** Status and headers; must come before the first chunk. */
  begin(status: number, headers: Headers): void {
    if (this.ex.aborted || this.ex.started) return;
    this.ex.started = true;
    this.ex.res.cork(() => this.ex.writeHead(status, headers));
  }

  /** Writes one chunk; resolves when the producer may send the next one. */
  async write(chunk: string | Uint8Array): Promise<void> {
    if (this.closed) return;
    let ok = true;
    this.ex.res.cork(() => {
      ok = this.ex.res.write(chunk);
    });
    if (!ok && !this.closed) await this.drain();
  }

  end(last: string | Uint8Array = ''): void {
    if (this.closed) return;
    this.ended = true;
    this.ex.res.cork(() => {
      this.ex.res.end(last, this.ex.unreadBody);
    });
  }

  private drain(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.ex.res.onWritable(() => {
        this.release();
        return true;
      });
    });
  }

  private release(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }
}

/** Bodies up to this size are handed to uWS whole; larger ones (DVR windows) go out as the socket drains. */
const SMALL_BODY = 16 * 1024;

/**
 * Sends a body of known size with `tryEnd`; when the socket is full, the rest goes out from
 * `onWritable`. Returns true when everything was handed to the socket at once (the common case:
 * no closure or promise is allocated then). A body in a shared buffer that has to wait is copied.
 * headers must be the service's own (a Rendered's): they are written without the CR/LF check.
 */
export function sendSized(
  ex: Exchange,
  status: number,
  headers: Headers,
  body: Uint8Array,
  block?: HeaderPair,
  head?: ArrayBuffer,
): boolean {
  if (ex.aborted || ex.started) return true;
  ex.started = true;
  const total = body.byteLength;
  if (total <= SMALL_BODY) {
    // A playlist: uWS copies what the socket cannot take at once, so end() needs no write offset,
    // no result array and no onWritable (the bytes are never pinned by a slow reader).
    ex.res.cork(() => {
      ex.writeHead(status, headers, true, block, head);
      ex.res.end(body, ex.unreadBody);
    });
    return true;
  }
  let startOffset = 0;
  let done = false;
  ex.res.cork(() => {
    ex.writeHead(status, headers, false, block, head);
    startOffset = ex.res.getWriteOffset();
    [, done] = ex.res.tryEnd(body, total);
  });
  if (done) return true;
  // A view into a shared slab (lib/delivery/body-slab.ts) is copied: a slow reader must not pin the slab.
  const held = body.byteOffset === 0 && body.buffer.byteLength === body.byteLength ? body : new Uint8Array(body);
  ex.res.onWritable((offset) => {
    if (ex.aborted) return true;
    const [ok] = ex.res.tryEnd(held.subarray(offset - startOffset), total);
    return ok;
  });
  return false;
}
