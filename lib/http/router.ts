/**
 * The thin management router: one uWS catch-all per prefix dispatches through a small route
 * table with `:param` segments. Every handler goes through the same wrapper: it copies the request
 * synchronously, attaches onAborted, answers 413 from a declared Content-Length and 415 from a
 * wrong Content-Type before reading, authenticates (the operator JWT, or the route's own credential)
 * with the body paused, so a wrong token costs no buffered bytes (issue 24), then reads the body
 * with a cap, parses JSON, and turns any thrown error into an RFC 9457 problem.
 */
// The module binding, not the global: Node's global `performance` is a lazy accessor whose getter
// runs on every read (~70 instructions a read in callgrind; read twice per routed request).
import { performance } from 'node:perf_hooks';
import { addressText, type HttpRequest, type HttpResponse, type TemplatedApp } from './uws.js';
import { Exchange, NO_HEADERS, type Headers } from './exchange.js';
import { readBody, mediaType, isJsonType, type BodyReader } from './body.js';
import { HttpError, badRequest, notFound, payloadTooLarge, toHttpError, unsupportedMediaType } from './problem.js';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import { rateLimited, type RateLimiter } from './rate-limit.js';
import { requestId } from './request-id.js';
import type { Cors, Preflight } from './cors.js';

export interface RequestInfo {
  id: string;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  params: Record<string, string>;
  remoteAddress: string;
  /** Set by the route's auth hook (the verified token claims). */
  principal?: unknown;
}

export interface Reply {
  status?: number;
  headers?: Headers;
  json?: unknown;
  body?: string | Uint8Array;
}

export interface Route {
  method: string;
  pattern: string;
  /** 'json' parses an application/json body; 'raw' hands over the bytes (after the Content-Type check). */
  body?: 'json' | 'raw';
  /** Accepted media types for 'raw' bodies. */
  contentTypes?: string[];
  maxBody?: number;
  /** No operator JWT: the route is open to anyone, or checks `credential` instead. */
  public?: boolean;
  /**
   * The route's own credential (e.g. the MRSS push token), checked by the router on the headers
   * before any body byte is read, like the JWT of a non-public route. Replaces the JWT check.
   */
  credential?: Credential;
  summary?: string;
  /** The client's token bucket this route draws from (default `api`). */
  rateRule?: string;
  /** Schemas for the OpenAPI document (the same objects the validators compile). */
  schema?: {
    body?: object;
    query?: object;
    response?: object;
    status?: number;
    /** The success answer's media type (default application/json). */
    contentType?: string;
    /** Header parameters (OpenAPI parameter objects), e.g. a push token. */
    headers?: object[];
    /** Headers of the success answer (OpenAPI header objects by name). */
    responseHeaders?: Record<string, object>;
  };
  /** A JSON body the route can do without (OpenAPI `requestBody.required: false`). */
  optionalBody?: boolean;
  /** Error statuses the handler answers besides the router's own (OpenAPI). */
  errors?: number[];
  /** OpenAPI security requirements of a public route that authenticates itself (e.g. `[{ mrssToken: [] }]`). */
  security?: Array<Record<string, string[]>>;
  handler: (req: RequestInfo, body: unknown) => Promise<Reply>;
}

export type Authenticator = (req: RequestInfo) => Promise<unknown>;

export interface Credential {
  /** The header that carries it (OpenAPI names it as an API key). */
  header: string;
  /** Resolves to the principal, or throws `unauthorized`; it sees the headers and path parameters, never the body. */
  check: Authenticator;
}

export interface RouterOptions {
  log: Logger;
  metrics: Registry;
  bodyLimit: number;
  authenticate: Authenticator;
  inFlight: { count: number };
  /**
   * Per client IP: the `api` rule for every request; a failed authentication is charged to the
   * client's own `auth_failure` bucket, so bad tokens never lock out a valid one (issue 25).
   */
  limiter?: RateLimiter;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
  /** Literal (non-parameter) segments: the more, the more specific the pattern. */
  literals: number;
}

export { requestId } from './request-id.js';

/** A body-less request to a route that takes a body. */
const emptyBody: BodyReader = {
  body: Promise.resolve(Buffer.alloc(0)),
  open: () => undefined,
  refuse: () => undefined,
  complete: true,
};

export class Router {
  private readonly routes: CompiledRoute[] = [];
  private readonly requests;
  private readonly durations;

