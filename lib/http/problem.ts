/**
 * RFC 9457 problem details. Every error a client sees is one of the problem types registered
 * here, rendered by problemResponse(): the management router, the hot path and the player
 * endpoints alike, and the OpenAPI document lists the registry. Internal errors carry no detail
 * beyond a request id, never a stack. The framework's codes are below; a domain registers its own
 * (registerProblems) in its module, so lib/http names no domain.
 */
import { STATUS_CODES } from 'node:http';
import { DomainError, isDependencyDown, type FieldError } from '../errors/index.js';

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

export interface ProblemSpec {
  status: number;
  title: string;
}

/** The framework's codes: code → status and title. `type` is `urn:squeezeback:problem:<code>`. */
export const PROBLEMS = {
  'bad-request': { status: 400, title: 'Bad Request' },
  validation: { status: 400, title: 'Bad Request' },
  'bad-path': { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not Found' },
  'method-not-allowed': { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Content Too Large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type' },
  unprocessable: { status: 422, title: 'Unprocessable Content' },
  'rate-limited': { status: 429, title: 'Too Many Requests' },
  /** Another party's own 4xx (the DAI host, a content origin), passed on with its status (404 for an ended stream, 403, 410 …). */
  'upstream-client-error': { status: 404, title: 'Upstream Client Error' },
  'client-closed': { status: 499, title: 'Client Closed Request' },
  internal: { status: 500, title: 'Internal Server Error' },
  'upstream-failed': { status: 502, title: 'Bad Gateway' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  'upstream-timeout': { status: 504, title: 'Gateway Timeout' },
} as const satisfies Record<string, ProblemSpec>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Every code: the framework's and those the domains registered. */
const registry = new Map<string, ProblemSpec>(Object.entries(PROBLEMS));

/**
 * Registers a domain's own problem codes (at its module's load, so before any answer or the
 * OpenAPI document) and returns the maker of its errors, typed to those codes. A code registered
 * again with another status or title is a programming error and throws at start-up.
 */
export function registerProblems<C extends string>(
  codes: Record<C, ProblemSpec>,
): (code: C, detail: string, errors?: FieldError[]) => HttpError {
  for (const [code, spec] of Object.entries<ProblemSpec>(codes)) {
    const known = registry.get(code);
    if (known && (known.status !== spec.status || known.title !== spec.title))
      throw new Error(`problem code ${code} is registered already with another status or title`);
    registry.set(code, { status: spec.status, title: spec.title });
  }
  return (code, detail, errors) => new HttpError(code as unknown as ProblemCode, detail, errors);
}

function specOf(code: string): ProblemSpec {
  const spec = registry.get(code);
  if (!spec) throw new Error(`problem code ${code} is not registered`);
  return spec;
}

export const problemType = (code: string) => `urn:squeezeback:problem:${code}`;

/** An error that maps to a problem response. `code` is stable and machine-readable (like undici's). */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  /** A framework code, or a domain's registered one (made by the function registerProblems returned). */
  readonly code: string;
  constructor(
    code: ProblemCode,
    detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
    /** Only for codes that pass another party's status on (upstream-client-error). */
    status?: number,
  ) {
    super(detail);
    this.code = code;
    this.status = status ?? specOf(code).status;
  }

  toProblem(requestId?: string): Problem {
    const spec = specOf(this.code);
    const title = this.status === spec.status ? spec.title : (STATUS_CODES[this.status] ?? spec.title);
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
  'upstream-failed': 'upstream-failed',
};
const RETRY = { 'Retry-After': '2' };

/** Where toHttpError reports a dependency down (warn) or an unexpected error (error, with its stack). */
export interface ProblemLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The one mapping of anything thrown to a problem: HTTP errors as they are, domain errors by
 * kind, a backing service down (as lib/store recognises it) → 503; anything else is logged with its stack and answered 500.
 */
export function toHttpError(err: unknown, log: ProblemLog, requestId?: string): HttpError {
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

/**
 * For the OpenAPI document: every problem type with its status and title. A domain's code is listed
 * after the last framework code of its status or below, domain codes in code order, so the document
 * does not depend on the order in which modules loaded.
 */
export function problemRegistry(): Array<{ type: string; code: string; status: number; title: string }> {
  const core = Object.keys(PROBLEMS) as ProblemCode[];
  const anchor = (status: number) => {
    let last = -1;
    core.forEach((c, i) => PROBLEMS[c].status <= status && (last = i));
    return last;
  };
  const domain = [...registry.keys()].filter((c) => !(c in PROBLEMS)).sort();
  const listed: string[] = domain.filter((c) => anchor(specOf(c).status) < 0);
  core.forEach((c, i) => listed.push(c, ...domain.filter((d) => anchor(specOf(d).status) === i)));
  return listed.map((code) => ({ type: problemType(code), code, ...specOf(code) }));
}
