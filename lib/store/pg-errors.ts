/**
 * The one mapping of Postgres constraint violations to domain errors (SQLSTATE class 23,
 * PostgreSQL manual appendix A). Anything else is rethrown as it is.
 */
import { conflict, notFound } from '../errors/index.js';

export interface ViolationMessages {
  /** 23505 unique_violation → conflict; a function gets the constraint's name. */
  unique?: string | ((constraint: string) => string);
  /** 23503 foreign_key_violation → not found (the row referred to does not exist). */
  foreignKey?: string | ((constraint: string) => string);
}

const text = (m: string | ((c: string) => string), constraint: string) => (typeof m === 'function' ? m(constraint) : m);

/** Throws the domain error for a violation the caller named a message for, else err itself. */
export function rethrowViolation(err: unknown, messages: ViolationMessages): never {
  const e = err as { code?: string; constraint_name?: string };
  const constraint = e.constraint_name ?? '';
  if (e.code === '23505' && messages.unique) throw conflict(text(messages.unique, constraint));
  if (e.code === '23503' && messages.foreignKey) throw notFound(text(messages.foreignKey, constraint));
  throw err;
}