  constructor(private readonly opts: RouterOptions) {
    this.requests = opts.metrics.counter('http_management_requests_total', 'Management API requests by status class');
    this.durations = opts.metrics
      .histogram('http_management_duration_seconds', 'Management API request duration')
      .with();
  }

  add(route: Route): this {
    const segments = route.pattern.split('/');
    this.routes.push({ route, segments, literals: segments.filter((s) => !s.startsWith(':')).length });
    return this;
  }

  list(): Route[] {
    return this.routes.map((r) => r.route);
  }

  /**
   * Registers the catch-all on the uWS app for a path prefix like `/api/v1`. With `cors` (player-facing
   * prefixes such as the stitch POST), every answer carries the CORS headers and OPTIONS answers the
   * preflight for `methods`.
   */
  mount(app: TemplatedApp, prefix: string, cors?: { policy: Cors; methods: string }): void {
    const withCors = cors && { policy: cors.policy, preflight: cors.policy.preflight(cors.methods) };
    const handler = (res: HttpResponse, req: HttpRequest) => this.dispatch(res, req, withCors);
    app.any(prefix, handler);
    app.any(`${prefix}/*`, handler);
  }

  /**
   * The path picks the pattern, then the method the route: among the patterns that match, only the
   * most specific (most literal segments) count, so `GET /brand-recognition/resolve` is a 405 on the
   * POST-only `resolve` path, not a `GET /brand-recognition/:id` with a bad id (issue 25 item 7).
   */
  private match(method: string, path: string): { route?: Route; params: Record<string, string>; allowed: string[] } {
    const parts = path.split('/');
    let allowed: string[] = [];
    let found: { route: Route; params: Record<string, string> } | undefined;
    let best = -1;
    for (const { route, segments, literals } of this.routes) {
      if (segments.length !== parts.length || literals < best) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const seg = segments[i]!;
        if (seg.startsWith(':')) params[seg.slice(1)] = parts[i]!;
        else ok = seg === parts[i];
      }
      if (!ok) continue;
      if (literals > best) {
        best = literals;
        found = undefined;
        allowed = [];
      }
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) found ??= { route, params };
      else allowed.push(route.method);
    }
    return found ? { ...found, allowed } : { params: {}, allowed };
  }

  private dispatch(res: HttpResponse, req: HttpRequest, cors?: { policy: Cors; preflight: Preflight }): void {
    const started = performance.now();
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers: Headers = {};
    req.forEach((k, v) => {
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    });
    if (cors && method === 'OPTIONS') {
      new Exchange(res, false, NO_HEADERS, requestId(headers['x-request-id'])).send(
        204,
        cors.preflight(headers['origin']),
      );
      return;
    }
    const id = requestId(headers['x-request-id']);
    const ex = new Exchange(res, method === 'HEAD', cors ? cors.policy.pairs(headers['origin']) : NO_HEADERS, id);
    const info: RequestInfo = {
      id,
      method,
      path,
      query: new URLSearchParams(rawQuery),
      headers,
      params: {},
      remoteAddress: addressText(res.getRemoteAddressAsText()),
    };
    const inFlight = this.opts.inFlight;
    inFlight.count++;
    const finish = (status: number) => {
      inFlight.count--;
      this.requests.with({ code: `${Math.floor(status / 100)}xx` }).inc();
      this.durations.observe((performance.now() - started) / 1000);
      this.opts.log.info({ req_id: id, method, path, status, ms: Math.round(performance.now() - started) }, 'request');
    };
    const fail = (err: unknown) => {
      const httpErr = toHttpError(err, this.opts.log, id);
      if (httpErr.code === 'client-closed') return finish(httpErr.status);
      finish(ex.problem(httpErr));
    };

    let reader: BodyReader | undefined;
    let route: Route;
    let check: Authenticator | undefined;
    try {
      const m = this.match(method, path);
      const allowed = this.opts.limiter?.take(m.route?.rateRule ?? 'api', info.remoteAddress);
      if (allowed && !allowed.ok) throw rateLimited(allowed.retryAfterSec);
      if (!m.route) {
        if (m.allowed.length)
          throw new HttpError('method-not-allowed', `${method} is not allowed here`, undefined, {
            Allow: [...new Set(m.allowed)].join(', '),
          });
        throw notFound(`no route for ${path}`);
      }
      route = m.route;
      check = route.credential?.check ?? (route.public ? undefined : this.opts.authenticate);
      for (const [k, v] of Object.entries(m.params)) info.params[k] = decodeParam(v);
      if (/%00/i.test(rawQuery)) throw badRequest('the query string may not contain %00');
      // With a credential to check, the body waits (paused) until the check passed (issue 24).
      reader = this.startBody(ex, route, headers, check !== undefined);
      // The body may fail (too large, client gone) while we still authenticate: handled where awaited.
      reader?.body.catch(() => undefined);
    } catch (err) {
      fail(err);
      return;
    }

    void (async () => {
      if (check) {
        try {
          info.principal = await this.authenticate(check, info);
        } catch (err) {
          // A declared body (within the route's limit, checked before) is read and dropped as it
          // comes, never held: closing on unread bytes sends a reset that can destroy the 401 in
          // the client's receive buffer, and the connection stays usable. A chunked one has no
          // bound to drain to: the answer closes the connection at once.
          const drain = headers['transfer-encoding'] === undefined;
          reader?.refuse(drain);
          if (reader && (drain || reader.complete)) ex.unreadBody = false;
          throw err;
        }
        reader?.open();
      }
      let body: unknown;
      if (reader) {
        const bytes = await reader.body;
        ex.unreadBody = false;
        body = route.body === 'json' ? parseJson(bytes) : bytes;
      }
      const reply = await route.handler(info, body);
      const status = reply.status ?? 200;
      const outHeaders: Headers = { ...reply.headers };
      let payload: string | Uint8Array = reply.body ?? '';
      if (reply.json !== undefined) {
        payload = JSON.stringify(reply.json);
        outHeaders['Content-Type'] ??= 'application/json';
      }
      ex.send(status, outHeaders, payload);
      finish(status);
    })().catch(fail);
  }

  private async authenticate(check: Authenticator, info: RequestInfo): Promise<unknown> {
    try {
      return await check(info);
    } catch (err) {
      // Failures have their own bucket: a client that keeps failing is answered 429 instead of 401
      // (credential stuffing costs it time), while a request with a valid token is charged only
      // to the `api` bucket and never refused for the failures before it.
      if (err instanceof HttpError && err.code === 'unauthorized') {
        const verdict = this.opts.limiter?.take('auth_failure', info.remoteAddress);
        if (verdict && !verdict.ok) throw rateLimited(verdict.retryAfterSec);
      }
      throw err;
    }
  }

  /** Synchronous checks on the declared body, then starts reading it (paused while `gated`). */
  private startBody(ex: Exchange, route: Route, headers: Headers, gated: boolean): BodyReader | undefined {
    const declared = headers['content-length'];
    const chunked = headers['transfer-encoding'] !== undefined;
    const length = declared === undefined ? undefined : Number(declared);
    if (declared !== undefined && !/^\d{1,15}$/.test(declared.trim())) throw badRequest('invalid Content-Length');
    const hasBody = chunked || (length ?? 0) > 0;
    if (!hasBody) return route.body ? emptyBody : undefined;
    ex.unreadBody = true;
    if (!route.body) return undefined;
    const limit = route.maxBody ?? this.opts.bodyLimit;
    if (length !== undefined && length > limit) throw payloadTooLarge(limit);
    const type = mediaType(headers['content-type']);
    if (route.body === 'json' ? !isJsonType(type) : !(route.contentTypes ?? []).includes(type)) {
      throw unsupportedMediaType(route.body === 'json' ? 'application/json' : (route.contentTypes ?? []).join(' or '));
    }
    return readBody(ex.res, limit, (h) => ex.onAbort(h), gated);
  }
}

// U+0000 is refused in every input the router decodes: PostgreSQL text cannot store it (it would
// fail as an internal error), and no identifier or field has a use for it.
function decodeParam(v: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(v);
  } catch {
    throw badRequest('malformed percent-encoding in the path');
  }
  if (decoded.includes('\0')) throw new HttpError('bad-path', 'a path segment may not contain %00');
  return decoded;
}

/** A JSON text carries U+0000 only as the escape `\u0000` (a raw control character is invalid JSON), so only such texts are walked, without recursion. */
function refuseNul(text: string, value: unknown): void {
  if (!text.includes('\\u0000')) return;
  const pending = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'string' && v.includes('\0')) throw badRequest('JSON strings may not contain U+0000');
    if (v && typeof v === 'object') for (const [k, inner] of Object.entries(v)) pending.push(k, inner);
  }
}

function parseJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  try {
    const text = bytes.toString('utf8');
    const value: unknown = JSON.parse(text);
    refuseNul(text, value);
    return value;
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw badRequest(`the body is not valid JSON: ${(err as Error).message}`);
  }
}
