/**
 * The HTTP face, framework only: one uWS app, `/healthz`, `/readyz` (from the checks it is
 * given), `/metrics`, the problem answer for unknown paths, listening, and a graceful drain.
 * Domains mount their routes on `app`; the composition root (lib/app.ts) decides which.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { loadUws, type HttpRequest, type TemplatedApp, type us_listen_socket } from './uws.js';
import { Exchange, NO_HEADERS } from './exchange.js';
import { guardMethods } from './methods.js';
import { requestIdOf } from './request-id.js';
import type { Registry } from '../metrics/index.js';
import { notFound, unauthorized } from './problem.js';
import type { Logger } from '../log/index.js';

/** A readiness check: resolves when the dependency answers. */
export type ReadinessCheck = () => Promise<unknown>;

export interface HttpServerOptions {
  host: string;
  port: number;
  allowUwsFallback: boolean;
  metrics: Registry;
  log: Logger;
  /** Named checks for /readyz, each bounded by READY_TIMEOUT_MS. */
  readiness: Record<string, ReadinessCheck>;
  /** METRICS_TOKEN: when non-empty, /metrics needs it (issue 24: its per-brand counters are not public). */
  metricsToken?: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The check of METRICS_TOKEN: `Authorization: Bearer <token>` (what Prometheus' `authorization`
 * setting sends) or `X-Metrics-Token: <token>`, compared in constant time; undefined when unset.
 */
function metricsGuard(token: string | undefined): ((req: HttpRequest) => boolean) | undefined {
  if (!token) return undefined;
  const want = digest(token);
  return (req) => {
    const bearer = /^Bearer +(\S+)\s*$/i.exec(req.getHeader('authorization'))?.[1];
    const given = bearer ?? req.getHeader('x-metrics-token');
    return given !== '' && timingSafeEqual(digest(given), want);
  };
}

const READY_TIMEOUT_MS = 1000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

export class HttpServer {
  readonly app: TemplatedApp;
  /** Requests being answered: the drain waits for them. */
  readonly inFlight = { count: 0 };
  private readonly uws;
  private listenSocket: us_listen_socket | undefined;
  private draining = false;

  constructor(private readonly opts: HttpServerOptions) {
    this.uws = loadUws(opts.allowUwsFallback);
    const app = (this.app = this.uws.App());
    app.get(
      '/healthz',
      (res, req) =>
        void new Exchange(res, false, NO_HEADERS, requestIdOf(req)).send(
          200,
          { 'Content-Type': 'application/json' },
          '{"status":"ok"}',
        ),
    );
    const allowed = metricsGuard(opts.metricsToken);
    app.get('/metrics', (res, req) => {
      const ex = new Exchange(res, false, NO_HEADERS, requestIdOf(req));
      if (allowed && !allowed(req)) {
        ex.problem(
          unauthorized(
            '/metrics needs METRICS_TOKEN (Authorization: Bearer, or X-Metrics-Token)',
            'Bearer realm="metrics"',
          ),
        );
        return;
      }
      ex.send(200, { 'Content-Type': 'text/plain; version=0.0.4' }, opts.metrics.render());
    });
    app.get('/readyz', (res, req) => {
      const ex = new Exchange(res, false, NO_HEADERS, requestIdOf(req));
      const names = Object.keys(opts.readiness);
      void Promise.allSettled(names.map((n) => withTimeout(opts.readiness[n]!(), READY_TIMEOUT_MS, n))).then(
        (results) => {
          const status: Record<string, string | boolean> = {};
          names.forEach((n, i) => (status[n] = results[i]!.status === 'fulfilled' ? 'ok' : 'down'));
          const ok = results.every((r) => r.status === 'fulfilled') && !this.draining;
          ex.send(
            ok ? 200 : 503,
            { 'Content-Type': 'application/json' },
            JSON.stringify({ status: ok ? 'ready' : 'unavailable', ...status, shutting_down: this.draining }),
          );
        },
      );
    });
  }

  /** Answers every path no domain claimed with a 404 problem; call after the domains mounted theirs. */
  mountFallback(): void {
    for (const path of ['/healthz', '/readyz', '/metrics']) guardMethods(this.app, path, 'GET');
    this.app.any('/*', (res, req) => {
      new Exchange(res, req.getMethod() === 'head', NO_HEADERS, requestIdOf(req)).problem(
        notFound(`no route for ${req.getUrl().slice(0, 200)}`),
      );
    });
  }

  async listen(): Promise<{ port: number; url: string }> {
    const { host, port } = this.opts;
    this.listenSocket = await new Promise<us_listen_socket>((resolve, reject) =>
      this.app.listen(host, port, (s) =>
        s ? resolve(s) : reject(new Error(`cannot listen on ${host}:${port} (in use or not permitted)`)),
      ),
    );
    const bound = this.uws.us_socket_local_port(this.listenSocket);
    return { port: bound, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}` };
  }

  /**
   * The rolling-restart order (docs/design.md §17): `/readyz` answers 503 at once, so a load
   * balancer checking it takes this instance out; for drainMs (one check interval) every other
   * path is still served as usual, since the balancer may still route here until its next check;
   * then the listener closes (new connections are refused, which a balancer retries elsewhere)
   * and the requests in flight get up to graceMs to finish.
   */
  async drain(drainMs: number, graceMs: number): Promise<void> {
    this.draining = true;
    if (drainMs > 0) {
      this.opts.log.info({ drainMs }, 'draining: /readyz answers 503, still serving');
      await new Promise((r) => setTimeout(r, drainMs));
    }
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    const deadline = Date.now() + graceMs;
    while (this.inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (this.inFlight.count > 0)
      this.opts.log.warn({ inFlight: this.inFlight.count }, 'shutdown grace elapsed with requests in flight');
    // Idle keep-alive connections (a balancer's pool) would otherwise be served by a process whose
    // parts are stopping; closing them makes the balancer open a new connection elsewhere.
    // `close` is in the binary (uWS ≥ 20.x) though not in its typings.
    (this.app as unknown as { close?: () => void }).close?.();
  }
}
