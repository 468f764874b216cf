/** OpenAPI 3.1 document generated from the route table and the same JSON schemas ajv validates with. */
import type { Route } from './router.js';
import { problemRegistry } from './problem.js';

const registry = problemRegistry();

/** Every problem type the service answers, with its status and title (lib/http/problem.ts). */
const problem = {
  type: 'object',
  required: ['type', 'title', 'status'],
  description: registry.map((p) => `${p.type} (${p.status} ${p.title})`).join('; '),
  'x-problem-types': registry,
  properties: {
    type: { type: 'string', enum: registry.map((p) => p.type) },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    request_id: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
  },
};

function queryParameters(schema: object | undefined) {
  const props = (schema as { properties?: Record<string, object> } | undefined)?.properties ?? {};
  return Object.entries(props).map(([name, s]) => ({ name, in: 'query', required: false, schema: s }));
}

/** `X-Service-Mrss-Token` → `XServiceMrssToken`: the security scheme of a route's own credential header. */
function apiKeyName(header: string): string {
  return header.replace(/[^A-Za-z0-9]/g, '');
}

function apiKeys(routes: Route[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const r of routes) if (r.credential) out[apiKeyName(r.credential.header)] = { type: 'apiKey', in: 'header', name: r.credential.header };
  return out;
}

export function openApiDocument(routes: Route[], info: { version: string; serverUrl: string }): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const path = r.pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    const pathParams = [...r.pattern.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const errorResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: problem } } });
    const op: Record<string, unknown> = {
      summary: r.summary ?? '',
      parameters: [...pathParams, ...queryParameters(r.schema?.query)],
      responses: {
        [String(r.schema?.status ?? 200)]: { description: 'OK', content: r.schema?.response ? { 'application/json': { schema: r.schema.response } } : undefined },
        400: errorResponse('invalid request'),
        401: errorResponse('missing or invalid token'),
        404: errorResponse('not found'),
        409: errorResponse('conflict'),
        413: errorResponse('body too large'),
        415: errorResponse('wrong content type'),
        503: errorResponse('a backing service is down'),
      },
    };
    if (r.credential) op['security'] = [{ [apiKeyName(r.credential.header)]: [] }];
    else if (!r.public) op['security'] = [{ bearer: [] }];
    if (r.body === 'json' && r.schema?.body) op['requestBody'] = { required: true, content: { 'application/json': { schema: r.schema.body } } };
    if (r.body === 'raw') op['requestBody'] = { required: true, content: Object.fromEntries((r.contentTypes ?? []).map((t) => [t, { schema: { type: 'string' } }])) };
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Squeezeback and ad-insertion service: management API', version: info.version },
    servers: [{ url: info.serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, ...apiKeys(routes) }, schemas: { Problem: problem } },
    paths,
  };
}
