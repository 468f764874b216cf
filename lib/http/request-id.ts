/**
 * Request ids: every answer carries `X-Request-Id`, every problem body `request_id` (issue 25).
 * An incoming id of 1–64 safe characters is kept (a CDN's or a player's own correlation id);
 * otherwise one is made from a per-process prefix and a counter: no crypto and no clock per
 * request, so the hot path can afford it.
 */
import { latin1Bytes, type HttpRequest } from './uws.js';

const requestIdPattern = /^[A-Za-z0-9._:-]{1,64}$/;
const idPrefix = Math.random().toString(36).slice(2, 8);
let idCounter = 0;
const X_REQUEST_ID = latin1Bytes('x-request-id');

export function requestId(incoming: string | undefined): string {
  return incoming && requestIdPattern.test(incoming) ? incoming : `${idPrefix}-${(++idCounter).toString(36)}`;
}

/** The id of a uWS request (read synchronously, inside the handler). */
export function requestIdOf(req: HttpRequest): string {
  return requestId(req.getHeader(X_REQUEST_ID) || undefined);
}
