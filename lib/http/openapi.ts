/**
 * The OpenAPI 3.1 document: the management routes from the route table (the same JSON schemas ajv
 * validates with), and the player-facing operations their modules describe (`Operations`). Every
 * operation lists the statuses it can answer: its own, the router's (400, 401/403, 405, 413/415,
 * 429, 500, 503) and the problem schema for each error; every answer names `X-Request-Id`.
 * test/http/contract.test.ts checks each actual answer against this document.
 */
import type { Route } from './router.js';
import { problemRegistry } from './problem.js';

/**
 * Every problem type the service answers, with its status and title (lib/http/problem.ts): read
 * when the document is made, after every domain registered its codes.
 */
const problemSchema = (registry = problemRegistry()) => ({
  type: 'object',
  required: ['type', 'title', 'status', 'request_id'],
  description: registry.map((p) => `${p.type} (${p.status} ${p.title})`).join('; '),
  'x-problem-types': registry,
  properties: {
    type: { type: 'string', enum: registry.map((p) => p.type) },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    request_id: { type: 'string', description: 'the X-Request-Id of the answer' },
    errors: {
      type: 'array',
      description: 'the fields that failed validation',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
});

/** An operation object of OpenAPI 3.1 (built by the modules that answer it). */
export type Operation = Record<string, unknown>;
/** path (OpenAPI template) → lower-case method → operation. */
export type Operations = Record<string, Record<string, Operation>>;

const REQUEST_ID = { $ref: '#/components/headers/RequestId' };
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid request',
  401: 'missing or invalid credentials',
  403: 'the token lacks the required role',
  404: 'not found',
  405: 'the path does not take this method (see Allow)',
  409: 'conflict',
  410: 'gone',
  413: 'body too large',
  415: 'wrong content type',
  422: 'unprocessable',
  429: 'rate limited (see Retry-After)',
  500: 'internal error',
  502: 'an upstream failed',
  503: 'a backing service is down (see Retry-After)',
  504: 'an upstream timed out',
};
const ERROR_HEADERS: Record<number, Record<string, object>> = {
  401: { 'WWW-Authenticate': { schema: { type: 'string' } } },
  405: { Allow: { required: true, schema: { type: 'string' } } },
  429: { 'Retry-After': { required: true, schema: { type: 'string' } } },
  503: { 'Retry-After': { schema: { type: 'string' } } },
};

/** The responses of these error statuses: a problem document each. */
export function problemResponses(statuses: number[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const s of [...new Set(statuses)].sort()) {
    out[String(s)] = {
      description: ERROR_DESCRIPTIONS[s] ?? 'error',
      headers: { 'X-Request-Id': REQUEST_ID, ...ERROR_HEADERS[s] },
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  return out;
}

/** A success answer: content type → schema (none: no body). */
export function answer(
  description: string,
  content?: Record<string, object>,
  headers: Record<string, object> = {},
): object {
  const out: Record<string, unknown> = { description, headers: { 'X-Request-Id': REQUEST_ID, ...headers } };
  if (content) out['content'] = Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }]));
  return out;
}

/** The 304 of a conditional GET/HEAD (If-None-Match or If-Modified-Since matched): no body. */
export const notModified = (): object =>
  answer('not modified: the If-None-Match (or If-Modified-Since) matched', undefined, {
    ETag: { schema: { type: 'string' } },
  });

/**
 * The CORS preflight of a player-facing path (lib/http/cors.ts): 204 with the allowed methods and
 * headers for a listed origin (only `Vary: Origin` for another).
 */
export function preflightOperation(operationId: string, methods: string): Operation {
  const header = { schema: { type: 'string' } };
  return {
    operationId,
    summary: `CORS preflight (the path takes ${methods})`,
    security: [],
    parameters: [
      { name: 'Origin', in: 'header', required: false, schema: { type: 'string' } },
      { name: 'Access-Control-Request-Method', in: 'header', required: false, schema: { type: 'string' } },
    ],
    responses: {
      204: answer('the preflight answer', undefined, {
        'Access-Control-Allow-Origin': header,
        'Access-Control-Allow-Methods': header,
        'Access-Control-Allow-Headers': header,
        'Access-Control-Max-Age': header,
      }),
    },
  };
}

function queryParameters(schema: object | undefined) {
  const s = schema as { properties?: Record<string, object>; required?: string[] } | undefined;
  return Object.entries(s?.properties ?? {}).map(([name, p]) => ({
    name,
    in: 'query',
    required: s?.required?.includes(name) ?? false,
    schema: p,
  }));
}

