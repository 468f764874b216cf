/** Brand-recognition API end to end: real server, real Postgres and Redis. */
import t from 'tap';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../helpers/services.js';

t.test('brand-recognition CRUD, validation and resolve', async (t) => {
  if (!(await needServices(t))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), redisUrl: REDIS_URL });
  const tok = await token(service);
  const api = (method: string, path: string, json?: unknown) =>
    call(service.url, method, `/api/v1/brand-recognition${path}`, { token: tok, json });

  const created = await api('POST', '', {
    brand_name: 'acme',
    match_type: 'header',
    match_name: 'X-Brand',
    match_value: 'acme*',
  });
  t.equal(created.status, 201);
  t.match(created.body, {
    id: Number,
    brand_name: 'acme',
    match_type: 'header',
    match_name: 'X-Brand',
    match_value: 'acme*',
  });
  t.equal(created.headers['location'], `/api/v1/brand-recognition/${created.body.id}`);

  const host = await api('POST', '', {
    brand_name: 'beta',
    match_type: 'hostname',
    match_name: 'ignored',
    match_value: '*.beta.tv',
  });
  t.equal(host.status, 201);
  t.equal(host.body.match_name, '', 'hostname rules return an empty match_name');
  const query = await api('POST', '', {
    brand_name: 'acme-kids',
    match_type: 'query_param',
    match_name: 'brand',
    match_value: 'kids',
  });
  t.equal(query.status, 201);

  t.test('duplicates are 409, header names compared case-insensitively', async (t) => {
    const dup = await api('POST', '', {
      brand_name: 'acme',
      match_type: 'header',
      match_name: 'x-brand',
      match_value: 'acme*',
    });
    t.equal(dup.status, 409);
    t.equal(dup.headers['content-type'], 'application/problem+json');
    t.match(dup.body, { status: 409, title: 'Conflict', type: String });
  });

  t.test('validation errors carry errors[]', async (t) => {
    const badType = await api('POST', '', { brand_name: 'x', match_type: 'cookie', match_value: 'v' });
    t.equal(badType.status, 400);
    t.match(badType.body.errors, [{ path: '/match_type', message: String }]);
    const noName = await api('POST', '', { brand_name: 'x', match_type: 'header', match_value: 'v' });
    t.equal(noName.status, 400);
    t.match(noName.body.errors, [{ path: '/match_name' }]);
    const noNameQ = await api('POST', '', {
      brand_name: 'x',
      match_type: 'query_param',
      match_name: '',
      match_value: 'v',
    });
    t.equal(noNameQ.status, 400);
    const badHeader = await api('POST', '', {
      brand_name: 'x',
      match_type: 'header',
      match_name: 'bad header',
      match_value: 'v',
    });
    t.equal(badHeader.status, 400);
    const extra = await api('POST', '', { brand_name: 'x', match_type: 'hostname', match_value: 'v', evil: true });
    t.equal(extra.status, 400);
    t.match(extra.body.errors, [{ path: '/evil' }]);
    const empty = await call(service.url, 'POST', '/api/v1/brand-recognition', {
      token: tok,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(empty.status, 400);
    const notObject = await api('POST', '', [1, 2]);
    t.equal(notObject.status, 400);
    const badJson = await call(service.url, 'POST', '/api/v1/brand-recognition', {
      token: tok,
      body: '{"brand_name":',
      headers: { 'content-type': 'application/json' },
    });
    t.equal(badJson.status, 400);
    t.equal(badJson.headers['content-type'], 'application/problem+json');
  });

  t.test('list: bare array, X-Total-Count, prefix and pages', async (t) => {
    const all = await api('GET', '');
    t.equal(all.status, 200);
    t.ok(Array.isArray(all.body));
    t.equal(all.headers['x-total-count'], '3');
    const acme = await api('GET', '?name_prefix=acme');
    t.same(
      acme.body.map((r: { brand_name: string }) => r.brand_name),
      ['acme', 'acme-kids'],
    );
    t.equal((await api('GET', '?name_prefix=ACME')).body.length, 0, 'prefix is case-sensitive');
    const page1 = await api('GET', '?page=1&page_size=2');
    t.equal(page1.body.length, 1);
    t.equal(page1.headers['x-total-count'], '3');
    t.equal((await api('GET', '?page_size=501')).status, 400);
    t.equal((await api('GET', '?page=-1')).status, 400);
    t.equal((await api('GET', '?page=abc')).status, 400);
    t.equal((await api('GET', '?name_prefix=%')).status, 200, 'LIKE metacharacters are literal');
    t.equal((await api('GET', '?name_prefix=%')).body.length, 0);
  });

  t.test('get, update, delete, 404s', async (t) => {
    const id = created.body.id;
    t.equal((await api('GET', `/${id}`)).body.brand_name, 'acme');
    const upd = await api('PUT', `/${id}`, {
      brand_name: 'acme',
      match_type: 'header',
      match_name: 'X-Brand',
      match_value: 'acme-tv',
    });
    t.equal(upd.status, 200);
    t.equal(upd.body.match_value, 'acme-tv');
    const clash = await api('PUT', `/${id}`, {
      brand_name: 'acme-kids',
      match_type: 'query_param',
      match_name: 'brand',
      match_value: 'kids',
    });
    t.equal(clash.status, 409, 'update into a duplicate');
    t.equal((await api('PUT', '/999999', { brand_name: 'a', match_type: 'hostname', match_value: 'x' })).status, 404);
    t.equal((await api('PUT', `/${id}`, { brand_name: 'a', match_type: 'nope', match_value: 'x' })).status, 400);
    t.equal((await api('GET', '/999999')).status, 404);
    t.equal((await api('DELETE', '/999999')).status, 404);
    t.equal((await api('DELETE', '/abc')).status, 400);
    t.equal((await api('DELETE', '/99999999999')).status, 400);
    const del = await api('DELETE', `/${query.body.id}`);
    t.equal(del.status, 200);
    t.same(del.body, query.body, 'answers the deleted object');
    t.equal((await api('GET', `/${query.body.id}`)).status, 404);
  });

  t.test('resolve uses the live rule set', async (t) => {
    const r = await api('POST', '/resolve', { headers: { 'X-BRAND': 'acme-tv' } });
    t.equal(r.status, 200);
    t.equal(r.body.brand_name, 'acme');
    t.equal((await api('POST', '/resolve', { hostname: 'news.BETA.tv:443' })).body.brand_name, 'beta');
    t.equal((await api('POST', '/resolve', { query: 'brand=kids' })).status, 404, 'deleted rule no longer resolves');
    t.equal((await api('POST', '/resolve', { headers: 'nope' })).status, 400);
  });
});

