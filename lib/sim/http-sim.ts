/**
 * The node:http plumbing shared by the simulators of collaborators we do not own (ad server,
 * transcoder): listen on loopback, remember the URL, answer later without leaking timers, and stop
 * with every connection closed.
 */
import http from 'node:http';

export abstract class HttpSim {
  port = 0;
  url = '';
  private server: http.Server | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly listenPort = 0) {}

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse): void;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.listenPort, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as { port: number }).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /**
   * For the media origins: the request's path (counted in `requests`) and a `send` that answers like
   * a CDN serving web players (no-cache, CORS `*`; no body for HEAD; nothing once the client left).
   */
  protected cdnExchange(req: http.IncomingMessage, res: http.ServerResponse, requests: Map<string, number>) {
    req.resume();
    const path = (req.url ?? '/').split('?')[0]!;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const send = (status: number, type: string, body: string | Buffer) => {
      if (!res.headersSent && !res.destroyed)
        res
          .writeHead(status, { 'content-type': type, 'cache-control': 'no-cache', 'access-control-allow-origin': '*' })
          .end(req.method === 'HEAD' ? undefined : body);
    };
    return { path, send };
  }

  /** Runs `fn` after `ms` (at once for 0), unless the client went away first. */
  protected later(res: http.ServerResponse, ms: number, fn: () => void): void {
    if (ms <= 0) return fn();
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    res.on('close', () => {
      clearTimeout(t);
      this.timers.delete(t);
    });
  }
}
