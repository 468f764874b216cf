/** What every player-facing path shares (lib/app.ts builds it once): rate limits, CORS, the trusted hops, the in-flight count. */
import type { Cors } from './cors.js';
import type { RateLimiter } from './rate-limit.js';
import type { TrustedHops } from './client-ip.js';

export interface Edge {
  limiter: RateLimiter;
  cors: Cors;
  /** TRUSTED_PROXIES: whose X-Device-Ip and X-Forwarded-For name the client (the ad manager's and the CDN's ranges). */
  trusted: TrustedHops;
  /** Requests in flight, drained on shutdown (lib/http/server.ts). */
  inFlight: { count: number };
  /** Absolute base of URLs handed to players (PUBLIC_BASE_URL, else the listening address). */
  publicBaseUrl: () => string;
}