t.test('a rule created through instance A resolves through instance B within 1 s', async (t) => {
  if (!(await needServices(t))) return;
  const databaseUrl = await freshSchemaUrl(t);
  const a = await startTestService(t, { databaseUrl, redisUrl: REDIS_URL });
  const b = await startTestService(t, { databaseUrl, redisUrl: REDIS_URL });
  const tok = await token(a);
  const value = `brand-${Date.now()}`;
  const probe = () =>
    call(b.url, 'POST', '/api/v1/brand-recognition/resolve', { token: tok, json: { query: { sponsor: value } } });
  t.equal((await probe()).status, 404);
  const created = await call(a.url, 'POST', '/api/v1/brand-recognition', {
    token: tok,
    json: { brand_name: 'propagated', match_type: 'query_param', match_name: 'sponsor', match_value: value },
  });
  t.equal(created.status, 201);
  const started = Date.now();
  let found = 0;
  while (Date.now() - started < 1000) {
    const r = await probe();
    if (r.status === 200) {
      found = r.body.id;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(found, created.body.id, `resolved through B after ${Date.now() - started} ms`);
  const removed = await call(b.url, 'DELETE', `/api/v1/brand-recognition/${created.body.id}`, { token: tok });
  t.equal(removed.status, 200);
  const until = Date.now() + 1000;
  let gone = false;
  while (!gone && Date.now() < until) {
    gone =
      (
        await call(a.url, 'POST', '/api/v1/brand-recognition/resolve', {
          token: tok,
          json: { query: { sponsor: value } },
        })
      ).status === 404;
    if (!gone) await new Promise((r) => setTimeout(r, 20));
  }
  t.ok(gone, 'deletion through B reaches A');
});
