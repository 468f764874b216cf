/**
 * A content origin for tests and the demo: serves the files it is given (path → body: text, or
 * media bytes), with a content type from the extension and CORS `*` (web players in the browser
 * tests read it, as they read a CDN); switchable to fail (500) or answer slowly. The caller passes
 * the bodies (e.g. fixtures, or media made with ffmpeg), so the simulator reads no files itself.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

const TYPES: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  mpd: 'application/dash+xml',
  vtt: 'text/vtt',
  xml: 'application/xml',
  ts: 'video/mp2t',
  m4s: 'video/iso.segment',
  mp4: 'video/mp4',
};

export class StaticHostSim extends HttpSim {
  mode: 'ok' | 'error' | 'slow' = 'ok';
  slowMs = 30_000;
  readonly hits: string[] = [];

  constructor(
    readonly files: Map<string, string | Buffer> = new Map(),
    port = 0,
  ) {
    super(port);
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    const path = (req.url ?? '/').split('?')[0]!;
    this.hits.push(path);
    const send = (status: number, type: string, body: string | Buffer) => {
      if (!res.headersSent && !res.destroyed)
        res
          .writeHead(status, { 'content-type': type, 'access-control-allow-origin': '*' })
          .end(req.method === 'HEAD' ? undefined : body);
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
