/** The HTTP core through the real server: auth, body limits, content types, disconnects, health and metrics. */
import t from 'tap';
import { SignJWT, UnsecuredJWT } from 'jose';
import { call, rawExchange } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, JWT_SECRET } from '../helpers/services.js';

const secret = new TextEncoder().encode(JWT_SECRET);
const PATH = '/api/v1/brand-recognition';

t.test('HTTP core', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t) });
  const tok = await token(service);

  t.test('tokens', async (t) => {
    const list = (authorization?: string) =>
      call(service.url, 'GET', PATH, authorization ? { headers: { authorization } } : {});
    const none = await list();
    t.equal(none.status, 401);
    t.match(none.headers['www-authenticate'], /^Bearer/);
    t.equal(none.headers['content-type'], 'application/problem+json');
    const unsecured = new UnsecuredJWT({ roles: ['operator'] }).setExpirationTime('1h').encode();
    t.equal((await list(`Bearer ${unsecured}`)).status, 401, 'alg none');
    const wrongKey = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another'));
    t.equal((await list(`Bearer ${wrongKey}`)).status, 401, 'wrong signature');
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 120)
      .sign(secret);
    const e = await list(`Bearer ${expired}`);
    t.equal(e.status, 401, 'expired');
    t.match(e.body.detail, /expired/);
    const skewed = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
      .sign(secret);
    t.equal((await list(`Bearer ${skewed}`)).status, 200, 'within 30 s skew');
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).sign(secret);
    t.equal((await list(`Bearer ${noExp}`)).status, 401, 'exp required');
    const future = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('2h')
      .setNotBefore('1h')
      .sign(secret);
    t.equal((await list(`Bearer ${future}`)).status, 401, 'nbf in the future');
    const hs512 = await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setExpirationTime('1h').sign(secret);
    t.equal((await list(`Bearer ${hs512}`)).status, 401, 'algorithm pinned to HS256');
    t.equal((await list('Basic abc')).status, 401);
    t.equal((await list('Bearer not.a.jwt')).status, 401);
    t.equal((await list(`Bearer ${tok}`)).status, 200);
  });

  t.test('declared oversize body → 413 before it is sent', async (t) => {
    const head = `POST ${PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tok}\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`;
    const out = await rawExchange(service.port, [head], { waitMs: 3000 });
    t.match(out, /^HTTP\/1\.1 413 /);
    t.match(out, /application\/problem\+json/);
  });

  t.test('undeclared (chunked) oversize body → 413', async (t) => {
    const head = `POST ${PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tok}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = 'x'.repeat(64 * 1024);
    const body = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const out = await rawExchange(service.port, [head, ...body, '0\r\n\r\n'], { waitMs: 3000 });
    t.match(out, /^HTTP\/1\.1 413 /);
  });

  t.test('wrong content type → 415', async (t) => {
    const r = await call(service.url, 'POST', PATH, {
      token: tok,
      body: 'brand_name=x',
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(r.status, 415);
    t.equal(r.headers['content-type'], 'application/problem+json');
    const withCharset = await call(service.url, 'POST', PATH, {
      token: tok,
      body: JSON.stringify({ brand_name: 'cs', match_type: 'hostname', match_value: 'cs.tv' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    t.equal(withCharset.status, 201, 'parameters on the media type are fine');
  });

  t.test('a client that disconnects mid-body leaves nothing behind', async (t) => {
    const body = JSON.stringify({ brand_name: 'half-sent', match_type: 'hostname', match_value: 'half.tv' });
    const head = `POST ${PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tok}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    await rawExchange(service.port, [head, body.slice(0, 20)], { closeAfterSend: true });
    await new Promise((r) => setTimeout(r, 200));
    const list = await call(service.url, 'GET', `${PATH}?name_prefix=half`, { token: tok });
    t.equal(list.status, 200, 'server still serves');
    t.same(list.body, []);
  });

  t.test('unknown routes and methods', async (t) => {
    const nf = await call(service.url, 'GET', '/nope');
    t.equal(nf.status, 404);
    t.equal(nf.headers['content-type'], 'application/problem+json');
    const nfApi = await call(service.url, 'GET', '/api/v1/nope', { token: tok });
    t.equal(nfApi.status, 404);
    const m = await call(service.url, 'PATCH', PATH, { token: tok });
    t.equal(m.status, 405);
    t.match(m.headers['allow'], /GET/);
    const enc = await call(service.url, 'GET', `${PATH}/%E0%A4%A`, { token: tok });
    t.equal(enc.status, 400);
  });

  t.test('request ids', async (t) => {
    const r = await call(service.url, 'GET', PATH, { token: tok, headers: { 'x-request-id': 'abc-123' } });
    t.equal(r.headers['x-request-id'], 'abc-123');
    const bad = await call(service.url, 'GET', PATH, { token: tok, headers: { 'x-request-id': 'no spaces allowed' } });
    t.not(bad.headers['x-request-id'], 'no spaces allowed');
  });

  t.test('health, readiness, metrics, OpenAPI', async (t) => {
    t.same((await call(service.url, 'GET', '/healthz')).body, { status: 'ok' });
    const ready = await call(service.url, 'GET', '/readyz');
    t.equal(ready.status, 200);
    t.match(ready.body, { postgres: 'ok', state_store: 'ok' });
    const metrics = await call(service.url, 'GET', '/metrics');
    t.match(metrics.text, /http_management_requests_total\{code="2xx"\} \d+/);
    t.match(metrics.text, /process_resident_memory_bytes \d+/);
    const doc = await call(service.url, 'GET', '/api/v1/openapi.json');
    t.equal(doc.status, 200);
    t.equal(doc.body.openapi, '3.1.0');
    t.ok(doc.body.paths['/api/v1/brand-recognition'].post.requestBody);
    t.ok(doc.body.paths['/api/v1/brand-recognition/{id}'].delete);
    t.same(doc.body.paths['/api/v1/brand-recognition'].post.requestBody.content['application/json'].schema.required, [
      'brand_name',
      'match_type',
      'match_value',
    ]);
  });
});

t.test('readiness reports a dead database as 503', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t) });
  await service.stores.sql.end();
  const r = await call(service.url, 'GET', '/readyz');
  t.equal(r.status, 503);
  t.equal(r.body.postgres, 'down');
  const tok = await token(service);
  const list = await call(service.url, 'GET', PATH, { token: tok });
  t.equal(list.status, 503, 'management answers 503 while Postgres is down');
  t.equal(list.headers['content-type'], 'application/problem+json');
});
