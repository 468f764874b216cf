/** Errors that mean a backing service (Postgres, Redis) is down or too slow, answered 503 rather than 500. */
const codes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  '57P01', // admin_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement_timeout)
  '53300', // too_many_connections
]);

export function isDependencyDown(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && codes.has(code)) return true;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /Connection is closed|Stream isn't writeable|Command timed out/.test(message);
}
