/** Request body reading with a byte cap. uWS hands out chunks that are only valid during the callback, so each is copied. */
import type { HttpResponse } from './uws.js';
import { HttpError, payloadTooLarge } from './problem.js';

/** A body being read; `open`/`refuse` settle a credential gate (readBody's `gated`). */
export interface BodyReader {
  body: Promise<Buffer>;
  /** The credential check passed: streaming resumes. */
  open(): void;
  /**
   * The check failed: what was held is dropped and every later chunk is ignored. With `drain`, the
   * socket resumes and the rest is read and discarded (bounded by the declared Content-Length), so
   * the connection ends cleanly and the client reads its 401; closing it with unread bytes would
   * send a reset that can destroy the answer before the client read it.
   */
  refuse(drain: boolean): void;
  /** Every byte of the body has arrived (nothing is left on the connection). */
  readonly complete: boolean;
}

/**
 * Must be called synchronously in the request handler: uWS drops data that arrives before onData
 * is set. With `gated`, the socket is paused at once and stays paused until `open()`: while the
 * route's credential check runs, only what uWS had already received with the head (at most one
 * receive buffer) is held, the rest waits in the kernel and, on `refuse()`, is never read (issue 24:
 * a wrong token must not make the service buffer 20 MiB).
 */
export function readBody(
  res: HttpResponse,
  limit: number,
  onAbort: (h: () => void) => void,
  gated = false,
): BodyReader {
  let chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  let paused = gated;
  let complete = false;
  let resolveBody!: (b: Buffer) => void;
  let rejectBody!: (err: unknown) => void;
  const body = new Promise<Buffer>((resolve, reject) => {
    resolveBody = resolve;
    rejectBody = reject;
  });
  onAbort(() => {
    failed = true;
    paused = false;
    chunks = [];
    rejectBody(new HttpError('client-closed', 'the client closed the connection'));
  });
  res.onData((chunk, isLast) => {
    if (isLast) complete = true;
    if (failed) return;
    size += chunk.byteLength;
    if (size > limit) {
      failed = true;
      chunks = [];
      rejectBody(payloadTooLarge(limit));
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) resolveBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
  if (gated) res.pause();
  return {
    body,
    get complete() {
      return complete;
    },
    open() {
      if (!paused || failed) return;
      paused = false;
      res.resume();
    },
    refuse(drain) {
      if (failed) return;
      failed = true;
      chunks = [];
      rejectBody(new HttpError('unauthorized', 'the body was refused with its credentials'));
      // The socket resumes whenever the connection lives on: to drain the rest, or, the body being
      // complete, to read the next request (a paused keep-alive connection would hang).
      if (paused && (drain || complete)) {
        paused = false;
        res.resume();
      }
    },
  };
}

/** The media type of a Content-Type header, lower-cased and without parameters. */
export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
