/**
 * 405 for a known path asked with a method it does not take (issue 25): uWS tries a pattern's
 * method-specific handlers before its `any` handler, so an `any` registered on the same pattern
 * answers exactly the other methods, with `Allow` and a problem body, instead of the fallback 404.
 */
import type { TemplatedApp } from './uws.js';
import { corsOf, type Cors } from './cors.js';
import { Exchange } from './exchange.js';
import { HttpError } from './problem.js';
import { requestIdOf } from './request-id.js';

/** Registers the 405 answer for `pattern`, whose handlers take `allow` (e.g. `GET, HEAD`). */
export function guardMethods(app: TemplatedApp, pattern: string, allow: string, cors?: Cors): void {
  app.any(pattern, (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const ex = new Exchange(res, method === 'HEAD', corsOf(cors, req), requestIdOf(req));
    ex.problem(
      new HttpError('method-not-allowed', `${method.slice(0, 16)} is not allowed here`, undefined, { Allow: allow }),
    );
  });
}
