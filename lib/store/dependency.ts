/**
 * Errors of the store's clients that mean a backing service (Postgres, Redis) is down or too slow:
 * answered 503 with Retry-After rather than 500. Registered with the error kernel when the store
 * loads (lib/errors isDependencyDown), so the HTTP layer maps them without importing the store.
 */
import { registerDependencyDown } from '../errors/index.js';

const codes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  // postgres.js
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  // SQLSTATE (PostgreSQL manual appendix A)
  '57P01', // admin_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement_timeout)
  '53300', // too_many_connections
]);

export function isStoreDown(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && codes.has(code)) return true;
  const message = (err as { message?: unknown } | null)?.message;
  // ioredis: a closed connection, or a command past its commandTimeout.
  return typeof message === 'string' && /Connection is closed|Stream isn't writeable|Command timed out/.test(message);
}

registerDependencyDown(isStoreDown);
