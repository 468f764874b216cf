/** Catalog push and tokens, real Postgres: good, bad token, DOCTYPE, oversize, malformed; upsert counts. */
import t from 'tap';
import { call, rawExchange } from '../helpers/http.js';
import { fixture } from '../helpers/fixtures.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';

const TOKEN = 'push-token-0123456789abcdefghij';

t.test('catalog push', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t) });
  const jwt = await token(service);
  const push = (brand: string, body: string, headers: Record<string, string> = {}) =>
    call(service.url, 'POST', `/mrssfeed/${brand}`, {
      body,
      headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN, ...headers },
    });
  const guardian = fixture('mrss/rss-parser/guardian.rss');

  t.equal(
    (await call(service.url, 'PUT', '/api/v1/brand-tokens/acme', { token: jwt, json: { mrss_token: 'short' } })).status,
    400,
  );
  t.equal((await call(service.url, 'PUT', '/api/v1/brand-tokens/acme', { json: { mrss_token: TOKEN } })).status, 401);
  t.equal(
    (await call(service.url, 'PUT', '/api/v1/brand-tokens/acme', { token: jwt, json: { mrss_token: TOKEN } })).status,
    204,
  );

  t.test('tokens', async (t) => {
    t.equal((await push('acme', guardian, { 'x-service-mrss-token': '' })).status, 401, 'missing');
    const wrong = await push('acme', guardian, { 'x-service-mrss-token': 'wrong-token-0123456789abcdef' });
    t.equal(wrong.status, 401);
    t.equal(wrong.headers['content-type'], 'application/problem+json');
    t.equal((await push('no-such-brand', guardian)).status, 401, 'a brand without a token looks the same');
  });

  t.test('push, then push again: inserted, unchanged, updated', async (t) => {
    const first = await push('acme', guardian);
    t.equal(first.status, 200);
    t.match(first.body, { brand_name: 'acme', items_received: 55, inserted: 55, updated: 0, unchanged: 0 });
    const again = await push('acme', guardian);
    t.match(again.body, { inserted: 0, updated: 0, unchanged: 55 });
    const at = guardian.indexOf('</title>', guardian.indexOf('<item>'));
    const changed = `${guardian.slice(0, at)} (updated)${guardian.slice(at)}`;
    t.match((await push('acme', changed)).body, { updated: 1, unchanged: 54 });
    const list = await call(service.url, 'GET', '/api/v1/catalog?brand_name=acme&page_size=5', { token: jwt });
    t.equal(list.body.total_results, 55);
    t.equal(list.body.results.length, 5);
    const item = list.body.results[0];
    const one = await call(service.url, 'GET', `/api/v1/catalog/acme/${encodeURIComponent(item.guid)}`, { token: jwt });
    t.equal(one.status, 200);
    t.equal(one.body.guid, item.guid);
    t.equal(one.body.id, item.guid, 'issue 25: the item answers id (its guid, unique within the brand)');
    t.equal(item.id, item.guid, 'in the list too');
    // issue 25: nested fields are JSON, not JSON-encoded strings, in the list and in the item
    for (const it of [item, one.body]) {
      t.ok(Array.isArray(it.renditions), 'renditions is an array');
      t.ok(Array.isArray(it.thumbnails), 'thumbnails is an array');
      t.ok(Array.isArray(it.cue_points), 'cue_points is an array');
      t.equal(typeof it.extras, 'object', 'extras is an object');
      t.not(it.extras, null);
    }
    t.equal((await call(service.url, 'GET', '/api/v1/catalog/acme/nope', { token: jwt })).status, 404);
    t.ok(
      (await call(service.url, 'GET', '/api/v1/catalog?q=%25', { token: jwt })).body.total_results >= 0,
      'LIKE metacharacters are literal',
    );
  });

  t.test('bad bodies: DOCTYPE, malformed, wrong type, oversize — nothing written', async (t) => {
    await call(service.url, 'PUT', '/api/v1/brand-tokens/clean', { token: jwt, json: { mrss_token: TOKEN } });
    const doctype = await push(
      'clean',
      '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY e SYSTEM "file:///etc/passwd">]><rss><channel><item><guid>&e;</guid></item></channel></rss>',
    );
    t.equal(doctype.status, 400);
    t.match(doctype.body.detail, /DOCTYPE/);
    t.equal(
      (await push('clean', '<rss><channel><item><guid>a</guid></item><item><guid>b</guid>')).status,
      400,
      'malformed: not even the complete first item is kept',
    );
    t.equal((await push('clean', guardian, { 'content-type': 'application/json' })).status, 415);
    const head = `POST /mrssfeed/clean HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\nX-Service-Mrss-Token: ${TOKEN}\r\nContent-Length: ${21 * 1024 * 1024}\r\n\r\n`;
    t.match(await rawExchange(service.port, [head]), /^HTTP\/1\.1 413 /);
    t.equal((await call(service.url, 'GET', '/api/v1/catalog?brand_name=clean', { token: jwt })).body.total_results, 0);
  });
});
