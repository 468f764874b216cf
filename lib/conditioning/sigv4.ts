/**
 * AWS Signature Version 4 for S3-compatible object stores, header form (the AWS docs' "Signature
 * Calculations for the Authorization Header"), with node:crypto only: no SDK for four requests.
 * The caller builds the path already encoded (`s3Path`) and sends exactly the headers signed here.
 */
import { createHash, createHmac } from 'node:crypto';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** `s3` for object stores. */
  service: string;
}

export interface SigV4Request {
  method: string;
  /** Host header value (host[:port]). */
  host: string;
  /** The path as sent, each segment encoded with `awsEncode`. */
  path: string;
  /** Extra headers to sign (lower-case names), besides host and the x-amz ones. */
  headers?: Record<string, string>;
  /** Hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`). */
  payloadHash: string;
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export const sha256Hex = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const hmac = (key: string | Buffer, s: string) => createHmac('sha256', key).update(s).digest();

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - . _ ~ percent-encoded, upper-case hex. */
export function awsEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `20130524T000000Z` */
export function amzDate(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The headers to send with the request: the signed ones plus `authorization`. */
export function signV4(req: SigV4Request, cred: SigV4Credentials, now = new Date()): Record<string, string> {
  const date = amzDate(now);
  const day = date.slice(0, 8);
  const headers: Record<string, string> = {
    ...req.headers,
    host: req.host,
    'x-amz-content-sha256': req.payloadHash,
    'x-amz-date': date,
  };
  const names = Object.keys(headers)
    .map((n) => n.toLowerCase())
    .sort();
  const signedHeaders = names.join(';');
  const canonical = [
    req.method,
    req.path,
    '', // no query string in the requests made here
    ...names.map((n) => `${n}:${headers[n]!.trim().replace(/\s+/g, ' ')}`),
    '',
    signedHeaders,
    req.payloadHash,
  ].join('\n');
  const scope = `${day}/${cred.region}/${cred.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${cred.secretAccessKey}`, day), cred.region), cred.service), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const out = { ...headers };
  delete out.host; // the HTTP client sends it from the URL
  out['authorization'] =
    `AWS4-HMAC-SHA256 Credential=${cred.accessKeyId}/${scope},SignedHeaders=${signedHeaders},Signature=${signature}`;
  return out;
}
