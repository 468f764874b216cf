/**
 * CORS on the player-facing answers (issue 17 part 4): the policy's precomputed header sets, then
 * every route family over HTTP, 2xx and problem answers, preflights, the default `*`, an allow-list
 * (echo + Vary), an origin not listed, and the management API without CORS.
 */
import t, { type Test } from 'tap';
import { Cors, CORS_EXPOSE, parseOrigins } from '../../lib/http/cors.js';
import { loadConfig } from '../../lib/config/index.js';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { call, type JsonResponse } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';

const PLAYER = 'https://player.example';
const OTHER = 'https://evil.example';

t.test('the policy', async (t) => {
  t.same(parseOrigins('*'), ['*']);
  t.same(parseOrigins(` ${PLAYER} , http://localhost:8081 `), [PLAYER, 'http://localhost:8081']);
  t.same(parseOrigins(''), ['*'], 'empty: the default');
  t.throws(() => parseOrigins('https://a.example/path'), /not an origin/);
  t.throws(() => parseOrigins('player.example'), /not an origin/);

  const any = new Cors(['*']);
  t.equal(any.any, true);
  t.equal(any.pairs(OTHER), any.pairs(undefined), 'the same constant set for every request');
  t.same(any.record(PLAYER), { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': CORS_EXPOSE });
  t.match(CORS_EXPOSE, /Age.*Content-Length.*Date.*ETag.*Retry-After/);
  const pre = any.preflight('GET, HEAD, OPTIONS');
  t.equal(pre(PLAYER), pre(OTHER), 'one preflight answer, built once');
  t.match(pre(PLAYER), {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
    'Access-Control-Allow-Headers': /Range/,
    'Access-Control-Max-Age': '7200',
  });

  const list = new Cors([PLAYER, 'http://localhost:8081']);
  t.equal(list.any, false);
  t.same(list.record(PLAYER), {
    'Access-Control-Allow-Origin': PLAYER,
    'Access-Control-Expose-Headers': CORS_EXPOSE,
    Vary: 'Origin',
  });
  t.equal(list.pairs(PLAYER), list.pairs(PLAYER), 'precomputed per listed origin');
  t.same(list.record(OTHER), { Vary: 'Origin' }, 'not listed: no Allow-Origin');
  t.same(list.record(undefined), { Vary: 'Origin' }, 'no Origin: no Allow-Origin');
  t.same(
    list.preflight('GET')(OTHER),
    { Vary: 'Origin' },
    'a preflight from an origin not listed fails in the browser',
  );

  t.equal(loadConfig({}).corsAllowedOrigins, '*', 'default *');
  t.equal(
    loadConfig({ CORS_ALLOWED_ORIGINS: `${PLAYER},http://localhost:8081` }).corsAllowedOrigins,
    `${PLAYER},http://localhost:8081`,
  );
  t.throws(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://a.example/x' }), /CORS_ALLOWED_ORIGINS/);
  t.throws(() => loadConfig({ CORS_ALLOWED_ORIGINS: '*, https://a.example' }), /CORS_ALLOWED_ORIGINS/);
});

t.test('player-facing routes over HTTP', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim({ shape: { segmentSec: 2, windowSegments: 6, adEvery: 0, adSegments: 0 } }).start();
  t.teardown(() => sim.stop());
  const common = {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: sim.url,
    allowPrivateOutbound: true,
  };
  const open = await startTestService(t, common);
  const listed = await startTestService(t, { ...common, corsAllowedOrigins: `${PLAYER}, http://localhost:8081` });
  const tok = await token(open);
  t.equal(
    (await call(open.url, 'PUT', '/api/v1/squeeze-brand-config', { token: tok, json: { brand_id: 'acme' } })).status,
    200,
  );
  const ev = await call(open.url, 'PUT', '/api/v1/squeeze-event-config', {
    token: tok,
    json: { asset_id: 'CORS1', source_uri: `${sim.url}/source/master.m3u8`, brand_config_id: 'acme' },
  });
  t.equal(ev.status, 200);
  await new Promise((r) => setTimeout(r, 300)); // the event reaches the other instance's cache

  const get = (base: string, path: string, origin?: string) =>
    call(base, 'GET', path, { headers: origin ? { origin } : {} });
  const corsOk = (t: Test, r: JsonResponse, what: string) => {
    t.equal(r.headers['access-control-allow-origin'], '*', `${what}: Allow-Origin *`);
    t.equal(r.headers['access-control-expose-headers'], CORS_EXPOSE, `${what}: Expose-Headers`);
  };

  const master = await get(open.url, '/squeezeback/CORS1/master.m3u8', PLAYER);
  t.equal(master.status, 200, master.text);
  const sid = /^(\d{9})\//m.exec(master.text)?.[1];
  t.ok(sid, 'a stream');
  const manifest = '/dai/manifest/linear/hls/pa/event/CORS1/stream/c1:LOC/variant/720p.m3u8';
  const families: Array<[string, string, number]> = [
    ['/squeezeback master', '/squeezeback/CORS1/master.m3u8', 200],
    ['/squeezeback variant', `/squeezeback/CORS1/${sid}/variant/720p.m3u8`, 200],
    ['/squeezeback unknown asset', '/squeezeback/NOPE/master.m3u8', 404],
    ['/dai/manifest', manifest, 200],
    ['/dai/manifest (micro-cache hit)', manifest, 200],
    ['/dai/manifest bad path', '/dai/manifest/nothing', 400],
    ['/vast', '/vast?stream_id=nobody', 200],
    ['/vast without stream_id', '/vast', 400],
    ['/beacon not signed', '/beacon?u=x', 400],
    ['stitched cache_url expired', '/stitch/cache/AAAAAAAAAAAAAAAAAAAA/master.m3u8', 404],
    ['stitch filler', '/stitch/filler.vtt', 200],
  ];
  for (const [what, path, status] of families) {
    const r = await get(open.url, path, PLAYER);
    t.equal(r.status, status, `${what}: ${status}`);
    corsOk(t, r, what);
    if (status >= 400)
      t.equal(r.headers['content-type'], 'application/problem+json', `${what}: a problem the player can read`);
  }
  const post = await call(open.url, 'POST', '/stitch/hls/stream/s1/asset/none', {
    headers: { origin: PLAYER },
    json: {},
  });
  t.ok(post.status >= 400, `stitch POST without a brand: ${post.status}`);
  corsOk(t, post, 'stitch POST problem');
  const head = await call(open.url, 'HEAD', manifest, { headers: { origin: PLAYER } });
  t.equal(head.status, 200);
  corsOk(t, head, 'HEAD /dai/manifest (micro-cache fast lane)');
  const headList = await call(listed.url, 'HEAD', manifest, { headers: { origin: PLAYER } });
  t.equal(headList.headers['access-control-allow-origin'], PLAYER, 'HEAD with an allow-list');
  const noOrigin = await get(open.url, manifest);
  t.equal(
    noOrigin.headers['access-control-allow-origin'],
    '*',
    'with *, requests without Origin get the same headers (one cacheable answer)',
  );

  await t.test('preflights', async (t) => {
    const preflight = (base: string, path: string, origin = PLAYER, method = 'GET') =>
      call(base, 'OPTIONS', path, {
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'range' },
      });
    for (const [path, methods] of [
      ['/squeezeback/CORS1/master.m3u8', 'GET, HEAD, OPTIONS'],
      [manifest, 'GET, HEAD, OPTIONS'],
      ['/vast', 'GET, HEAD, OPTIONS'],
      ['/beacon', 'GET, HEAD, POST, OPTIONS'],
      ['/stitch/cache/AAAAAAAAAAAAAAAAAAAA/master.m3u8', 'GET, HEAD, OPTIONS'],
      ['/stitch/hls/stream/s1/asset/a1', 'POST, OPTIONS'],
    ]) {
      const r = await preflight(open.url, path!);
      t.equal(r.status, 204, `${path}: 204`);
      t.equal(r.text, '', 'no body');
      t.equal(r.headers['access-control-allow-origin'], '*');
      t.equal(r.headers['access-control-allow-methods'], methods);
      t.match(r.headers['access-control-allow-headers'], /Range/);
      t.match(r.headers['access-control-allow-headers'], /Content-Type/);
      t.equal(r.headers['access-control-max-age'], '7200');
    }
    const api = await preflight(open.url, '/api/v1/squeeze-event-config', PLAYER, 'PUT');
    t.not(api.status, 204, `the management API answers no preflight (${api.status})`);
    t.notOk(api.headers['access-control-allow-origin'], 'and no CORS headers');
    const listedPre = await preflight(listed.url, manifest);
    t.equal(listedPre.headers['access-control-allow-origin'], PLAYER, 'allow-list: the origin echoed');
    t.equal(listedPre.headers['vary'], 'Origin');
    const otherPre = await preflight(listed.url, '/stitch/hls/stream/s1/asset/a1', OTHER, 'POST');
    t.equal(otherPre.status, 204);
    t.notOk(otherPre.headers['access-control-allow-origin'], 'an origin not listed: no Allow-Origin');
    t.notOk(otherPre.headers['access-control-allow-methods']);
  });

  await t.test('allow-list: echo with Vary, nothing for an origin not listed', async (t) => {
    for (const path of [
      manifest,
      manifest,
      '/squeezeback/CORS1/master.m3u8',
      '/vast?stream_id=nobody',
      '/vast',
      '/stitch/filler.vtt',
    ]) {
      const yes = await get(listed.url, path, PLAYER);
      t.equal(yes.headers['access-control-allow-origin'], PLAYER, `${path}: a listed origin is echoed`);
      // Negotiated answers (200 manifests and VAST) vary by Accept-Encoding too, in one merged header (issue 27).
      const vary = yes.status === 200 && !path.endsWith('.vtt') ? 'Origin, Accept-Encoding' : 'Origin';
      t.equal(yes.headers['vary'], vary);
      t.equal(yes.headers['access-control-expose-headers'], CORS_EXPOSE);
      const also = await get(listed.url, path, 'http://localhost:8081');
      t.equal(
        also.headers['access-control-allow-origin'],
        'http://localhost:8081',
        'the other listed origin, from the same cached rendering',
      );
      const no = await get(listed.url, path, OTHER);
      t.equal(no.status, yes.status, 'the answer itself is the same');
      t.notOk(no.headers['access-control-allow-origin'], `${path}: an origin not listed gets no Allow-Origin`);
      t.notOk(no.headers['access-control-expose-headers']);
      t.equal(no.headers['vary'], vary, 'but Vary: Origin, for shared caches');
      t.notOk((await get(listed.url, path)).headers['access-control-allow-origin'], 'no Origin: none');
    }
  });

  await t.test('the management API carries no CORS headers', async (t) => {
    const r = await call(open.url, 'GET', '/api/v1/openapi.json', { headers: { origin: PLAYER } });
    t.equal(r.status, 200);
    t.notOk(r.headers['access-control-allow-origin']);
    const denied = await call(open.url, 'GET', '/api/v1/streams', { headers: { origin: PLAYER } });
    t.equal(denied.status, 401);
    t.notOk(denied.headers['access-control-allow-origin']);
  });
});
