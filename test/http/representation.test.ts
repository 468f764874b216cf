/**
 * Content negotiation of lib/http/representation.ts on real bodies (issue 27): which coding a
 * request gets (q-values, brotli only for shared bodies and only where it beats gzip), the tags of
 * each form, and revalidation with any form's tag. The HTTP paths are in test/http/cdn.test.ts.
 */
import t from 'tap';
import zlib from 'node:zlib';
import { fixture } from '../helpers/fixtures.js';
import {
  acceptsBr,
  acceptsGzip,
  etagMatches,
  honoursIfModifiedSince,
  negotiate,
  type Body,
} from '../../lib/http/representation.js';

const HEADERS = Object.freeze({ 'Content-Type': 'application/vnd.apple.mpegurl', 'Cache-Control': 'max-age=1' });
/** A fresh body buffer per call: forms are kept per buffer. */
const body = (text: string): Body => ({ status: 200, headers: HEADERS, body: Buffer.from(text) });
const SHARED = { shared: true };

// A VOD chunklist (32 KB): brotli beats gzip by half. A variant of random-looking URIs: it does not.
const chunklist = fixture('hls/grafov-m3u8/wowza-vod-chunklist.m3u8');
const randomish = fixture('hls/comcast-mamba/hls_variant_playlist.m3u8');

t.test('Accept-Encoding: what each spelling takes', async (t) => {
  const cases: [string, boolean, boolean][] = [
    ['gzip, deflate, br', true, true],
    ['br', false, true],
    ['gzip', true, false],
    ['*', true, true],
    ['br;q=0, *', true, false],
    ['gzip;q=0, *;q=0.5', false, true],
    ['BR;Q=1', false, true],
    ['br;q=1.5', false, false],
    ['identity', false, false],
    ['x'.repeat(1100), false, false],
  ];
  for (const [header, gz, br] of cases) {
    t.equal(acceptsGzip(header), gz, `${header.slice(0, 30)}: gzip ${gz}`);
    t.equal(acceptsBr(header), br, `${header.slice(0, 30)}: br ${br}`);
  }
});

t.test('a shared body: br where it beats gzip, q-values honoured', async (t) => {
  const r = body(chunklist);
  const identity = negotiate(r, '', '', '', SHARED);
  const tag = identity.headers['ETag']!;
  const br = negotiate(r, '', '', 'gzip, deflate, br', SHARED);
  t.equal(br.headers['Content-Encoding'], 'br', 'a tie: the smaller form, brotli');
  t.equal(br.headers['ETag'], `${tag.slice(0, -1)}-br"`, 'its own tag');
  t.ok(zlib.brotliDecompressSync(br.body).equals(r.body), 'decodes to exactly the body');
  const gz = negotiate(r, '', '', 'gzip', SHARED);
  t.equal(gz.headers['Content-Encoding'], 'gzip');
  t.ok(br.body.byteLength < gz.body.byteLength, `${br.body.byteLength} < ${gz.body.byteLength} bytes`);
  t.equal(negotiate(r, '', '', 'br;q=0.5, gzip', SHARED).headers['Content-Encoding'], 'gzip', 'gzip preferred by q');
  t.equal(negotiate(r, '', '', 'br, gzip;q=0.9', SHARED).headers['Content-Encoding'], 'br', 'br preferred by q');
  t.equal(negotiate(r, '', '', 'br;q=0, gzip', SHARED).headers['Content-Encoding'], 'gzip', 'br refused');
  t.equal(negotiate(r, '', '', 'br', SHARED), br, 'the same form object: built once');

  // Revalidation with any form's tag: a 304 in the form the request negotiated.
  for (const [inm, ae, enc] of [
    [`${tag.slice(0, -1)}-br"`, 'gzip', 'gzip'],
    [`${tag.slice(0, -1)}-gz"`, 'br', 'br'],
    [tag, 'br', 'br'],
    [`W/${tag.slice(0, -1)}-br"`, '', undefined],
  ] as const) {
    const nm = negotiate(r, inm, '', ae, SHARED);
    t.equal(nm.status, 304, `${inm} → 304`);
    t.equal(nm.body.byteLength, 0);
    t.equal(nm.headers['ETag'], enc ? `${tag.slice(0, -1)}-${enc === 'gzip' ? 'gz' : 'br'}"` : tag);
  }
  t.equal(negotiate(r, `${tag.slice(0, -1)}-xx"`, '', 'br', SHARED).status, 200, 'another suffix is another tag');
  t.notOk(etagMatches(`${tag.slice(0, -1)}-gzz"`, tag));
});

t.test('If-Modified-Since decides only where the answer has validators and a Last-Modified', async (t) => {
  const live = body(chunklist);
  t.notOk(honoursIfModifiedSince(live, SHARED), 'a live playlist: no date to compare with');
  const future = new Date(Date.now() + 86_400_000).toUTCString();
  t.equal(negotiate(live, '', future, '', SHARED).status, 200, 'so the header is ignored (RFC 9110 §13.1.3)');
  const dated = { shared: true, lastModified: Date.parse('2026-01-02T03:04:05Z') };
  const vod = body(chunklist); // a body of its own: its forms are made with the date
  t.ok(honoursIfModifiedSince(vod, dated), 'a dated answer');
  t.equal(negotiate(vod, '', future, '', dated).status, 304, 'which the header decides');
  t.notOk(honoursIfModifiedSince(body(chunklist), { lastModified: 1, validators: false }), 'no validators');
  t.notOk(honoursIfModifiedSince({ status: 404, headers: {}, body: new Uint8Array(1) }, dated), 'not a 200');
});

t.test('a shared body where brotli does not beat gzip gets gzip', async (t) => {
  const r = body(randomish);
  const both = negotiate(r, '', '', 'gzip, deflate, br', SHARED);
  const br = negotiate(r, '', '', 'br', SHARED);
  const gz = negotiate(r, '', '', 'gzip', SHARED);
  t.equal(br.headers['Content-Encoding'], 'br', 'br alone: still br (smaller than the body)');
  const smaller = br.body.byteLength < gz.body.byteLength ? 'br' : 'gzip';
  t.equal(both.headers['Content-Encoding'], smaller, `${br.body.byteLength} br, ${gz.body.byteLength} gzip`);
});

t.test('a per-stream body: gzip only', async (t) => {
  const r = body(chunklist);
  t.equal(negotiate(r, '', '', 'br').headers['Content-Encoding'], undefined, 'br alone: identity');
  t.equal(negotiate(r, '', '', 'gzip, br').headers['Content-Encoding'], 'gzip');
});

t.test('a small body stays identity for every coding', async (t) => {
  const r = body('#EXTM3U\n#EXT-X-ENDLIST\n');
  for (const ae of ['br', 'gzip', 'gzip, br'])
    t.equal(negotiate(r, '', '', ae, SHARED).headers['Content-Encoding'], undefined);
});
