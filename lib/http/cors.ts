/**
 * CORS for the player-facing answers (issue 17 part 4; docs/decisions.md "CORS"): web players on a
 * broadcaster's page read playlists, VAST, beacons, stitched manifests and composed segments from
 * another origin. Every header set is built once, at start-up: with `*` (the default) an answer
 * costs two constant header writes and reads no request header; with a list of origins, the
 * request's Origin picks one of the precomputed sets (listed: echoed, with `Vary: Origin`; not
 * listed or absent: `Vary: Origin` only, so a shared cache never hands one origin's answer to another).
 */
import { latin1Bytes, type HttpRequest, type HttpResponse, type TemplatedApp } from './uws.js';
import { Exchange, NO_HEADERS, type HeaderPair, type Headers } from './exchange.js';
import { requestIdOf } from './request-id.js';

/** What players read beyond the CORS-safelisted response headers (Content-Length too: older browsers). */
export const CORS_EXPOSE = 'Age, Content-Length, Content-Range, Date, ETag, Last-Modified, Retry-After, X-Request-Id';
/** Request headers a player may send (hls.js: Range; the stitch POST: Content-Type); anything else fails the preflight. */
export const CORS_ALLOW_HEADERS = 'Content-Type, Range, If-None-Match, If-Modified-Since, X-Request-Id';
/** Chromium caps a cached preflight at 2 hours. */
const MAX_AGE = '7200';
const ORIGIN = /^https?:\/\/[^/?#\s,]+$/;

/** `*`, or the comma-separated origins of CORS_ALLOWED_ORIGINS; throws on anything else. */
export function parseOrigins(list: string): string[] {
  const origins = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!origins.length) return ['*'];
  for (const o of origins)
    if (o !== '*' && !ORIGIN.test(o)) throw new Error(`not an origin (scheme://host[:port]): ${JSON.stringify(o)}`);
  return origins;
}

/** The header read per request when origins are listed, as bytes (lib/http/uws.ts latin1Bytes). */
const ORIGIN_HEADER = latin1Bytes('origin');

/** The CORS headers of a uWS request on routes that may have no policy (built without one: none). */
export function corsOf(cors: Cors | undefined, req: HttpRequest): readonly HeaderPair[] {
  return cors ? cors.forRequest(req) : NO_HEADERS;
}

/** The answer to a preflight, per request origin: built once per route family. */
export type Preflight = (origin: string | undefined) => Headers;

export class Cors {
  /** True for `*`: the Origin need not be read. */
  readonly any: boolean;
  private readonly anyPairs: readonly HeaderPair[];
  private readonly byOrigin = new Map<string, readonly HeaderPair[]>();
  private readonly unlisted: readonly HeaderPair[] = Object.freeze([['Vary', 'Origin'] as const]);
  private readonly records = new Map<readonly HeaderPair[], Headers>();

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.anyPairs = Object.freeze([
      ['Access-Control-Allow-Origin', '*'] as const,
      ['Access-Control-Expose-Headers', CORS_EXPOSE] as const,
    ]);
    if (!this.any)
      for (const o of origins)
        this.byOrigin.set(
          o,
          Object.freeze([
            ['Access-Control-Allow-Origin', o] as const,
            ['Access-Control-Expose-Headers', CORS_EXPOSE] as const,
            ['Vary', 'Origin'] as const,
          ]),
        );
    for (const pairs of [this.anyPairs, this.unlisted, ...this.byOrigin.values()])
      this.records.set(pairs, Object.freeze(Object.fromEntries(pairs)));
  }

  /** The headers for a request with this Origin (undefined or '' when it sent none). */
  pairs(origin: string | undefined): readonly HeaderPair[] {
    if (this.any) return this.anyPairs;
    return (origin && this.byOrigin.get(origin)) || this.unlisted;
  }

  /** The same for a uWS request, read synchronously in its callback. */
  forRequest(req: HttpRequest): readonly HeaderPair[] {
    return this.any ? this.anyPairs : this.pairs(req.getHeader(ORIGIN_HEADER));
  }

  /** The same as a header object (node:http answers, or merged into another set). */
  record(origin: string | undefined): Headers {
    return this.records.get(this.pairs(origin))!;
  }

  /** The 204 answer to an OPTIONS preflight for routes that take these methods (e.g. `GET, HEAD, OPTIONS`). */
  preflight(methods: string): Preflight {
    const extra = {
      'Access-Control-Allow-Methods': methods,
      'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
      'Access-Control-Max-Age': MAX_AGE,
    };
    const answers = new Map<readonly HeaderPair[], Headers>();
    for (const [pairs, record] of this.records)
      answers.set(pairs, Object.freeze(pairs === this.unlisted ? { ...record } : { ...record, ...extra }));
    return (origin) => answers.get(this.pairs(origin))!;
  }

  /** Answers `OPTIONS pattern` on a uWS app with the preflight of these methods. */
  mountPreflight(app: TemplatedApp, pattern: string, methods: string): void {
    const answer = this.preflight(methods);
    app.options(
      pattern,
      (res: HttpResponse, req: HttpRequest) =>
        void new Exchange(res, false, NO_HEADERS, requestIdOf(req)).send(
          204,
          answer(this.any ? undefined : req.getHeader(ORIGIN_HEADER)),
        ),
    );
  }
}
