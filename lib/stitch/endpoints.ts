/**
 * `GET|HEAD /{STITCH_PATH}/cache/{id}/{file}`: the stitched manifests, served like the hot path
 * (docs/design.md §4): from the in-process cache without a database round trip, else from
 * Postgres once (another instance stitched it); 404 problem once the session expired. A session
 * keeps its splice plan; its files are rendered from it once per process and kept while memory
 * allows (the rendering in memory answers without a promise). The same
 * prefix serves an interstitial session's asset lists (`assets/{n}.json`). And
 * `/{STITCH_PATH}/filler.vtt`, the empty WebVTT cue file that fills subtitle playlists during ads.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import { Exchange } from '../http/exchange.js';
import { corsOf, type Cors } from '../http/cors.js';
import { problem, type ProblemCode } from '../http/problem.js';
import { conditionsOf, sendNegotiated, type Body, type Conditions } from '../http/representation.js';
import { guardMethods } from '../http/methods.js';
import { requestIdOf } from '../http/request-id.js';
import type { Logger } from '../log/index.js';
import type { StitchSession, StitchStore } from './store.js';

const ID = /^[A-Za-z0-9_-]{16,64}$/;
const FILE = /^[A-Za-z0-9_-]{1,32}\.(m3u8|mpd)$/;
/** An interstitial pod's asset list (RFC 8216bis Appendix D.3); players add query parameters, which are ignored. */
const ASSET_LIST = /^assets\/[0-9]{1,4}\.json$/;
const TYPES: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  mpd: 'application/dash+xml',
  json: 'application/json',
};
const FILLER = 'WEBVTT\n\n';

/** A session's files: from memory when rendered here, else rendered from its plan. */
export interface SessionFiles {
  cachedFiles(s: StitchSession): Record<string, string> | undefined;
  files(s: StitchSession): Promise<Record<string, string>>;
}

function sendProblem(ex: Exchange, code: ProblemCode, detail: string): void {
  ex.problem(problem(code, detail), { cdn: true });
}

export class StitchEndpoints {
  constructor(
    private readonly stitchPath: string,
    private readonly store: StitchStore,
    private readonly rendering: SessionFiles,
    private readonly log: Logger,
    /** CORS for web players (none: no CORS headers). */
    private readonly cors?: Cors,
    /** STITCH_TTL_SEC: a session was stitched this long before it expires (its Last-Modified). */
    private readonly ttlSec = 0,
  ) {}

  /**
   * The answers of a session's files, built once per minute of its remaining lifetime (the
   * max-age counts down with it): the body, its ETag and gzip form are then made once per
   * minute, not per request (lib/http/representation.ts keys them on the body).
   */
  private readonly bodies = new WeakMap<StitchSession, Map<string, Body>>();

  mount(app: TemplatedApp): void {
    const cache = (res: HttpResponse, req: HttpRequest) => this.serve(res, req);
    app.get(`/${this.stitchPath}/cache/*`, cache);
    app.head(`/${this.stitchPath}/cache/*`, cache);
    const filler = (res: HttpResponse, req: HttpRequest) =>
      void new Exchange(res, req.getMethod() === 'head', corsOf(this.cors, req), requestIdOf(req)).send(
        200,
        { 'Content-Type': 'text/vtt', 'Cache-Control': 'public, max-age=86400' },
        FILLER,
      );
    app.get(`/${this.stitchPath}/filler.vtt`, filler);
    app.head(`/${this.stitchPath}/filler.vtt`, filler);
    this.cors?.mountPreflight(app, `/${this.stitchPath}/cache/*`, 'GET, HEAD, OPTIONS');
    this.cors?.mountPreflight(app, `/${this.stitchPath}/filler.vtt`, 'GET, HEAD, OPTIONS');
    const allow = this.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD';
    guardMethods(app, `/${this.stitchPath}/cache/*`, allow, this.cors);
    guardMethods(app, `/${this.stitchPath}/filler.vtt`, allow, this.cors);
  }

  private serve(res: HttpResponse, req: HttpRequest): void {
    const ex = new Exchange(res, req.getMethod() === 'head', corsOf(this.cors, req), requestIdOf(req));
    const parts = req
      .getUrl()
      .slice(this.stitchPath.length + 2)
      .split('/'); // cache/{id}/{file} or cache/{id}/assets/{n}.json
    const id = parts[1] ?? '';
    const file = parts.slice(2).join('/');
    if (!ID.test(id) || !(FILE.test(file) || ASSET_LIST.test(file)))
      return sendProblem(ex, 'not-found', 'no such stitched manifest');
    const conditions = conditionsOf(req);
    const hit = this.store.cached(id);
    if (hit) return this.answer(ex, hit, file, conditions);
    this.store.get(id).then(
      (s) =>
        s
          ? this.answer(ex, s, file, conditions)
          : sendProblem(ex, 'not-found', 'no such stitched manifest (or it expired)'),
      (err: Error) => {
        this.log.warn({ err: err.message }, 'stitch cache: database lookup failed');
        sendProblem(ex, 'unavailable', 'the stitched manifest cannot be read now');
      },
    );
  }

  private answer(ex: Exchange, s: StitchSession, file: string, conditions: Conditions): void {
    const files = this.rendering.cachedFiles(s);
    if (files) return this.send(ex, s, files, file, conditions);
    this.rendering.files(s).then(
      (f) => this.send(ex, s, f, file, conditions),
      (err: Error) => {
        this.log.warn({ err: err.message, session: s.id }, 'stitch cache: the session cannot be rendered now');
        sendProblem(ex, 'unavailable', 'the stitched manifest cannot be rendered now');
      },
    );
  }

  private send(
    ex: Exchange,
    s: StitchSession,
    files: Record<string, string>,
    file: string,
    conditions: Conditions,
  ): void {
    const text = Object.hasOwn(files, file) ? files[file] : undefined;
    if (text === undefined) return sendProblem(ex, 'not-found', 'no such stitched manifest');
    // Up to the session's remaining lifetime (an hour at most), in whole minutes.
    const maxAge = Math.min(3600, Math.max(0, Math.floor((s.expiresAt - Date.now()) / 60_000) * 60));
    const key = `${maxAge}|${file}`;
    let bodies = this.bodies.get(s);
    if (!bodies) this.bodies.set(s, (bodies = new Map()));
    let body = bodies.get(key);
    if (!body) {
      for (const k of bodies.keys()) if (k.endsWith(`|${file}`)) bodies.delete(k);
      body = {
        status: 200,
        headers: {
          'Content-Type': TYPES[file.slice(file.lastIndexOf('.') + 1)]!,
          'Cache-Control': `public, max-age=${maxAge}`,
        },
        body: Buffer.from(text),
      };
      bodies.set(key, body);
    }
    // A session's files never change: Last-Modified is when it was stitched (stable across instances with one STITCH_TTL_SEC).
    sendNegotiated(ex, body, conditions, undefined, { shared: true, lastModified: s.expiresAt - this.ttlSec * 1000 });
  }
}
