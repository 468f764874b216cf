/**
 * Stitched cache URLs as a CDN pulls them (issue 27): a session stored in Postgres (as another
 * instance's POST would), served by this one: gzip of exactly the identity body, Vary, ETag and
 * Last-Modified revalidations, the max-age bounded by the session's lifetime, HEAD alike.
 */
import t from 'tap';
import zlib from 'node:zlib';
import { request } from 'undici';
import { StitchStore } from '../../lib/stitch/store.js';
import { fixture } from '../helpers/fixtures.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';

async function pull(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const res = await request(url, { method, headers });
  return { status: res.statusCode, raw: Buffer.from(await res.body.arrayBuffer()), headers: res.headers };
}

t.test('stitched cache URLs as a CDN origin', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const ttlSec = 600;
  // COMPRESS_MIN_BYTES lowered: the fixture's playlists are small.
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    stitchTtlSec: ttlSec,
    compressMinBytes: 256,
  });
  const playlist = fixture('hls/eyevinn-hls-splice/hls1/index_0_av.m3u8');
  const master = fixture('hls/eyevinn-hls-splice/hls1/master.m3u8');
  const id = 'cdnSession0123456789';
  const expiresAt = Date.now() + ttlSec * 1000;
  await new StitchStore(service.stores.sql).put({
    id,
    key: 'cdn-test',
    protocol: 'hls',
    files: { 'master.m3u8': master, 'v0.m3u8': playlist },
    response: {},
    expiresAt,
  });
  const url = `${service.url}/${service.config.stitchPath}/cache/${id}/v0.m3u8`;

  const plain = await pull(url);
  t.equal(plain.status, 200);
  t.equal(plain.raw.toString(), playlist, 'the stored playlist');
  const gz = await pull(url, { 'accept-encoding': 'gzip;q=0.8, identity;q=0.1' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.ok(zlib.gunzipSync(gz.raw).equals(plain.raw), 'gunzip(body) is exactly the identity body');
  t.equal(plain.headers['vary'], 'Accept-Encoding');
  t.equal(gz.headers['vary'], 'Accept-Encoding');
  t.match(
    String(plain.headers['cache-control']),
    /^public, max-age=(540|600)$/,
    `up to the remaining lifetime in whole minutes: ${plain.headers['cache-control']}`,
  );
  const lastModified = String(plain.headers['last-modified']);
  t.equal(
    Date.parse(lastModified),
    Math.floor((expiresAt - ttlSec * 1000) / 1000) * 1000,
    'Last-Modified: when it was stitched',
  );
  t.match(String(plain.headers['etag']), /^"[A-Za-z0-9_-]{22}"$/);

  const nm = await pull(url, { 'if-none-match': String(plain.headers['etag']) });
  t.equal(nm.status, 304, 'the current tag → 304');
  t.equal(nm.raw.byteLength, 0);
  t.equal(nm.headers['last-modified'], lastModified);
  t.equal(nm.headers['cache-control'], plain.headers['cache-control']);
  t.equal((await pull(url, { 'if-none-match': String(gz.headers['etag']) })).status, 304, "the gzip form's tag → 304");
  t.equal((await pull(url, { 'if-none-match': '"other"' })).status, 200, 'a stale tag → 200');
  t.equal(
    (await pull(url, { 'if-modified-since': lastModified })).status,
    304,
    'If-Modified-Since at Last-Modified → 304',
  );
  t.equal(
    (await pull(url, { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() })).status,
    200,
    'an earlier date → 200',
  );
  t.equal((await pull(url, { 'if-modified-since': 'yesterday-ish' })).status, 200, 'an unparsable date is ignored');
  t.equal(
    (await pull(url, { 'if-none-match': '"other"', 'if-modified-since': lastModified })).status,
    200,
    'If-None-Match decides when both are sent',
  );

  const head = await pull(url, { 'accept-encoding': 'gzip' }, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.raw.byteLength, 0);
  t.equal(head.headers['content-encoding'], 'gzip', 'HEAD: the same headers');
  t.equal(Number(head.headers['content-length']), gz.raw.byteLength);
  t.equal(head.headers['etag'], gz.headers['etag']);

  const missing = await pull(`${service.url}/${service.config.stitchPath}/cache/${id}/nope.m3u8`);
  t.equal(missing.status, 404);
  t.equal(missing.headers['cache-control'], 'public, max-age=2', '4xx: two seconds');
});
