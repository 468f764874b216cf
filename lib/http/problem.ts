/**
 * RFC 9457 problem details. Every error a client sees is one of the problem types registered
 * here, rendered by problemResponse(): the management router, the hot path and the player
 * endpoints alike, and the OpenAPI document lists the registry. Internal errors carry no detail
 * beyond a request id, never a stack.
 */
import { STATUS_CODES } from 'node:http';
import { DomainError, type FieldError } from '../errors/index.js';
import { isDependencyDown } from './dependency.js';

export type { FieldError } from '../errors/index.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  instance?: string;
  request_id?: string;
}

/** The registry: code → status and title. `type` is `urn:squeezeback:problem:<code>`. */
export const PROBLEMS = {
  'bad-request': { status: 400, title: 'Bad Request' },
  validation: { status: 400, title: 'Bad Request' },
  'bad-path': { status: 400, title: 'Bad Request' },
  'bad-beacon': { status: 400, title: 'Bad Request' },
  /** An SCTE-35 payload that does not decode (code and byte offset in `errors`). */
  'bad-cue': { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not Found' },
  'method-not-allowed': { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Content Too Large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type' },
  unprocessable: { status: 422, title: 'Unprocessable Content' },
  'rate-limited': { status: 429, title: 'Too Many Requests' },
  /** The DAI host's own 4xx, passed on with its status (404 for an ended stream, 403, 410 …). */
  'upstream-client-error': { status: 404, title: 'Upstream Client Error' },
  'client-closed': { status: 499, title: 'Client Closed Request' },
  internal: { status: 500, title: 'Internal Server Error' },
  'upstream-failed': { status: 502, title: 'Bad Gateway' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  'upstream-timeout': { status: 504, title: 'Gateway Timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

export const problemType = (code: ProblemCode) => `urn:squeezeback:problem:${code}`;

/** An error that maps to a problem response. `code` is stable and machine-readable (like undici's). */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
    /** Only for codes that pass another party's status on (upstream-client-error). */
    status?: number,
  ) {
    super(detail);
    this.status = status ?? PROBLEMS[code].status;
  }

  toProblem(requestId?: string): Problem {
    const title =
      this.status === PROBLEMS[this.code].status
        ? PROBLEMS[this.code].title
        : (STATUS_CODES[this.status] ?? PROBLEMS[this.code].title);
    const p: Problem = { type: problemType(this.code), title, status: this.status, detail: this.message };
    if (this.errors) p.errors = this.errors;
    if (requestId) p.request_id = requestId;
    return p;
  }
}

export const problem = (code: ProblemCode, detail: string, headers?: Record<string, string>) =>
  new HttpError(code, detail, undefined, headers);
export const badRequest = (detail: string, errors?: FieldError[]) => new HttpError('bad-request', detail, errors);
export const validationFailed = (errors: FieldError[]) =>
  new HttpError('validation', 'the request does not match the schema', errors);
export const unauthorized = (detail: string, challenge = 'Bearer realm="api", error="invalid_token"') =>
  new HttpError('unauthorized', detail, undefined, { 'WWW-Authenticate': challenge });
export const forbidden = (detail: string) => new HttpError('forbidden', detail);
export const notFound = (detail = 'no such resource') => new HttpError('not-found', detail);
export const conflict = (detail: string) => new HttpError('conflict', detail);
export const payloadTooLarge = (limit: number) =>
  new HttpError('payload-too-large', `the body exceeds the limit of ${limit} bytes`);
export const unsupportedMediaType = (expected: string) =>
  new HttpError('unsupported-media-type', `Content-Type must be ${expected}`);

const DOMAIN_CODES: Record<DomainError['kind'], ProblemCode> = {
  'not-found': 'not-found',
  conflict: 'conflict',
  invalid: 'bad-request',
  unprocessable: 'unprocessable',
  unavailable: 'unavailable',
};
const RETRY = { 'Retry-After': '2' };

interface Log {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The one mapping of anything thrown to a problem: HTTP errors as they are, domain errors by
 * kind, a backing service down → 503; anything else is logged with its stack and answered 500.
 */
export function toHttpError(err: unknown, log: Log, requestId?: string): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainError)
    return new HttpError(
      DOMAIN_CODES[err.kind],
      err.message,
      err.errors,
      err.kind === 'unavailable' ? RETRY : undefined,
    );
  if (isDependencyDown(err)) {
    log.warn({ req_id: requestId, err: String(err) }, 'dependency unavailable');
    return new HttpError('unavailable', 'a backing service is unavailable; retry later', undefined, RETRY);
  }
  log.error({ req_id: requestId, err }, 'unhandled error');
  return new HttpError('internal', 'internal error');
}

export interface ProblemResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The one renderer: status, headers (problem+json, never cached, the error's own) and body. The
 * `X-Request-Id` header is written by the Exchange that sends it (lib/http/exchange.ts).
 */
export function problemResponse(err: HttpError, requestId?: string): ProblemResponse {
  const headers: Record<string, string> = {
    'Content-Type': 'application/problem+json',
    'Cache-Control': 'no-store',
    ...err.headers,
  };
  return { status: err.status, headers, body: JSON.stringify(err.toProblem(requestId)) };
}

/**
 * A problem body rendered once (a cached rendering of the hot path) with this answer's request id
 * added: `{…}` becomes `{…,"request_id":"<id>"}`. The id has only safe characters (request-id.ts).
 */
export function withRequestId(body: string, id: string): string {
  if (!body.endsWith('}') || body.includes('"request_id"')) return body;
  return `${body.slice(0, -1)},"request_id":"${id}"}`;
}

/**
 * Cache-Control of an error on the paths a CDN pulls (docs/design.md §16): a 4xx may be cached a
 * moment, so a burst of players asking for an ended stream costs one origin pull a second, not
 * one each; a 429 is one client's and a 5xx is never kept (the CDN retries, or serves stale).
 */
export function errorCacheControl(status: number): string {
  return status >= 400 && status < 500 && status !== 429 ? 'public, max-age=2' : 'no-store';
}

/** problemResponse() for player-facing paths behind a CDN: the same problem, with errorCacheControl(). */
export function cdnProblemResponse(err: HttpError, requestId?: string): ProblemResponse {
  const p = problemResponse(err, requestId);
  p.headers['Cache-Control'] = errorCacheControl(p.status);
  return p;
}

/** For the OpenAPI document: every problem type with its status and title. */
export function problemRegistry(): Array<{ type: string; code: ProblemCode; status: number; title: string }> {
  return (Object.keys(PROBLEMS) as ProblemCode[]).map((code) => ({ type: problemType(code), code, ...PROBLEMS[code] }));
}
