/**
 * Domain errors: what a repository or a service reports without knowing about HTTP. The HTTP layer
 * turns each kind into its problem (lib/http/problem.ts); workers log them.
 */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * `unprocessable`: well-formed, but the state it names makes it impossible (422). `upstream-failed`:
 * a party the request depends on (a content origin) failed or may not be reached (502).
 */
export type DomainErrorKind =
  'not-found' | 'conflict' | 'invalid' | 'unprocessable' | 'unavailable' | 'upstream-failed';

export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
  }
}

export const notFound = (detail = 'no such resource') => new DomainError('not-found', detail);
export const conflict = (detail: string) => new DomainError('conflict', detail);
export const invalid = (detail: string, errors?: FieldError[]) => new DomainError('invalid', detail, errors);
export const unprocessable = (detail: string) => new DomainError('unprocessable', detail);
export const unavailable = (detail: string) => new DomainError('unavailable', detail);
export const upstreamFailed = (detail: string) => new DomainError('upstream-failed', detail);

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}

/**
 * Whether an error a client library threw means a backing service is down or too slow (answered
 * 503, not 500). The kernel only holds the tests: lib/store registers those of its clients
 * (Postgres, Redis) when it loads, so the HTTP layer maps them without knowing either.
 */
const dependencyTests: Array<(err: unknown) => boolean> = [];

export function registerDependencyDown(test: (err: unknown) => boolean): void {
  if (!dependencyTests.includes(test)) dependencyTests.push(test);
}

export function isDependencyDown(err: unknown): boolean {
  for (const test of dependencyTests) if (test(err)) return true;
  return false;
}
