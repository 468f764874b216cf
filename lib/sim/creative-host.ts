/**
 * A hostile creative host for the conditioning limits (issue 26 part 4): every path answers a
 * large body of zeros, written with back-pressure (the next chunk only once the socket took the
 * last), so the bytes it counts as sent are what the client read plus the kernel's socket buffers,
 * never a body queued in memory. By the path's first segment:
 * - `/declared/…`: `Content-Length: totalBytes`, streamed as fast as the client reads;
 * - `/chunked/…`: the same without a length (chunked), so only a running count can stop it;
 * - `/trickle/…`: chunked, `trickleBytes` every `trickleMs` (never idle long enough for a body
 *   timeout, only an overall deadline ends it).
 * Each request is recorded (bytes sent, whether it ended early and when); `closed` fires when a
 * request's connection closed, so a test waits on that event rather than sleeping.
 */
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

export interface CreativeHostOptions {
  totalBytes: number;
  chunkBytes?: number;
  trickleBytes?: number;
  trickleMs?: number;
}

export interface CreativeHostRequest {
  path: string;
  mode: 'declared' | 'chunked' | 'trickle';
  startedAt: number;
  /** Body bytes handed to the socket. */
  bytesSent: number;
  /** The whole body was sent. */
  finished: boolean;
  closedAt?: number;
}

export class CreativeHostSim extends HttpSim {
  readonly requests: CreativeHostRequest[] = [];
  /** `request` (request): one arrived; `closed` (request): its connection closed, whole body sent or not. */
  readonly events = new EventEmitter();

  constructor(private readonly opts: CreativeHostOptions) {
    super();
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    const path = (req.url ?? '/').split('?')[0]!;
    const mode = path.split('/')[1];
    if (mode !== 'declared' && mode !== 'chunked' && mode !== 'trickle') return void res.writeHead(404).end();
    const rec: CreativeHostRequest = { path, mode, startedAt: Date.now(), bytesSent: 0, finished: false };
    this.requests.push(rec);
    this.events.emit('request', rec);
    res.on('close', () => {
      rec.closedAt = Date.now();
      this.events.emit('closed', rec);
    });
    const total = this.opts.totalBytes;
    res.writeHead(200, {
      'content-type': 'video/mp4',
      ...(mode === 'declared' ? { 'content-length': String(total) } : {}),
    });
    const size = mode === 'trickle' ? (this.opts.trickleBytes ?? 1024) : (this.opts.chunkBytes ?? 64 * 1024);
    const chunk = Buffer.alloc(size);
    const send = (): boolean => {
      if (res.destroyed) return false;
      if (rec.bytesSent >= total) {
        rec.finished = true;
        res.end();
        return false;
      }
      const part = chunk.subarray(0, Math.min(size, total - rec.bytesSent));
      rec.bytesSent += part.length;
      return res.write(part);
    };
    if (mode === 'trickle') {
      // One timer per request, cleared when the client goes (or the sim stops and closes it).
      const timer = setInterval(() => void send(), this.opts.trickleMs ?? 100);
      res.on('close', () => clearInterval(timer));
      send();
      return;
    }
    const next = (): void => {
      if (send()) setImmediate(next);
      else if (!res.destroyed && !rec.finished) res.once('drain', next);
    };
    next();
  }

  /** The first request whose path starts with `prefix`. */
  of(prefix: string): CreativeHostRequest | undefined {
    return this.requests.find((r) => r.path.startsWith(prefix));
  }
}
