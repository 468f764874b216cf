/**
 * RFC 9457 problem details. Every error a client sees is one of these; internal errors carry no
 * detail beyond a request id, never a stack.
 */
export interface FieldError {
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
  instance?: string;
  request_id?: string;
}

const titles: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function statusTitle(status: number): string {
  return titles[status] ?? 'Error';
}

/** An error that maps to a problem response. `code` is stable and machine-readable (like undici's). */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }

  toProblem(requestId?: string): Problem {
    const p: Problem = { type: `urn:squeezeback:problem:${this.code}`, title: statusTitle(this.status), status: this.status, detail: this.message };
    if (this.errors) p.errors = this.errors;
    if (requestId) p.request_id = requestId;
    return p;
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new HttpError(400, 'bad-request', detail, errors);
export const validationFailed = (errors: FieldError[]) => new HttpError(400, 'validation', 'the request does not match the schema', errors);
export const unauthorized = (detail: string) =>
  new HttpError(401, 'unauthorized', detail, undefined, { 'WWW-Authenticate': 'Bearer realm="api", error="invalid_token"' });
export const forbidden = (detail: string) => new HttpError(403, 'forbidden', detail);
export const notFound = (detail = 'no such resource') => new HttpError(404, 'not-found', detail);
export const conflict = (detail: string) => new HttpError(409, 'conflict', detail);
export const payloadTooLarge = (limit: number) => new HttpError(413, 'payload-too-large', `the body exceeds the limit of ${limit} bytes`);
export const unsupportedMediaType = (expected: string) => new HttpError(415, 'unsupported-media-type', `Content-Type must be ${expected}`);
