/**
 * The attack corpus (issue 18 item 3): hostile inputs, each with the answer the service must give.
 * `http` cases go through undici; `raw` cases are bytes on a socket, for what undici refuses to
 * send (malformed HTTP). A raw case that expects 'reject' passes on any 4xx or a closed
 * connection; nothing may hang or answer 5xx.
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, base64url } from 'jose';
import { beaconUrl } from '../../lib/ads/beacon.js';

export type Category = 'path' | 'header' | 'json' | 'xml' | 'jwt' | 'beacon' | 'ssrf' | 'manifest-bomb';

export interface HttpCase {
  cat: Category;
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** A function when the body needs what an earlier case saved. */
  body?: string | Buffer | (() => string);
  /** Keeps something from the answer for a later case. */
  save?: (body: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Expected status (several when timing decides between them); `type` is the problem code when the answer is a problem. */
  status: number | number[];
  type?: string;
  /** Extra check on the answer (text body, headers). Returns a failure message or undefined. */
  check?: (r: { status: number; headers: Record<string, unknown>; text: string }) => string | undefined;
  /** Latency budget in ms (default 3000). */
  withinMs?: number;
}

export interface RawCase {
  cat: Category;
  name: string;
  raw: Array<string | Buffer>;
  /** 'reject': a 4xx or a closed connection; a number: exactly that status. */
  expect: 'reject' | number;
}

export type Case = HttpCase | RawCase;

export interface CorpusContext {
  token: string;
  jwtSecret: string;
  beaconSecret: string;
  /** The service's own base URL (beacons are signed for it). */
  base: string;
  /** A trusted collaborator that counts beacon hits. */
  beaconTarget: string;
  /** The loopback listener on 127.0.0.2 that nothing may reach. */
  trapPort: number;
  mrssBrand: string;
  mrssToken: string;
}

const KIB = 1024;
const json = { 'content-type': 'application/json' };
const nested = (depth: number, open: string, close: string, inner = '1') =>
  open.repeat(depth) + inner + close.repeat(depth);

async function hs256(
  secret: string | Uint8Array,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
  exp: string | number | null = '1h',
): Promise<string> {
  const jwt = new SignJWT({ roles: ['operator'], ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...header })
    .setIssuedAt();
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(typeof secret === 'string' ? new TextEncoder().encode(secret) : secret);
}

