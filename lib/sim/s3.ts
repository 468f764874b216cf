/**
 * A simulated S3-compatible object store for tests: real HTTP, path-style `/<bucket>/<object>`,
 * objects in memory. Every request must carry a valid AWS Signature V4 Authorization header: the
 * simulator rebuilds the canonical request from what it received (method, path as sent, sorted
 * query, the headers named in SignedHeaders) and recomputes the signature with its own copy of the
 * derivation, checks the body against `x-amz-content-sha256` and the date against a 15-minute
 * skew, and answers S3's error documents (403 SignatureDoesNotMatch, 404 NoSuchKey …) otherwise.
 */
import type http from 'node:http';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { HttpSim } from './http-sim.js';

export interface S3SimOptions {
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  port?: number;
}

const MAX_BODY = 64 * 1024 * 1024;
const SKEW_MS = 15 * 60_000;

const sha256 = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

export class S3Sim extends HttpSim {
  readonly objects = new Map<string, Buffer>();
  /** Requests answered, by status: a test can tell refused signatures from served ones. */
  readonly statuses: number[] = [];

  constructor(readonly opts: S3SimOptions) {
    super(opts.port ?? 0);
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => this.answer(req, res, Buffer.concat(chunks), size));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, size: number): void {
    const send = (status: number, code?: string, payload?: Buffer) => {
      this.statuses.push(status);
      if (res.headersSent || res.destroyed) return;
      if (code) {
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
      } else {
        res.writeHead(status, payload ? { 'content-length': String(payload.length) } : {});
        res.end(req.method === 'HEAD' ? undefined : payload);
      }
    };
    if (size > MAX_BODY) return send(400, 'EntityTooLarge');
    const why = this.refusal(req, body);
    if (why) return send(403, why);
    const url = req.url ?? '/';
    const [rawPath] = url.split('?');
    const segments = rawPath!.split('/').slice(1).map(decodeURIComponent);
    const [bucket, ...rest] = segments;
    if (bucket !== this.opts.bucket) return send(404, 'NoSuchBucket');
    const object = rest.join('/');
    if (!object) return send(400, 'InvalidRequest');
    if (req.method === 'PUT') {
      this.objects.set(object, body);
      return send(200);
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const found = this.objects.get(object);
      return found ? send(200, undefined, found) : send(404, 'NoSuchKey');
    }
    if (req.method === 'DELETE') {
      this.objects.delete(object);
      return send(204);
    }
    return send(405, 'MethodNotAllowed');
  }

  /** Why the request's signature is refused (an S3 error code), or undefined when it holds. */
  private refusal(req: http.IncomingMessage, body: Buffer): string | undefined {
    const auth = req.headers['authorization'] ?? '';
    const m =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!m) return 'AccessDenied';
    const [, accessKey, day, region, service, signedHeaders, signature] = m as unknown as string[];
    if (accessKey !== this.opts.accessKeyId) return 'InvalidAccessKeyId';
    if (region !== this.opts.region || service !== 's3') return 'AuthorizationHeaderMalformed';
    const date = String(req.headers['x-amz-date'] ?? '');
    const at = Date.parse(date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    if (!Number.isFinite(at) || date.slice(0, 8) !== day) return 'AccessDenied';
    if (Math.abs(Date.now() - at) > SKEW_MS) return 'RequestTimeTooSkewed';
    const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
    if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body)) return 'XAmzContentSHA256Mismatch';
    const names = signedHeaders!.split(';');
    if (!names.includes('host') || !names.includes('x-amz-date')) return 'AccessDenied';
    const [rawPath, rawQuery = ''] = (req.url ?? '/').split('?');
    const query = rawQuery
      .split('&')
      .filter(Boolean)
      .map((kv) => (kv.includes('=') ? kv : `${kv}=`))
      .sort()
      .join('&');
    const headerLines = names.map((n) => {
      const v = req.headers[n];
      return `${n}:${(Array.isArray(v) ? v.join(',') : (v ?? '')).trim().replace(/\s+/g, ' ')}`;
    });
    const canonical = [req.method, rawPath, query, ...headerLines, '', signedHeaders, payloadHash].join('\n');
    const scope = `${day}/${region}/s3/aws4_request`;
    const toSign = `AWS4-HMAC-SHA256\n${date}\n${scope}\n${sha256(canonical)}`;
    let key: Buffer = createHmac('sha256', `AWS4${this.opts.secretAccessKey}`).update(day!).digest();
    for (const part of [region!, 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    const expected = createHmac('sha256', key).update(toSign).digest();
    return timingSafeEqual(expected, Buffer.from(signature!, 'hex')) ? undefined : 'SignatureDoesNotMatch';
  }
}