/** The statuses a management route can answer besides its success. */
function routeErrors(r: Route): number[] {
  const out = [400, 405, 429, 500, 503, ...(r.errors ?? [])];
  if (!r.public) out.push(401, 403);
  if (r.body) out.push(413, 415);
  if (r.pattern.includes('/:')) out.push(404);
  return out;
}

function routeOperation(r: Route): Operation {
  const pathParams = [...r.pattern.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const status = r.schema?.status ?? 200;
  const success =
    status === 204
      ? answer('done, no content')
      : answer(
          r.summary ?? 'OK',
          {
            [r.schema?.contentType ?? 'application/json']: r.schema?.response ?? {
              type: 'object',
              description: 'fields not described here',
            },
          },
          r.schema?.responseHeaders,
        );
  const op: Operation = {
    operationId: operationId(r.method, r.pattern),
    summary: r.summary ?? '',
    parameters: [...pathParams, ...queryParameters(r.schema?.query), ...(r.schema?.headers ?? [])],
    responses: { [String(status)]: success, ...problemResponses(routeErrors(r)) },
  };
  op['security'] = r.security ?? (r.public ? [] : [{ bearer: [] }]);
  const required = !r.optionalBody;
  if (r.body === 'json')
    op['requestBody'] = { required, content: { 'application/json': { schema: r.schema?.body ?? { type: 'object' } } } };
  if (r.body === 'raw')
    op['requestBody'] = {
      required,
      content: Object.fromEntries((r.contentTypes ?? []).map((t) => [t, { schema: { type: 'string' } }])),
    };
  return op;
}

/** A stable, unique id from method and path (client generators name their methods after it). */
export function operationId(method: string, pattern: string): string {
  const words = pattern
    .replace(/[{}:]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1));
  return method.toLowerCase() + words.join('');
}

export function openApiDocument(
  routes: Route[],
  info: { version: string; serverUrl: string },
  more: Operations = {},
): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const ops = (paths[r.pattern.replace(/:([A-Za-z_]+)/g, '{$1}')] ??= {});
    ops[r.method.toLowerCase()] = routeOperation(r);
    // The router answers HEAD on every GET route: the same statuses and headers, no body.
    if (r.method === 'GET') ops['head'] = routeOperation({ ...r, method: 'HEAD' });
  }
  for (const [path, ops] of Object.entries(more)) Object.assign((paths[path] ??= {}), ops);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Squeezeback and ad-insertion service',
      version: info.version,
      description:
        'Management API (/api/v1, /mrssfeed) and the player-facing endpoints. Errors are RFC 9457 problem documents; every answer carries X-Request-Id.',
    },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        mrssToken: { type: 'apiKey', in: 'header', name: 'X-Service-Mrss-Token' },
      },
      headers: {
        RequestId: {
          description: 'the request id (kept from the request when it is 1–64 safe characters)',
          schema: { type: 'string' },
        },
      },
      schemas: { Problem: problemSchema() },
    },
    paths,
  };
}

/** The HTTP face's own endpoints (lib/http/server.ts). */
export const coreOperations: Operations = {
  '/healthz': {
    get: {
      operationId: 'getHealthz',
      summary: 'Liveness',
      security: [],
      responses: {
        200: answer('alive', {
          'application/json': { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } },
        }),
        ...problemResponses([405]),
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'getReadyz',
      summary: 'Readiness: every dependency answers and the instance is not shutting down',
      security: [],
      responses: {
        200: answer('ready', {
          'application/json': {
            type: 'object',
            required: ['status'],
            properties: { status: { const: 'ready' }, shutting_down: { type: 'boolean' } },
          },
        }),
        503: answer('not ready', {
          'application/json': {
            type: 'object',
            required: ['status'],
            properties: { status: { const: 'unavailable' }, shutting_down: { type: 'boolean' } },
          },
        }),
        ...problemResponses([405]),
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      summary: 'Prometheus text exposition (with METRICS_TOKEN set: only for a request that carries it)',
      security: [],
      parameters: [
        {
          name: 'X-Metrics-Token',
          in: 'header',
          required: false,
          description: 'METRICS_TOKEN, when set (or Authorization: Bearer)',
          schema: { type: 'string' },
        },
      ],
      responses: {
        200: answer('metrics', { 'text/plain': { type: 'string' } }),
        ...problemResponses([401, 405]),
      },
    },
  },
};
