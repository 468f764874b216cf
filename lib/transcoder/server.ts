/**
 * The reference transcoder's HTTP face (node:http: not the manifest hot path): `POST /v3/squeeze`
 * (docs/design.md §6) and the object store at `GET|HEAD /objects/<output_key>.ts`, read by players
 * (so CORS). Errors are problem+json from the project's registry (lib/http/problem.ts).
 */
import { createReadStream } from 'node:fs';
import http from 'node:http';
import type { Logger } from '../log/index.js';
import { HttpError, problemResponse, validationFailed, type ProblemCode } from '../http/problem.js';
import { Cors } from '../http/cors.js';
import { FfmpegError } from './ffmpeg.js';
import { InputError } from './inputs.js';
import { validateSqueezeJob, type SqueezeJob } from './job.js';
import { JobTimeout, UnusableInput, type Transcoder } from './service.js';
import { TsRewriteError } from './id3-inject.js';

const MAX_BODY = 1024 * 1024;

export interface TranscoderServerOptions {
  corsOrigins: string[];
  retentionSec: number;
  log: Logger;
}

/** The problem a failed job answers: input faults are final (4xx), the rest may be retried (5xx). */
function jobProblem(err: unknown, log: Logger): HttpError {
  const e = (code: ProblemCode, detail: string, headers?: Record<string, string>) =>
    new HttpError(code, detail, undefined, headers);
  if (err instanceof HttpError) return err;
  if (err instanceof FfmpegError && err.code === 'missing')
    return e('unavailable', err.message, { 'Retry-After': '30' });
  if (err instanceof FfmpegError && err.code === 'timeout') return e('upstream-timeout', err.message);
  if (err instanceof JobTimeout) return e('upstream-timeout', err.message);
  if (err instanceof UnusableInput) return e('unprocessable', err.message);
  if (err instanceof InputError)
    return err.code === 'unusable' ? e('unprocessable', err.message) : e('upstream-failed', err.message);
  if (err instanceof TsRewriteError)
    return e('unprocessable', `the composed segment could not carry the ID3 tag: ${err.message}`);
  log.error({ err }, 'squeeze job failed');
  return e('internal', err instanceof FfmpegError ? err.message : 'internal error');
}

export function createTranscoderServer(transcoder: Transcoder, opts: TranscoderServerOptions): http.Server {
  // The service's CORS policy (lib/http/cors.ts), from the same CORS_ALLOWED_ORIGINS.
  const policy = new Cors(opts.corsOrigins);
  const cors = (origin: string | undefined) => policy.record(origin);
  const preflight = policy.preflight('GET, HEAD, POST, OPTIONS');
  const objectHeaders = {
    'Content-Type': 'video/mp2t',
    'Cache-Control': `public, max-age=${opts.retentionSec}, immutable`,
  };

  const send = (res: http.ServerResponse, status: number, headers: Record<string, string | number>, body?: string) => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, headers).end(body);
  };
  const fail = (req: http.IncomingMessage, res: http.ServerResponse, err: HttpError) => {
    const p = problemResponse(err);
    send(res, p.status, { ...cors(req.headers.origin), ...p.headers }, req.method === 'HEAD' ? undefined : p.body);
  };

  const squeeze = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      req.resume();
      return fail(req, res, new HttpError('unsupported-media-type', 'the body must be application/json'));
    }
    const tooLarge = () => {
      res.setHeader('Connection', 'close');
      fail(req, res, new HttpError('payload-too-large', `the body is limited to ${MAX_BODY} bytes`));
    };
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        req.removeAllListeners('data');
        req.resume();
        return tooLarge();
      }
      chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (size > MAX_BODY) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail(req, res, new HttpError('bad-request', 'the body is not valid JSON'));
      }
      const errors = validateSqueezeJob(body);
      if (errors.length) return fail(req, res, validationFailed(errors));
      transcoder.compose(body as SqueezeJob).then(
        (uri) =>
          send(
            res,
            200,
            { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
            JSON.stringify({ output_uri: uri }),
          ),
        (err: unknown) => fail(req, res, jobProblem(err, opts.log)),
      );
    });
  };

  const object = async (req: http.IncomingMessage, res: http.ServerResponse, encoded: string) => {
    const file = transcoder.store.fileOfUrlPath(encoded);
    const size = file ? await transcoder.store.size(file) : undefined;
    if (!file || size === undefined) return fail(req, res, new HttpError('not-found', 'no such object'));
    const headers = { ...objectHeaders, ...cors(req.headers.origin), 'Content-Length': size };
    if (req.method === 'HEAD') return send(res, 200, headers);
    const stream = createReadStream(file);
    stream.once('open', () => {
      res.writeHead(200, headers);
      stream.pipe(res);
    });
    stream.once('error', () =>
      res.headersSent ? res.destroy() : fail(req, res, new HttpError('not-found', 'no such object')),
    );
    res.once('close', () => stream.destroy());
  };

  return http.createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'OPTIONS') {
      req.resume();
      return send(res, 204, preflight(req.headers.origin));
    }
    if (pathname === '/v3/squeeze') {
      if (req.method === 'POST') return squeeze(req, res);
      req.resume();
      res.setHeader('Allow', 'POST');
      return fail(req, res, new HttpError('method-not-allowed', 'use POST'));
    }
    if (pathname.startsWith('/objects/')) {
      req.resume();
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        return fail(req, res, new HttpError('method-not-allowed', 'use GET or HEAD'));
      }
      void object(req, res, pathname.slice('/objects/'.length)).catch(() => res.destroy());
      return;
    }
    if (pathname === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      req.resume();
      void transcoder.checkFfmpeg().then(
        () =>
          send(
            res,
            200,
            { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
            JSON.stringify({ status: 'ok' }),
          ),
        (err: Error) => fail(req, res, new HttpError('unavailable', err.message)),
      );
      return;
    }
    req.resume();
    fail(req, res, new HttpError('not-found', 'no such resource'));
  });
}
