/**
 * One HTTP exchange on a uWS response. uWS rules (docs/design.md §7): `onAborted` is attached before
 * any async work, every write after an await happens inside `cork`, nothing is written once the
 * client is gone, header values never carry CR/LF, and HEAD answers carry no body.
 */
import type { HttpResponse } from './uws.js';
import { STATUS_CODES } from 'node:http';
import { HttpError, cdnProblemResponse, problemResponse, toHttpError, type ProblemLog } from './problem.js';

export interface ProblemOptions {
  /** A player-facing path behind a CDN: a 4xx may be cached a moment (lib/http/problem.ts errorCacheControl). */
  cdn?: boolean;
}
import { requestId } from './request-id.js';

export type Headers = Record<string, string>;
/** A header written as is (precomputed sets such as the CORS headers, lib/http/cors.ts). */
export type HeaderPair = readonly [name: string, value: string];
export const NO_HEADERS: readonly HeaderPair[] = Object.freeze([]);

const statusLines = new Map<number, string>();
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (!line) statusLines.set(status, (line = `${status} ${STATUS_CODES[status] ?? 'Error'}`));
  return line;
}

export function hasCrLf(value: string): boolean {
  return value.includes('\r') || value.includes('\n') || value.includes('\0');
}

/**
 * Headers joined into one pair for a single `writeHeader` call: uWS writes name, `: `, value and
 * CRLF as given, so `[A, "1\r\nB: 2"]` puts two lines on the wire. Each writeHeader is a call into
 * C++ converting two strings, and a hot answer wrote ~8 (issue 27's hot gzip against raw uWS,
 * issue 31). For the service's own values only, built once per header set: a set with a CR, LF or
 * NUL anywhere gets no block (its lines would split). undefined: no headers.
 */
export function headerBlock(headers: Readonly<Headers>): HeaderPair | undefined {
  let name: string | undefined;
  let value = '';
  for (const n in headers) {
    const v = headers[n]!;
    if (hasCrLf(n) || hasCrLf(v)) return undefined;
    if (name === undefined) {
      name = n;
      value = v;
    } else value += `\r\n${n}: ${v}`;
  }
  return name === undefined ? undefined : Object.freeze([name, value] as const);
}

/** Blocks of the precomputed pair sets (CORS, with Vary merged): few and long-lived, so kept by identity. */
const pairBlocks = new Map<readonly HeaderPair[], HeaderPair | null>();

/** The block of a precomputed pair set; undefined when there is none (a set made per request beyond the memo's bound is written pair by pair). */
export function pairsBlock(pairs: readonly HeaderPair[]): HeaderPair | undefined {
  let block = pairBlocks.get(pairs);
  if (block === undefined) {
    if (pairBlocks.size >= 1024) return undefined;
    const headers: Headers = {};
    for (const [n, v] of pairs) headers[n] = n in headers ? `${headers[n]}\r\n${n}: ${v}` : v;
    block = headerBlock(headers) ?? null;
    pairBlocks.set(pairs, block);
  }
  return block ?? undefined;
}

export class Exchange {
  aborted = false;
  /** Set once the status line went out; a later error can only close the connection. */
  started = false;
  /** A body the client declared but we did not read: the connection must close after the answer. */
  unreadBody = false;
  private abortHandlers: Array<() => void> | undefined; // most exchanges never need one

  constructor(
    readonly res: HttpResponse,
    readonly isHead: boolean,
    /** Written with every answer of this exchange, errors included (the CORS headers of player-facing routes); Vary merged in by lib/http/representation.ts. */
    public extra: readonly HeaderPair[] = NO_HEADERS,
    /** Written as `X-Request-Id` with every answer (lib/http/request-id.ts); a fresh counter id by default. */
    readonly id: string = requestId(undefined),
  ) {
    res.onAborted(() => {
      this.aborted = true;
      for (const h of this.abortHandlers ?? []) h();
    });
  }

  onAbort(handler: () => void): void {
    (this.abortHandlers ??= []).push(handler);
  }

  /** Writes a whole response. Returns false when the client had gone away. */
  send(
    status: number,
    headers: Headers,
    body: string | Uint8Array = '',
    block?: HeaderPair,
    head?: ArrayBuffer,
  ): boolean {
    if (this.aborted || this.started) return false;
    this.started = true;
    this.res.cork(() => {
      this.writeHead(status, headers, false, block, head);
      // A 304 states no Content-Length (RFC 9110 §8.6: it would have to be the 200's); uWS omits it only when called without arguments.
      if (status === 304 && !this.unreadBody) this.res.endWithoutBody();
      else if (this.isHead || status === 204 || status === 304)
        this.res.endWithoutBody(this.isHead ? byteLength(body) : 0, this.unreadBody);
      else this.res.end(body, this.unreadBody);
    });
    return true;
  }

  /**
   * Answers a problem (RFC 9457) whose body and header carry this exchange's request id: the one way
   * an error is sent. Anything else than an HttpError is mapped by toHttpError (domain errors, a
   * backing service down, else logged and 500), so it needs the log. `cdn`: a player-facing path a CDN
   * pulls, whose 4xx may be cached a moment (errorCacheControl). Returns the status answered.
   */
  problem(err: HttpError, how?: ProblemOptions): number;
  problem(err: unknown, how: ProblemOptions & { log: ProblemLog }): number;
  problem(err: unknown, how: ProblemOptions & { log?: ProblemLog } = {}): number {
    const e = err instanceof HttpError ? err : toHttpError(err, how.log!, this.id);
    const p = how.cdn ? cdnProblemResponse(e, this.id) : problemResponse(e, this.id);
    this.send(p.status, p.headers, p.body);
    return p.status;
  }

  /**
   * Status and headers only; the caller is inside cork. trusted: the service's own constant values,
   * not checked for CR/LF. block: the same headers pre-joined (headerBlock), written instead. head:
   * the headers, this exchange's extra set and the name `X-Request-Id` as bytes (answerHead in
   * lib/http/representation.ts), written in one call instead of all of them.
   */
  writeHead(status: number, headers: Headers, trusted = false, block?: HeaderPair, head?: ArrayBuffer): void {
    const res = this.res;
    if (status !== 200) res.writeStatus(statusLine(status)); // uWS writes 200 OK by default
    if (head) {
      res.writeHeader(head, this.id);
      return;
    }
    if (block) res.writeHeader(block[0], block[1]);
    else writeHeaders(res, headers, trusted);
    res.writeHeader('X-Request-Id', this.id); // checked at its making: safe characters only
    writePairs(res, this.extra);
  }
}

/** Writes headers one call each; a value with a CR, LF or NUL is left out unless trusted (the service's own constants). */
export function writeHeaders(res: HttpResponse, headers: Readonly<Headers>, trusted = false): void {
  for (const name in headers) {
    const value = headers[name]!;
    if (trusted || !hasCrLf(value)) res.writeHeader(name, value);
  }
}

/** Writes a precomputed pair set (CORS, Vary), as one block when it has one. */
export function writePairs(res: HttpResponse, pairs: readonly HeaderPair[]): void {
  if (pairs.length === 0) return;
  const block = pairs.length > 1 ? pairsBlock(pairs) : undefined;
  if (block) res.writeHeader(block[0], block[1]);
  else for (let i = 0; i < pairs.length; i++) res.writeHeader(pairs[i]![0], pairs[i]![1]);
}

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}
