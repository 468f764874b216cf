/** Configured ads through the API against real Postgres and Redis. */
import t from 'tap';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';

t.test('squeeze-configured-ad', async (t) => {
  if (!(await needServices(t))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), redisUrl: REDIS_URL });
  const tok = await token(service);
  const api = (method: string, json?: unknown, query = '') =>
    call(service.url, method, `/api/v1/squeeze-configured-ad${query}`, { token: tok, json });
  await call(service.url, 'PUT', '/api/v1/squeeze-brand-config', { token: tok, json: { brand_id: 'b' } });
  const ev = (
    await call(service.url, 'PUT', '/api/v1/squeeze-event-config', {
      token: tok,
      json: { asset_id: 'A1', source_uri: 'https://o.example/m.m3u8', brand_config_id: 'b' },
    })
  ).body.id;

  const a = await api('PUT', {
    event_id: ev,
    ad_uri: 'https://ads.example/a.mp4',
    duration: 15,
    abid: 'ab1',
    slau: 'slot',
    geo_lang_loc: 'us-en',
    is_curated: true,
  });
  t.equal(a.status, 200);
  t.match(a.body, { id: Number, event_id: ev, abid: 'ab1', duration: 15, is_curated: true, geo_lang_loc: 'us-en' });
  const b = await api('PUT', { event_id: ev, ad_uri: 'https://ads.example/b.mp4', ad_duration: 30, abid: 'ab2' });
  t.equal(b.body.duration, 30, 'ad_duration accepted as duration');
  t.equal(b.body.is_curated, false, 'is_curated defaults to false');

  t.equal(
    (await api('PUT', { event_id: ev, ad_uri: 'https://ads.example/c.mp4', duration: 10, abid: 'ab1' })).status,
    409,
    'duplicate (event_id, abid)',
  );
  t.equal(
    (await api('PUT', { event_id: 99999, ad_uri: 'https://ads.example/c.mp4', duration: 10, abid: 'x' })).status,
    404,
    'unknown event',
  );
  for (const bad of [
    { event_id: ev, ad_uri: 'https://ads.example/c.mp4', abid: 'x' },
    { event_id: ev, ad_uri: 'javascript:alert(1)', duration: 5, abid: 'x' },
    { event_id: ev, ad_uri: 'https://a/x', duration: -5, abid: 'x' },
    { event_id: 'one', ad_uri: 'https://a/x', duration: 5, abid: 'x' },
  ]) {
    const r = await api('PUT', bad);
    t.equal(r.status, 400, JSON.stringify(bad));
    t.equal(r.headers['content-type'], 'application/problem+json');
  }

  const list = await api('GET', undefined, `?event_id=${ev}`);
  t.equal(list.body.total_results, 2);
  t.equal(list.body.results.length, 2);
  t.equal((await api('GET', undefined, `?event_id=${ev}&is_curated=true`)).body.total_results, 1);
  t.equal((await api('GET', undefined, `?event_id=${ev}&geo_lang_loc=us-en&abid=ab1`)).body.results[0].id, a.body.id);
  t.equal((await api('GET', undefined, '?page_size=1&page=1')).body.results.length, 1);
  t.equal((await api('GET', undefined, '?page_size=1000')).status, 400);

  const upd = await api('POST', { id: a.body.id, ad_duration: 20 });
  t.equal(upd.status, 200);
  t.equal(upd.body.duration, 20);
  t.equal((await api('POST', { id: a.body.id, abid: 'ab2' })).status, 409, 'update into a duplicate');
  t.equal((await api('POST', { id: 999999, duration: 5 })).status, 404);
  t.equal((await api('POST', { duration: 5 })).status, 400, 'id required');

  t.equal((await api('DELETE', { id: b.body.id })).status, 200);
  t.equal((await api('DELETE', { id: b.body.id })).status, 404);
  t.equal((await api('DELETE', {})).status, 400);
  t.equal((await call(service.url, 'DELETE', '/api/v1/squeeze-configured-ad', { json: { id: 1 } })).status, 401);
});
