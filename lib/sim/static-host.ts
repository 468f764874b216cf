/**
 * A content origin for tests and the demo: serves the files it is given (path → body), with a
 * content type from the extension; switchable to fail (500) or answer slowly. The caller passes the
 * text (e.g. fixtures), so the simulator reads no files itself.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

const TYPES: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  mpd: 'application/dash+xml',
  vtt: 'text/vtt',
  xml: 'application/xml',
};

export class StaticHostSim extends HttpSim {
  mode: 'ok' | 'error' | 'slow' = 'ok';
  slowMs = 30_000;
  readonly hits: string[] = [];

  constructor(
    readonly files: Map<string, string> = new Map(),
    port = 0,
  ) {
    super(port);
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    const path = (req.url ?? '/').split('?')[0]!;
    this.hits.push(path);
    const send = (status: number, type: string, body: string) => {
      if (!res.headersSent && !res.destroyed)
        res.writeHead(status, { 'content-type': type }).end(req.method === 'HEAD' ? undefined : body);
    };
    if (this.mode === 'error') return send(500, 'text/plain', 'origin broken');
    const body = this.files.get(path);
    const ext = path.slice(path.lastIndexOf('.') + 1);
    this.later(res, this.mode === 'slow' ? this.slowMs : 0, () =>
      body === undefined
        ? send(404, 'text/plain', 'not found')
        : send(200, TYPES[ext] ?? 'application/octet-stream', body),
    );
  }
}
