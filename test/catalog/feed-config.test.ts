/** Feed configuration CRUD against real Postgres: flat and wrapped, both paths, validation, uniqueness. */
import t from 'tap';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';

t.test('global-config', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t) });
  const jwt = await token(service);
  const api = (method: string, path: string, json?: unknown) =>
    call(service.url, method, `/api/v1/${path}`, { token: jwt, json });
  const flat = {
    brand_name: 'acme',
    feed_name: 'acme-vod',
    feed_uri: 'https://feeds.example.com/acme.rss',
    pagination_supported: true,
    pull_frequency_sec: 300,
    pagination_params: {
      limit: 100,
      limit_param: 'limit',
      offset_base: 0,
      offset_multiplier: 100,
      offset_param: 'offset',
      stop_when_caughtup: true,
    },
  };

  const created = await api('POST', 'global-config', flat);
  t.equal(created.status, 201);
  t.notOk('ID' in created.body, 'one spelling of the id: id (issue 25)');
  t.match(created.body, {
    id: Number,
    feed_name: 'acme-vod',
    pagination_params: { next_from_feed: 'https://feeds.example.com/acme.rss', limit: 100 },
  });
  const wrappedBody = {
    name: 'beta-feed',
    jsonb_value: {
      brand_name: 'beta',
      feed_uri: 'https://feeds.example.com/beta.rss',
      pagination_params: {
        limit: '50',
        limit_param: 'max-results',
        offset_param: 'start-index',
        offset_base: 1,
        offset_multiplier: 50,
      },
    },
  };
  const w = await api('POST', 'global', wrappedBody);
  t.equal(w.status, 201, 'wrapped, on the /global path');
  t.match(w.body, {
    feed_name: 'beta-feed',
    pagination_supported: false,
    pull_frequency_sec: 0,
    pagination_params: { limit: '50' },
  });

  t.equal((await api('POST', 'global-config', flat)).status, 409, 'duplicate feed_name');
  t.equal((await api('POST', 'global-config', { ...flat, feed_name: 'other' })).status, 409, 'duplicate brand_name');
  for (const bad of [
    { ...flat, feed_name: 'x1', brand_name: 'x1', feed_uri: 'ftp://feeds.example.com/x' },
    { ...flat, feed_name: 'x2', brand_name: 'x2', pull_frequency_sec: -1 },
    { ...flat, feed_name: 'x3', brand_name: 'x3', pagination_params: { limit: true } },
    { brand_name: 'x4', feed_name: 'x4', feed_uri: 'https://f.example/x' },
    { ...flat, feed_name: 'x5', brand_name: 'x5', pagination_params: { offset_param: 'o' } },
  ])
    t.equal((await api('POST', 'global-config', bad)).status, 400, JSON.stringify(bad).slice(0, 80));

  // The spec's wrapper: `name` names the configuration, jsonb_value.feed_name the feed; they may differ.
  const named = await api('POST', 'global-config', {
    name: 'gamma config',
    jsonb_value: { ...flat, brand_name: 'gamma', feed_name: 'gamma-feed' },
  });
  t.equal(named.status, 201);
  t.equal(named.body.feed_name, 'gamma-feed');
  t.equal(named.body.name, 'gamma config', 'the wrapper name is kept');
  // issue 25: a wrapped configuration is reachable by its name as well as by its feed_name
  const byName = await api('GET', `global-config/${encodeURIComponent('gamma config')}`);
  t.equal(byName.status, 200, 'GET by the wrapper name');
  t.equal(byName.body.feed_name, 'gamma-feed');
  t.equal(byName.body.id, named.body.id);
  // 202, or 409 while the pull a new feed starts with is still running: either way the name was found (not 404)
  t.ok(
    [202, 409].includes((await api('POST', `global-config/${encodeURIComponent('gamma config')}/pull`)).status),
    'pull by the wrapper name',
  );
  t.equal(
    (await api('DELETE', `global-config/${encodeURIComponent('gamma config')}`)).body.feed_name,
    'gamma-feed',
    'DELETE by the wrapper name',
  );
  t.equal((await api('GET', 'global-config/gamma-feed')).status, 404);

  // issue 25: the one list envelope
  const list = await api('GET', 'global-config');
  t.equal(list.body.total_results, 2);
  t.equal(list.body.results.length, 2);
  t.ok(list.body.results.every((c: { id: unknown }) => typeof c.id === 'number'));
  const page = await api('GET', 'global-config?page=1&page_size=1');
  t.equal(page.body.results.length, 1, 'paged');
  t.equal(page.body.total_results, 2);
  t.equal((await api('GET', 'global-config?page_size=501')).status, 400);
  t.equal((await api('GET', 'global-config/beta-feed')).body.brand_name, 'beta');
  t.equal((await api('GET', 'global-config/nope')).status, 404);
  const upd = await api('PUT', 'global-config/beta-feed', {
    ...wrappedBody.jsonb_value,
    feed_name: 'beta-feed',
    pull_frequency_sec: 60,
  });
  t.equal(upd.body.pull_frequency_sec, 60);
  t.equal((await api('PUT', 'global-config/nope', flat)).status, 404);
  t.equal((await api('DELETE', 'global/beta-feed')).body.feed_name, 'beta-feed');
  t.equal((await api('DELETE', 'global/beta-feed')).status, 404);
  t.equal((await call(service.url, 'GET', '/api/v1/global-config')).status, 401);
});