function unsigned(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`;
}

/** A raw GET of a path no client would normalise, with extra header lines. */
function rawGet(path: string, ...headers: string[]): string[] {
  return [`GET ${path} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => h + '\r\n').join('')}\r\n`];
}

export async function buildCorpus(ctx: CorpusContext): Promise<Case[]> {
  const auth = { authorization: `Bearer ${ctx.token}` };
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const now = Math.floor(Date.now() / 1000);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const rs256 = await new SignJWT({ roles: ['operator'] })
    .setProtectedHeader({ alg: 'RS256' })
    .setExpirationTime('1h')
    .sign(privateKey);
  const brandBody = (o: Record<string, unknown>) =>
    JSON.stringify({ brand_name: 'attack', match_type: 'hostname', match_value: 'a.attack.tv', ...o });
  const mrss = (xml: string, extra: Record<string, string> = {}): Omit<HttpCase, 'cat' | 'name' | 'status'> => ({
    method: 'POST',
    path: `/mrssfeed/${ctx.mrssBrand}`,
    headers: { 'content-type': 'application/rss+xml', 'x-service-mrss-token': ctx.mrssToken, ...extra },
    body: xml,
  });
  const rss = (items: string) =>
    `<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>${items}</channel></rss>`;
  const signed = (b: { url: string; expires?: number }) =>
    new URL(
      beaconUrl(ctx.base, ctx.beaconSecret, {
        url: b.url,
        streamId: 'S1',
        event: 'impression',
        breakId: 'b1',
        expires: b.expires ?? now + 600,
      }),
    );
  const okBeacon = signed({ url: `${ctx.beaconTarget}/track/other` });
  const swapped = new URL(okBeacon);
  swapped.searchParams.set('u', `${ctx.beaconTarget}/track/evil`);
  const variant = (event: string) => `/dai/manifest/linear/hls/event/${event}/stream/S1/variant/720p.m3u8`;
  const trap = `127.0.0.2:${ctx.trapPort}`;
  let ssrfEvent = 0;

  const cases: Case[] = [
    // --- paths -------------------------------------------------------------------------------
    // fetch and undici normalise `..`, `%2e%2e` and `\\` (WHATWG URL) before sending: those go raw.
    {
      cat: 'path',
      name: 'dot-dot in a manifest path (raw)',
      raw: rawGet('/dai/manifest/linear/hls/event/E/stream/S/../../../../etc/passwd.m3u8'),
      expect: 400,
    },
    {
      cat: 'path',
      name: '%2e%2e in a manifest path (raw)',
      raw: rawGet('/dai/manifest/linear/hls/event/E/stream/S/%2e%2e/%2e%2e/secret.m3u8'),
      expect: 400,
    },
    {
      cat: 'path',
      name: '%2f inside a manifest segment',
      path: '/dai/manifest/linear/hls/event/E/stream/S%2f..%2f..%2fx/variant/720p.m3u8',
      status: 400,
      type: 'bad-path',
    },
    {
      cat: 'path',
      name: '%00 in a manifest path',
      path: '/dai/manifest/linear/hls/event/E/stream/S%00/variant/720p.m3u8',
      status: 400,
      type: 'bad-path',
    },
    // Issue 24: an id no DAI provider issues is refused before it reaches the upstream or the stream registry.
    {
      cat: 'path',
      name: 'a 300-character stream id',
      path: `/dai/manifest/linear/hls/event/E/stream/${'S'.repeat(300)}/variant/720p.m3u8`,
      status: 400,
      type: 'bad-path',
    },
    {
      cat: 'path',
      name: 'overlong UTF-8 dot (%c0%ae)',
      path: '/dai/manifest/linear/hls/event/E/stream/%c0%ae%c0%ae/variant/720p.m3u8',
      status: 400,
      type: 'bad-path',
    },
    {
      cat: 'path',
      name: 'backslashes in a manifest path (raw)',
      raw: rawGet('/dai/manifest/linear/hls/event/E/stream/S/..\\..\\x.m3u8'),
      expect: 400,
    },
    {
      cat: 'path',
      name: 'dot-dot under /api/v1 (raw, with a token)',
      raw: rawGet('/api/v1/brand-recognition/../../healthz', `Authorization: Bearer ${ctx.token}`),
      expect: 404,
    },
    {
      cat: 'path',
      name: '%00 as an /api/v1 id',
      path: '/api/v1/squeeze-ad-break/%00',
      headers: auth,
      status: 400,
      type: 'bad-path',
    },
    {
      cat: 'path',
      name: '%00 as a catalog guid',
      path: '/api/v1/catalog/acme/a%00b',
      headers: auth,
      status: 400,
      type: 'bad-path',
    },
    {
      cat: 'path',
      name: '%00 as a feed name',
      path: '/api/v1/global-config/a%00b',
      headers: auth,
      status: 400,
      type: 'bad-path',
    },
    {
      cat: 'path',
      name: '%00 in a catalog search',
      path: '/api/v1/catalog?q=a%00b',
      headers: auth,
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'path',
      name: '%00 in an event-config lookup',
      path: '/api/v1/squeeze-event-config?asset_id=a%00b',
      headers: auth,
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'path',
      name: 'traversal in a catalog guid',
      path: '/api/v1/catalog/acme/..%2f..%2fetc%2fpasswd',
      headers: auth,
      status: 404,
      type: 'not-found',
    },
    { cat: 'path', name: 'unknown path', path: '/wp-admin/install.php', status: 404, type: 'not-found' },
    { cat: 'path', name: 'double slash root', path: '//etc/passwd', status: 404, type: 'not-found' },
    { cat: 'path', name: 'dot-dot after /healthz (raw)', raw: rawGet('/healthz/../api/v1/streams'), expect: 404 },
    {
      cat: 'path',
      name: 'traversal in /vast stream_id',
      path: '/vast?stream_id=..%2F..%2Fetc%2Fpasswd',
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'path',
      name: 'traversal in an /mrssfeed brand',
      method: 'POST',
      path: '/mrssfeed/..%2f..%2fadmin',
      headers: { 'content-type': 'application/xml', 'x-service-mrss-token': 'x'.repeat(30) },
      body: rss(''),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'path',
      name: '64 KiB path',
      raw: [`GET /dai/manifest/${'a'.repeat(64 * KIB)}.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n`],
      expect: 'reject',
    },
    // /dai/adproxy never shows a player an error (spec): an oversized query is truncated, answered 200.
    {
      cat: 'path',
      name: '64 KiB query on /dai/adproxy (in one write)',
      raw: [`GET /dai/adproxy?${'a=1&'.repeat(16 * KIB)} HTTP/1.1\r\nHost: x\r\n\r\n`],
      expect: 200,
    },
    {
      cat: 'path',
      name: 'space and CRLF in the request target',
      raw: ['GET /healthz HTTP/1.1 x\r\n\r\nHost: x\r\n\r\n'],
      expect: 'reject',
    },

    // --- headers -----------------------------------------------------------------------------
    {
      cat: 'header',
      name: 'CRLF (%0d%0a) in a query that the manifest reflects',
      path: `${variant('OK').replace('variant/720p.m3u8', 'master.m3u8')}?token=a%0d%0a%23EXT-X-ENDLIST%0d%0aevil.m3u8`,
      status: 200,
      check: (r) =>
        /^evil\.m3u8$/m.test(r.text) || /^#EXT-X-ENDLIST/m.test(r.text)
          ? 'the query injected manifest lines'
          : undefined,
    },
    {
      cat: 'header',
      name: 'X-Request-Id with CR/LF is not reflected',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, 'x-request-id': 'abc%0d%0aSet-Cookie:%20x=1' },
      status: 200,
      check: (r) =>
        String(r.headers['x-request-id']).includes('Set-Cookie') || r.headers['set-cookie']
          ? 'request id reflected verbatim'
          : undefined,
    },
    {
      cat: 'header',
      name: 'bare CR inside a header value (raw)',
      raw: ['GET /api/v1/streams HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\rSet-Cookie: x=1\r\n\r\n'],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'NUL inside a header value (raw)',
      raw: ['GET /healthz HTTP/1.1\r\nHost: x\r\nX-Forwarded-Host: a\u0000b\r\n\r\n'],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'obs-fold continuation line (raw)',
      raw: ['GET /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n x\r\n\r\n'],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'header line without a colon (raw)',
      raw: ['GET /healthz HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n'],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: '40 headers',
      path: '/healthz',
      headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v'])),
      status: 200,
    },
    {
      cat: 'header',
      name: '100 headers (raw)',
      raw: [
        `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 100 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`,
      ],
      expect: 'reject',
    },
    // uWS applies UWS_HTTP_MAX_HEADERS_SIZE only to a header block that arrives in pieces; in one read it is parsed in place.
    {
      cat: 'header',
      name: '64 KiB header value in one write (raw)',
      raw: [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(64 * KIB)}\r\n\r\n`],
      expect: 200,
    },
    {
      cat: 'header',
      name: '64 KiB header value in pieces (raw)',
      raw: [
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: `,
        ...Array.from({ length: 16 }, () => 'b'.repeat(4 * KIB)),
        '\r\n\r\n',
      ],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: '1,000 headers (raw)',
      raw: [
        `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 1000 }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`,
      ],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'duplicate Content-Length, different values (raw)',
      raw: [
        'POST /api/v1/brand-recognition HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}',
      ],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'Transfer-Encoding chunked with Content-Length (smuggling, raw)',
      raw: [
        'POST /api/v1/brand-recognition HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/v1/streams HTTP/1.1\r\nHost: x\r\n\r\n',
      ],
      expect: 'reject',
    },
    // Issue 24 item 2: credentials are checked on the head, before a body byte is read; these send only the head.
    {
      cat: 'header',
      name: 'MRSS push declaring 20 MiB with a wrong token: 401 before the body (raw)',
      raw: [
        `POST /mrssfeed/${ctx.mrssBrand} HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\nX-Service-Mrss-Token: wrong-token-0123456789abcdef\r\nContent-Length: ${20 * 1024 * KIB}\r\n\r\n`,
      ],
      expect: 401,
    },
    {
      cat: 'header',
      name: 'chunked MRSS push without a token: 401 before the body (raw)',
      raw: [
        `POST /mrssfeed/${ctx.mrssBrand} HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\nTransfer-Encoding: chunked\r\n\r\n`,
      ],
      expect: 401,
    },
    {
      cat: 'header',
      name: 'a 1 MiB JSON body under a forged JWT: 401 before the body (raw)',
      raw: [
        `PUT /api/v1/brand-tokens/acme HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${unsigned({ sub: 'x', exp: now + 600 })}\r\nContent-Length: ${1024 * KIB - 1}\r\n\r\n`,
      ],
      expect: 401,
    },
    {
      cat: 'header',
      name: 'Transfer-Encoding not ending in chunked (raw)',
      raw: ['POST /mrssfeed/acme HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nxxxx'],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'invalid chunk size (raw)',
      raw: [
        'POST /api/v1/brand-recognition HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzzzz\r\n{}\r\n0\r\n\r\n',
      ],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'Content-Length beyond 2^64 (raw)',
      raw: ['POST /api/v1/brand-recognition HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n{}'],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'negative Content-Length (raw)',
      raw: ['POST /api/v1/brand-recognition HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}'],
      expect: 'reject',
    },
    { cat: 'header', name: 'HTTP/0.9 request line (raw)', raw: ['GET /healthz\r\n\r\n'], expect: 'reject' },
    {
      cat: 'header',
      name: 'binary garbage instead of a request (raw)',
      raw: [
        Buffer.from([
          0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0, 0, 0, 0, 0x0d, 0x0a, 0x0d, 0x0a,
        ]),
      ],
      expect: 'reject',
    },
    {
      cat: 'header',
      name: 'Bearer value that is not a JWT (raw)',
      raw: ['GET /api/v1/streams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a.b.c\r\n\r\n'],
      expect: 401,
    },

    // --- JSON --------------------------------------------------------------------------------
    {
      cat: 'json',
      name: 'array nested 10,000 deep',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: nested(10_000, '[', ']'),
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'object nested 10,000 deep',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: nested(10_000, '{"a":', '}'),
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: '__proto__ key',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: brandBody({}).replace('{', '{"__proto__":{"polluted":"yes","isAdmin":true},'),
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'constructor.prototype key',
      method: 'PUT',
      path: '/api/v1/squeeze-brand-config',
      headers: { ...auth, ...json },
      body: '{"brand_id":"p1","constructor":{"prototype":{"polluted":"yes"}}}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'nested __proto__ inside a free-form object (ad_tag_override)',
      method: 'PUT',
      path: '/api/v1/squeeze-event-config',
      headers: { ...auth, ...json },
      body: '{"asset_id":"PROTO","source_uri":"https://example.com/m.m3u8","brand_config_id":"attack","ad_tag_override":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}',
      status: 200,
    },
    {
      cat: 'json',
      name: 'a break on the event whose override carries __proto__',
      method: 'POST',
      path: '/api/v1/squeeze-ad-break',
      headers: { ...auth, ...json },
      body: '{"asset_id":"PROTO","break_duration":4}',
      status: 200,
    },
    {
      cat: 'json',
      name: 'prototype key in a feed configuration',
      method: 'POST',
      path: '/api/v1/global-config',
      headers: { ...auth, ...json },
      body: '{"feed_name":"p","feed_uri":"https://example.com/f.xml","prototype":{"polluted":"yes"}}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: '10 MB number',
      method: 'POST',
      path: '/api/v1/squeeze-configured-ad',
      headers: { ...auth, ...json },
      body: `{"event_id":1,"abid":"a","ad_uri":"https://example.com/a.mp4","duration":${'9'.repeat(10 * KIB * KIB)}}`,
      status: 413,
      type: 'payload-too-large',
    },
    {
      cat: 'json',
      name: '1 MB string',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: brandBody({ brand_name: 'x'.repeat(KIB * KIB) }),
      status: 413,
      type: 'payload-too-large',
    },
    {
      cat: 'json',
      name: '900 KB string (under the body cap)',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: brandBody({ brand_name: 'x'.repeat(900 * KIB) }),
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'wrong types for every brand field',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: '{"brand_name":1,"match_type":[],"match_value":{}}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'wrong types for every event field',
      method: 'PUT',
      path: '/api/v1/squeeze-event-config',
      headers: { ...auth, ...json },
      body: '{"asset_id":[1],"source_uri":7,"brand_config_id":{},"caid":true,"layout":9,"ad_tag":"x"}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'wrong types for every break field',
      method: 'POST',
      path: '/api/v1/squeeze-ad-break',
      headers: { ...auth, ...json },
      body: '{"event_id":"x","break_duration":"30","abid":5,"geo_lang_loc":[]}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'wrong types for every configured-ad field',
      method: 'PUT',
      path: '/api/v1/squeeze-configured-ad',
      headers: { ...auth, ...json },
      body: '{"event_id":{},"abid":[],"ad_uri":1,"duration":"x","is_curated":"yes"}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'wrong types for every feed field',
      method: 'POST',
      path: '/api/v1/global-config',
      headers: { ...auth, ...json },
      body: '{"feed_name":1,"feed_uri":[],"pull_frequency_sec":"x","pagination_supported":"no"}',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'null body',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: 'null',
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'truncated JSON',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: '{"brand_name":',
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'json',
      name: 'NUL character in a string field',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: brandBody({ brand_name: 'nul\u0000brand' }),
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'json',
      name: 'lone surrogate in a string field',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: '{"brand_name":"sur\\ud800","match_type":"hostname","match_value":"s.attack.tv"}',
      status: 201,
      check: (r) => (r.text.includes('sur\ufffd') ? undefined : 'not stored as U+FFFD'),
    },
    {
      cat: 'json',
      name: 'invalid UTF-8 bytes',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, ...json },
      body: Buffer.concat([
        Buffer.from('{"brand_name":"'),
        Buffer.from([0xc0, 0xae, 0xff]),
        Buffer.from('","match_type":"hostname","match_value":"u.attack.tv"}'),
      ]),
      status: 201,
      check: (r) => (r.text.includes('\ufffd') ? undefined : 'not decoded to U+FFFD'),
    },
    {
      cat: 'json',
      name: 'JSON sent as text/plain',
      method: 'POST',
      path: '/api/v1/brand-recognition',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: brandBody({}),
      status: 415,
      type: 'unsupported-media-type',
    },
    {
      cat: 'json',
      name: '1e400 as a page number',
      path: '/api/v1/squeeze-configured-ad?event_id=1&page=1e400',
      headers: auth,
      status: 400,
      type: 'validation',
    },
    {
      cat: 'json',
      name: 'integer id beyond 2^63',
      path: '/api/v1/squeeze-event-config/99999999999999999999999',
      headers: auth,
      status: 400,
      type: 'validation',
    },

    // --- XML (the MRSS push body) ------------------------------------------------------------
    {
      cat: 'xml',
      name: 'billion laughs',
      ...mrss(
        `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;">]><rss><channel><item><guid>&lol9;</guid></item></channel></rss>`,
      ),
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'xml',
      name: 'external entity (file:///etc/passwd)',
      ...mrss(
        `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel><item><guid>&x;</guid></item></channel></rss>`,
      ),
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'xml',
      name: 'external entity over HTTP to the trap',
      ...mrss(
        `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "http://${trap}/xxe">]><rss><channel><item><guid>&x;</guid></item></channel></rss>`,
      ),
      status: 400,
      type: 'bad-request',
    },
    { cat: 'xml', name: 'bare DOCTYPE', ...mrss(`<!DOCTYPE rss>${rss('')}`), status: 400, type: 'bad-request' },
    {
      cat: 'xml',
      name: 'parameter entity',
      ...mrss(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "http://${trap}/p.dtd">%p;]>${rss('')}`),
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'xml',
      name: '1 MB attribute',
      ...mrss(
        rss(
          `<item><guid>big</guid><media:content url="https://cdn.example.com/${'a'.repeat(KIB * KIB)}.m3u8"/></item>`,
        ),
      ),
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'xml',
      name: '10,000-deep nesting',
      ...mrss(`<rss><channel>${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</channel></rss>`),
      status: 400,
      type: 'bad-request',
    },
    {
      cat: 'xml',
      name: 'unclosed root',
      ...mrss('<rss><channel><item><guid>x</guid>'),
      status: 400,
      type: 'bad-request',
    },
    { cat: 'xml', name: 'not XML at all', ...mrss('{"rss": true}'), status: 400, type: 'bad-request' },
    {
      cat: 'xml',
      name: 'XML as text/html',
      ...mrss(rss(''), { 'content-type': 'text/html' }),
      status: 415,
      type: 'unsupported-media-type',
    },
    {
      cat: 'xml',
      name: 'no push token',
      ...mrss(rss(''), { 'x-service-mrss-token': '' }),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'xml',
      name: 'wrong push token',
      ...mrss(rss(''), { 'x-service-mrss-token': 'y'.repeat(32) }),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'xml',
      name: 'body over the 20 MiB push cap',
      ...mrss(rss(`<!--${'x'.repeat(21 * KIB * KIB)}-->`)),
      status: 413,
      type: 'payload-too-large',
      withinMs: 10_000,
    },

    // --- JWT ---------------------------------------------------------------------------------
    { cat: 'jwt', name: 'no token', path: '/api/v1/brand-recognition', status: 401, type: 'unauthorized' },
    {
      cat: 'jwt',
      name: 'alg none',
      path: '/api/v1/brand-recognition',
      headers: bearer(unsigned({ roles: ['operator'], exp: now + 3600 })),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'HS256 signed with the RS256 public key (HS/RS confusion)',
      path: '/api/v1/brand-recognition',
      headers: bearer(await hs256(publicPem, {})),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'RS256 token when HS256 is pinned',
      path: '/api/v1/brand-recognition',
      headers: bearer(rs256),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'expired',
      path: '/api/v1/brand-recognition',
      headers: bearer(await hs256(ctx.jwtSecret, {}, {}, now - 120)),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'not yet valid (nbf in an hour)',
      path: '/api/v1/brand-recognition',
      headers: bearer(await hs256(ctx.jwtSecret, { nbf: now + 3600 })),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'missing exp',
      path: '/api/v1/brand-recognition',
      headers: bearer(await hs256(ctx.jwtSecret, {}, {}, null)),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'kid path traversal, signed with an empty key',
      path: '/api/v1/brand-recognition',
      headers: bearer(await hs256(new Uint8Array(32), {}, { kid: '../../../../../../dev/null' })),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'SQL in kid',
      path: '/api/v1/brand-recognition',
      headers: bearer(await hs256('x'.repeat(32), {}, { kid: "' UNION SELECT 'secret' --" })),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'payload tampered after signing',
      path: '/api/v1/brand-recognition',
      headers: bearer(
        ctx.token.replace(/\.[^.]+\./, `.${base64url.encode(JSON.stringify({ roles: ['admin'], exp: now + 9999 }))}.`),
      ),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'oversized token (12 KiB)',
      path: '/api/v1/brand-recognition',
      headers: bearer(`${'a'.repeat(6 * KIB)}.${'b'.repeat(6 * KIB)}.c`),
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'oversized token (64 KiB, raw)',
      raw: [
        `GET /api/v1/brand-recognition HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(64 * KIB)}.b.c\r\n\r\n`,
      ],
      expect: 401,
    },
    {
      cat: 'jwt',
      name: 'Basic instead of Bearer',
      path: '/api/v1/brand-recognition',
      headers: { authorization: 'Basic YWRtaW46YWRtaW4=' },
      status: 401,
      type: 'unauthorized',
    },
    {
      cat: 'jwt',
      name: 'valid token on the wrong header case and spacing',
      path: '/api/v1/brand-recognition',
      headers: { authorization: `bearer    ${ctx.token}` },
      status: 200,
    },

    // --- beacons -----------------------------------------------------------------------------
    { cat: 'beacon', name: 'no query', path: '/beacon', status: 400, type: 'bad-beacon' },
    {
      cat: 'beacon',
      name: 'bad signature',
      path: `/beacon?u=${encodeURIComponent(`${ctx.beaconTarget}/track/x`)}&s=S1&e=impression&sig=${'A'.repeat(43)}`,
      status: 400,
      type: 'bad-beacon',
    },
    {
      cat: 'beacon',
      name: 'signature of another URL',
      path: swapped.pathname + swapped.search,
      status: 400,
      type: 'bad-beacon',
    },
    {
      cat: 'beacon',
      name: 'expired',
      path: (({ pathname, search }) => pathname + search)(
        signed({ url: `${ctx.beaconTarget}/track/old`, expires: now - 10 }),
      ),
      status: 400,
      type: 'bad-beacon',
    },
    {
      cat: 'beacon',
      name: 'signed but not http(s)',
      path: (({ pathname, search }) => pathname + search)(signed({ url: 'file:///etc/passwd' })),
      status: 400,
      type: 'bad-beacon',
    },
    {
      cat: 'beacon',
      name: 'repeated sig parameter',
      path: `${okBeacon.pathname}${okBeacon.search}&sig=${'B'.repeat(43)}`,
      status: 400,
      type: 'bad-beacon',
    },
    {
      cat: 'beacon',
      name: '9 KiB query',
      path: `/beacon?u=${'a'.repeat(9 * KIB)}&s=S1&e=x&sig=${'A'.repeat(43)}`,
      status: 400,
      type: 'bad-beacon',
    },
    {
      cat: 'beacon',
      name: 'malformed percent-encoding',
      path: '/beacon?u=%E0%A4%A&s=S1&e=impression&sig=' + 'A'.repeat(43),
      status: 400,
      type: 'bad-beacon',
    },

    // --- manifest bombs from the DAI host (see the hostile host in the test) -----------------
    {
      cat: 'manifest-bomb',
      name: 'a million segment lines',
      path: variant('MILLION'),
      status: [502, 504],
      withinMs: 3000,
    },
    // Over the 16 MiB upstream cap: refused as too large, or cut by the deadline on a slow machine.
    { cat: 'manifest-bomb', name: 'one 20 MB line', path: variant('LONGLINE'), status: [502, 504], withinMs: 3000 },
    {
      cat: 'manifest-bomb',
      name: 'endless #EXT-X- tags',
      path: variant('ENDLESS'),
      status: [502, 504],
      withinMs: 3000,
    },
    {
      cat: 'manifest-bomb',
      name: 'a body that trickles a byte at a time',
      path: variant('TRICKLE'),
      status: 504,
      type: 'upstream-timeout',
      withinMs: 3000,
    },
    {
      cat: 'manifest-bomb',
      name: 'headers that never come',
      path: variant('SILENT'),
      status: 504,
      type: 'upstream-timeout',
      withinMs: 3000,
    },
    { cat: 'manifest-bomb', name: 'binary garbage', path: variant('GARBAGE'), status: 502, type: 'upstream-failed' },
    {
      cat: 'manifest-bomb',
      name: 'a redirect to the trap',
      path: variant('REDIRECT'),
      status: 502,
      type: 'upstream-failed',
    },
    // Refused at once, not at the 1 s upstream deadline (it was framed at the later terminator and waited).
    {
      cat: 'manifest-bomb',
      name: 'a bare-LF head with CRLFCRLF in its body',
      path: variant('BARELF'),
      status: 502,
      type: 'upstream-failed',
      withinMs: 800,
    },
    // Which of the two answers was this request's cannot be told: neither is served (issue 24).
    {
      cat: 'manifest-bomb',
      name: 'a stray answer after the answer',
      path: variant('STRAY'),
      status: 502,
      type: 'upstream-failed',
    },

    // --- SSRF: every URL field the service later fetches, in the spellings of 127.0.0.2 --------
    ...ssrfHosts(ctx.trapPort).flatMap((host, i): HttpCase[] => [
      {
        cat: 'ssrf',
        name: `feed_uri http://${host}/`,
        method: 'POST',
        path: '/api/v1/global-config',
        headers: { ...auth, ...json },
        body: JSON.stringify({
          brand_name: `ssrf-${i}`,
          feed_name: `ssrf-${i}`,
          feed_uri: `http://${host}/feed.xml`,
          pagination_params: {},
        }),
        status: 201,
      },
      // Creating a feed starts its first pull: on a busy machine that pull (refused at its first
      // fetch) may still be running, and this one answers 409. Either way a fetch of the private
      // address was attempted; that it never connected is the trap's check after the corpus.
      {
        cat: 'ssrf',
        name: `pull of feed_uri http://${host}/`,
        method: 'POST',
        path: `/api/v1/global-config/ssrf-${i}/pull`,
        headers: auth,
        status: [202, 409],
      },
    ]),
    {
      cat: 'ssrf',
      name: 'next_from_feed on 127.0.0.2 (a public feed_uri)',
      method: 'POST',
      path: '/api/v1/global-config',
      headers: { ...auth, ...json },
      body: JSON.stringify({
        brand_name: 'ssrf-next',
        feed_name: 'ssrf-next',
        feed_uri: 'https://feeds.example.com/f.xml',
        pagination_supported: true,
        pagination_params: { next_from_feed: `http://${trap}/next.xml` },
      }),
      status: 201,
    },
    {
      cat: 'ssrf',
      name: 'pull of next_from_feed on 127.0.0.2',
      method: 'POST',
      path: '/api/v1/global-config/ssrf-next/pull',
      headers: auth,
      status: [202, 409],
    },
    {
      cat: 'ssrf',
      name: 'source_uri on 127.0.0.2',
      method: 'PUT',
      path: '/api/v1/squeeze-event-config',
      headers: { ...auth, ...json },
      body: JSON.stringify({ asset_id: 'SSRF', source_uri: `http://${trap}/master.m3u8`, brand_config_id: 'attack' }),
      status: 200,
      save: (b) => (ssrfEvent = b.id),
    },
    {
      cat: 'ssrf',
      name: 'configured ad_uri on 127.0.0.2 (hex spelling)',
      method: 'PUT',
      path: '/api/v1/squeeze-configured-ad',
      headers: { ...auth, ...json },
      body: () =>
        JSON.stringify({
          event_id: ssrfEvent,
          abid: 'trap',
          ad_uri: `http://0x7f000002:${ctx.trapPort}/ad.mp4`,
          duration: 10,
          is_curated: true,
        }),
      status: 200,
    },
    {
      cat: 'ssrf',
      name: 'a break that reads the source_uri on 127.0.0.2',
      method: 'POST',
      path: '/api/v1/squeeze-ad-break',
      headers: { ...auth, ...json },
      body: '{"asset_id":"SSRF","break_duration":4}',
      status: 200,
    },

    // --- malformed requests on the other surfaces ----------------------------------------------
    { cat: 'path', name: '/dai/adproxy without parameters', path: '/dai/adproxy', status: 200 },
    {
      cat: 'path',
      name: '/dai/adproxy with a 1,000-parameter query',
      path: `/dai/adproxy?${Array.from({ length: 1000 }, (_, i) => `k${i}=v`).join('&')}`,
      status: 200,
    },
    {
      cat: 'path',
      name: '/dai/adproxy with CR/LF and NUL in values',
      path: '/dai/adproxy?a=%0d%0aSet-Cookie:%20x&b=%00',
      status: 200,
      check: (r) => (r.headers['set-cookie'] ? 'a header was injected' : undefined),
    },
    {
      cat: 'path',
      name: 'POST to /healthz (a known path: 405, issue 25)',
      method: 'POST',
      path: '/healthz',
      body: 'x',
      status: 405,
      type: 'method-not-allowed',
    },
    {
      cat: 'path',
      name: 'TRACE on /api/v1',
      method: 'TRACE',
      path: '/api/v1/streams',
      headers: auth,
      status: 405,
      type: 'method-not-allowed',
    },
  ];
  return cases;
}

