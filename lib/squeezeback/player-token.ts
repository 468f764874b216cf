/**
 * The player's targeting token (docs/design.md §9): a JWT on the master URL, HS256 with the brand's
 * key. jose with the algorithm pinned (so `alg: none` and HS/RS confusion cannot pass), `exp`
 * required, 30 s of clock skew. Claims that are strings or numbers become targeting; the
 * registered claims (RFC 7519 §4.1) describe the token, not the viewer, and are left out.
 */
import { jwtVerify, errors as joseErrors } from 'jose';
import { unauthorized } from '../http/problem.js';

const MAX_TOKEN_LENGTH = 4096;
const MAX_CLAIMS = 100;
const MAX_CLAIM_LENGTH = 1024;
const REGISTERED = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti']);
const CHALLENGE = 'Bearer realm="squeezeback", error="invalid_token"';

const refuse = (detail: string) => unauthorized(detail, CHALLENGE);

/** The targeting claims of a valid token; throws a 401 HttpError otherwise. */
export async function verifyPlayerToken(
  token: string,
  key: Uint8Array | undefined,
  brand: string | undefined,
): Promise<Map<string, string>> {
  if (!brand) throw refuse('a token was given but the request names no brand');
  if (!key) throw refuse(`brand ${brand.slice(0, 64)} has no player-token key`);
  if (token.length > MAX_TOKEN_LENGTH) throw refuse('the token is too long');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: 30 }));
  } catch (err) {
    throw refuse(
      err instanceof joseErrors.JWTExpired
        ? 'the token has expired'
        : err instanceof joseErrors.JOSEAlgNotAllowed
          ? 'the token algorithm is not allowed'
          : 'the token is invalid',
    );
  }
  const claims = new Map<string, string>();
  for (const [name, value] of Object.entries(payload)) {
    if (claims.size >= MAX_CLAIMS) break;
    if (REGISTERED.has(name) || name.length > 256) continue;
    if (typeof value === 'string' && value.length <= MAX_CLAIM_LENGTH) claims.set(name, value);
    else if (typeof value === 'number' && Number.isFinite(value)) claims.set(name, String(value));
  }
  return claims;
}
