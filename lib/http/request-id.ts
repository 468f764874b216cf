/**
 * Request ids: every answer carries `X-Request-Id`, every problem body `request_id` (issue 25).
 * An incoming id of 1–64 safe characters is kept (a CDN's or a player's own correlation id);
 * otherwise one is made from a per-process prefix and a counter in base 36: no crypto and no clock
 * per request, so the hot path can afford it.
 *
 * The counter is kept as the id's bytes and counted up in place (an odometer): a hot answer writes
 * those bytes into its header as they are. A number made into a string, added to the prefix and
 * converted back to UTF-8 by uWS cost ~740 instructions of the ~15,900 a hot answer took
 * (callgrind; docs/decisions.md, issue 31, fourth session).
 */
import { latin1Bytes, type HttpRequest } from './uws.js';

const requestIdPattern = /^[A-Za-z0-9._:-]{1,64}$/;
const idPrefix = Math.random().toString(36).slice(2, 8);
const X_REQUEST_ID = latin1Bytes('x-request-id');

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';
/** The digit after each base-36 digit ('z' → '0', the carry). */
const NEXT_DIGIT = new Uint8Array(128);
for (let d = 0; d < 36; d++) NEXT_DIGIT[BASE36.charCodeAt(d)] = BASE36.charCodeAt((d + 1) % 36);
const Z = 0x7a;
const ONE = 0x31;
const ZERO = 0x30;

/** `<prefix>-<counter in base 36>`; the counter starts at 0, so the first id made ends in 1. */
const made = Buffer.alloc(64);
const firstDigit = made.write(`${idPrefix}-`, 'latin1');
made[firstDigit] = ZERO;
let end = firstDigit + 1;
/** made[0, end): replaced only when the counter gains a digit. */
let madeView = made.subarray(0, end);
/**
 * made[0, end − 1) as text, made again only when a digit but the last changed (every 36 ids): an
 * id as a string is then that text and one digit's, where decoding the bytes per id (a call into
 * Node's latin1 decoder) cost ~1,100 instructions of a distinct manifest request (issue 31).
 */
let headText: string | undefined;
/** Each digit byte's one-character string. */
const DIGIT_TEXT: string[] = [];
for (let d = 0; d < 36; d++) DIGIT_TEXT[BASE36.charCodeAt(d)] = BASE36[d]!;

function advance(): void {
  for (let i = end - 1; i >= firstDigit; i--) {
    const digit = made[i]!;
    made[i] = NEXT_DIGIT[digit]!;
    if (digit !== Z) return;
    headText = undefined; // the carry reaches the digit before
  }
  // Every digit wrapped to 0: one more, led by 1.
  made[firstDigit] = ONE;
  made[end++] = ZERO;
  madeView = made.subarray(0, end);
}

/** Whether an incoming id is kept as it came. */
function keeps(incoming: string | undefined): incoming is string {
  return !!incoming && requestIdPattern.test(incoming);
}

export function requestId(incoming: string | undefined): string {
  if (keeps(incoming)) return incoming;
  advance();
  headText ??= made.toString('latin1', 0, end - 1);
  return headText + DIGIT_TEXT[made[end - 1]!]!;
}

/** The `X-Request-Id` a request came with ('' without one), read inside the uWS callback. */
export function incomingRequestId(req: HttpRequest): string {
  return req.getHeader(X_REQUEST_ID);
}

/**
 * The id of an answer that only writes it into its `X-Request-Id` header at once: the incoming one
 * when kept, else the next made id as bytes, valid until the next id is made (uWS copies a header
 * as it is written).
 */
export function requestIdForHeader(incoming: string): string | Uint8Array {
  if (keeps(incoming)) return incoming;
  advance();
  return madeView;
}

/** The id of a uWS request (read synchronously, inside the handler). */
export function requestIdOf(req: HttpRequest): string {
  return requestId(incomingRequestId(req) || undefined);
}
