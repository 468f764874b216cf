/**
 * The query of a manifest request, passed on to the upstream as it came: capped, and refused when
 * it carries spaces or control characters (no CR, LF or NUL can reach a request line). Checked by
 * the DAI proxy and the squeezeback flow alike.
 */
import { badRequest } from '../http/problem.js';

const MAX_QUERY = 8192;
const QUERY = /^[\x21-\x7e]*$/; // printable ASCII without space; no CR, LF, NUL

export function checkQuery(query: string): void {
  if (query.length > MAX_QUERY) throw badRequest('query too long');
  // Most manifest requests carry no query: no regular expression run for them.
  if (query && !QUERY.test(query)) throw badRequest('control characters or spaces in the query');
}
