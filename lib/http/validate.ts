/** ajv validators for request bodies and query strings; failures become 400 problems with `errors[]`. */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { validationFailed, type FieldError } from './problem.js';

const bodyAjv = new Ajv({ allErrors: true, strict: false });
const queryAjv = new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true });

export type JsonSchema = Record<string, unknown>;

function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) => {
      let path = e.instancePath || '/';
      if (e.keyword === 'required') path = `${e.instancePath}/${String(e.params['missingProperty'])}`;
      if (e.keyword === 'additionalProperties') path = `${e.instancePath}/${String(e.params['additionalProperty'])}`;
      const message =
        e.keyword === 'additionalProperties'
          ? 'is not a known field'
          : e.keyword === 'enum'
            ? `must be one of ${(e.params['allowedValues'] as unknown[]).join(', ')}`
            : (e.message ?? 'is invalid');
      return { path, message };
    });
}

function check<T>(fn: ValidateFunction, value: unknown): T {
  if (!fn(value)) throw validationFailed(toFieldErrors(fn.errors));
  return value as T;
}

/** A body validator; an absent body is reported as a validation error, not a crash. */
export function bodyValidator<T>(schema: JsonSchema): (body: unknown) => T {
  const fn = bodyAjv.compile(schema);
  return (body) => {
    if (body === undefined) throw validationFailed([{ path: '/', message: 'a JSON body is required' }]);
    return check<T>(fn, body);
  };
}

/** A query validator over the first value of each parameter, with type coercion and defaults. */
export function queryValidator<T>(schema: JsonSchema): (query: URLSearchParams) => T {
  const fn = queryAjv.compile(schema);
  return (query) => {
    const obj: Record<string, string> = {};
    for (const [k, v] of query) if (!(k in obj)) obj[k] = v;
    return check<T>(fn, obj);
  };
}

/** A path id: a positive integer that fits a Postgres `integer`; anything else is 400. */
export function idParam(raw: string | undefined): number {
  if (!raw || !/^\d{1,10}$/.test(raw) || Number(raw) < 1 || Number(raw) > 2 ** 31 - 1)
    throw validationFailed([{ path: '/id', message: 'must be a positive integer' }]);
  return Number(raw);
}
