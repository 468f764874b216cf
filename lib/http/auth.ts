/**
 * Bearer-JWT authentication for /api/v1 (jose). Algorithms are pinned: HS256 with a shared
 * secret, or asymmetric algorithms only with a JWKS URL, so neither `none` nor HS/RS confusion
 * can pass. `exp` is required; `exp`/`nbf` allow 30 s of clock skew.
 */
import {
  SignJWT,
  createRemoteJWKSet,
  jwtVerify,
  errors as joseErrors,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import type { Config } from '../config/index.js';
import { persistentSecret } from '../config/secrets.js';
import { forbidden, unauthorized } from './problem.js';
import type { Authenticator, RequestInfo } from './router.js';

const CLOCK_SKEW_SEC = 30;
const MAX_TOKEN_LENGTH = 8192;
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** The HS256 secret: JWT_SECRET, else one generated under DATA_DIR on first start (mode 0600). */
export function resolveJwtSecret(config: Config): string {
  return config.jwtSecret || persistentSecret(config.dataDir, 'jwt-secret');
}

function verifyOptions(config: Config, algorithms: string[]): JWTVerifyOptions {
  const opts: JWTVerifyOptions = { algorithms, requiredClaims: ['exp'], clockTolerance: CLOCK_SKEW_SEC };
  if (config.jwtIssuer) opts.issuer = config.jwtIssuer;
  if (config.jwtAudience) opts.audience = config.jwtAudience;
  return opts;
}

function hasRole(claims: JWTPayload, role: string): boolean {
  const roles = claims['roles'];
  if (Array.isArray(roles) && roles.includes(role)) return true;
  const scope = claims['scope'];
  return typeof scope === 'string' && scope.split(' ').includes(role);
}

export function bearerToken(header: string | undefined): string {
  if (!header) throw unauthorized('missing bearer token');
  const m = /^Bearer +([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!m || m[1]!.length > MAX_TOKEN_LENGTH)
    throw unauthorized('malformed Authorization header; expected "Bearer <JWT>"');
  return m[1]!;
}

export function createAuthenticator(config: Config): Authenticator {
  const key = config.jwksUrl
    ? createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 3000, cooldownDuration: 30_000 })
    : new TextEncoder().encode(resolveJwtSecret(config));
  const options = verifyOptions(config, config.jwksUrl ? ASYMMETRIC : ['HS256']);
  return async (req: RequestInfo) => {
    const token = bearerToken(req.headers['authorization']);
    let claims: JWTPayload;
    try {
      ({ payload: claims } =
        typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options));
    } catch (err) {
      throw unauthorized(describeJoseError(err));
    }
    if (config.jwtRequiredRole && !hasRole(claims, config.jwtRequiredRole))
      throw forbidden(`the token lacks the role ${config.jwtRequiredRole}`);
    return claims;
  };
}

function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'the token has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `token claim check failed: ${err.claim} ${err.reason}`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'the token algorithm is not allowed';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'the token signature is invalid';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'no key matches the token';
  return 'the token is invalid';
}

/** Mints an operator token signed with the configured HS256 secret (the CLI in bin/ uses this). */
export async function mintToken(
  config: Config,
  opts: { subject?: string; ttlSec?: number; roles?: string[] } = {},
): Promise<string> {
  if (config.jwksUrl && !config.jwtSecret)
    throw new Error('JWKS_URL is configured: tokens come from your identity provider, not from this CLI');
  const jwt = new SignJWT({ roles: opts.roles ?? ['operator'] })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setSubject(opts.subject ?? 'operator')
    .setExpirationTime(`${opts.ttlSec ?? 3600}s`);
  if (config.jwtIssuer) jwt.setIssuer(config.jwtIssuer);
  if (config.jwtAudience) jwt.setAudience(config.jwtAudience);
  return jwt.sign(new TextEncoder().encode(resolveJwtSecret(config)));
}
