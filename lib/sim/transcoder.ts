/**
 * A simulated squeezeback transcoder for tests and the demo (docs/design.md §6, Transcoder contract).
 * `POST /v3/squeeze` validates the job the way a strict real service would (so a client bug fails
 * here, not in production) and answers `{output_uri}`; `GET /out/<output_key>.ts` serves a few
 * bytes of MPEG-TS for keys it has produced. Switchable failure modes.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';
import type { SqueezeJob } from '../squeeze/breaks/transcoder.js';
import type { FieldError } from '../errors/index.js';
import { validateSqueezeJob } from '../transcoder/job.js';

export type TranscoderMode = 'ok' | 'error' | 'slow' | 'flaky';

export interface TranscoderSimOptions {
  port?: number;
  mode?: TranscoderMode;
  delayMs?: number;
  slowMs?: number;
}

/** The contract's job (lib/squeeze/breaks/transcoder.ts); the simulator checks what arrives with the transcoder's own validation. */
export type { SqueezeJob };

const MAX_BODY = 1024 * 1024;
/** One MPEG-TS packet: sync byte, a null-PID header, stuffing. */
const TS_PACKET = Buffer.concat([Buffer.from([0x47, 0x1f, 0xff, 0x10]), Buffer.alloc(184, 0xff)]);

/** `a/b c` → `a/b%20c`: path segments encoded, slashes kept. */
const keyPath = (key: string) => key.split('/').map(encodeURIComponent).join('/');

export class TranscoderSim extends HttpSim {
  mode: TranscoderMode;
  /** Delay before an ok answer. */
  delayMs: number;
  /** Delay in 'slow' mode. */
  slowMs: number;
  /** Every accepted (valid) job body, in arrival order, whatever the mode answered. */
  readonly jobs: SqueezeJob[] = [];
  /** Calls per output_key. */
  readonly jobsByKey = new Map<string, number>();
  private readonly produced = new Set<string>();

  constructor(opts: TranscoderSimOptions = {}) {
    super(opts.port);
    this.mode = opts.mode ?? 'ok';
    this.delayMs = opts.delayMs ?? 0;
    this.slowMs = opts.slowMs ?? 10_000;
  }

  outputUri(key: string): string {
    return `${this.url}/out/${keyPath(key)}.ts`;
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://sim');
    const json = (status: number, body: unknown, type = 'application/json') => {
      if (!res.headersSent && !res.destroyed) res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
    };
    const problem = (status: number, title: string, detail?: string, errors?: FieldError[]) =>
      json(status, { type: 'about:blank', title, status, detail, errors }, 'application/problem+json');

    if (u.pathname.startsWith('/out/') && u.pathname.endsWith('.ts')) {
      req.resume();
      if (req.method !== 'GET' && req.method !== 'HEAD') return problem(405, 'Method Not Allowed');
      let key: string | undefined;
      try {
        key = u.pathname.slice('/out/'.length, -'.ts'.length).split('/').map(decodeURIComponent).join('/');
      } catch {
        key = undefined;
      }
      if (key === undefined || !this.produced.has(key)) return problem(404, 'Not Found', 'no such output');
      res
        .writeHead(200, { 'content-type': 'video/mp2t', 'content-length': TS_PACKET.length })
        .end(req.method === 'HEAD' ? undefined : TS_PACKET);
      return;
    }
    if (u.pathname !== '/v3/squeeze') {
      req.resume();
      return problem(404, 'Not Found');
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST');
      return problem(405, 'Method Not Allowed');
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      req.resume();
      return problem(415, 'Unsupported Media Type', 'the body must be application/json');
    }
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) {
      res.setHeader('connection', 'close');
      return problem(413, 'Content Too Large', `the body is limited to ${MAX_BODY} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      if (tooLarge) return;
      size += c.length;
      if (size > MAX_BODY) {
        tooLarge = true;
        res.setHeader('connection', 'close');
        problem(413, 'Content Too Large', `the body is limited to ${MAX_BODY} bytes`);
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (tooLarge) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return problem(400, 'Bad Request', 'the body is not valid JSON');
      }
      const errors = validateSqueezeJob(body);
      if (errors.length) return problem(400, 'Bad Request', 'the squeeze job is invalid', errors);
      this.answer(body as SqueezeJob, res, json, problem);
    });
  }

  private answer(
    job: SqueezeJob,
    res: http.ServerResponse,
    json: (status: number, body: unknown) => void,
    problem: (status: number, title: string, detail?: string) => void,
  ): void {
    const calls = (this.jobsByKey.get(job.output_key) ?? 0) + 1;
    this.jobsByKey.set(job.output_key, calls);
    this.jobs.push(job);
    const ok = () => {
      this.produced.add(job.output_key);
      json(200, { output_uri: this.outputUri(job.output_key) });
    };
    if (this.mode === 'error') return problem(500, 'Internal Server Error', 'the transcoder is broken');
    if (this.mode === 'flaky' && calls % 2 === 1) return problem(503, 'Service Unavailable', 'try again');
    this.later(res, this.mode === 'slow' ? this.slowMs : this.delayMs, ok);
  }
}