/** 127.0.0.2 as URL parsers and resolvers may spell it. */
export function ssrfHosts(port: number): string[] {
  return ['127.0.0.2', '2130706434', '0x7f000002', '0177.0.0.2', '127.2', '[::ffff:127.0.0.2]', '[::ffff:7f00:2]'].map(
    (h) => `${h}:${port}`,
  );
}

/** Hostile XML for the readers of outside XML that are not HTTP bodies: VAST/VMAP from an ad server, MRSS from a feed host. */
export function hostileXml(trapUrl: string): Array<{ name: string; xml: string }> {
  return [
    {
      name: 'billion laughs',
      xml: '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><VAST version="4.0"><Ad>&c;</Ad></VAST>',
    },
    {
      name: 'external entity',
      xml: `<?xml version="1.0"?><!DOCTYPE v [<!ENTITY x SYSTEM "${trapUrl}/xxe">]><VAST version="4.0"><Ad>&x;</Ad></VAST>`,
    },
    { name: 'DOCTYPE', xml: '<!DOCTYPE VAST><VAST version="4.0"/>' },
    {
      name: '10,000-deep nesting',
      xml: `<VAST version="4.0">${'<Ad>'.repeat(10_000)}${'</Ad>'.repeat(10_000)}</VAST>`,
    },
    { name: '3 MB attribute', xml: `<VAST version="4.0"><Ad id="${'i'.repeat(3 * KIB * KIB)}"/></VAST>` },
  ];
}
