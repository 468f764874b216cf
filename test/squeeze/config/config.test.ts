/** Squeeze brand and event configuration through the API, real Postgres and Redis; the proxy follows event changes. */
import t from 'tap';
import { DaiHostSim } from '../../../lib/sim/dai-host.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';
import { reparse } from '../../hls/reparse.js';

t.test('squeeze configuration', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const databaseUrl = await freshSchemaUrl(t);
  const service = await startTestService(t, {
    databaseUrl,
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    contentOrigin: 'https://origin.example.org',
  });
  const tok = await token(service);
  const put = (path: string, json: unknown) => call(service.url, 'PUT', `/api/v1/${path}`, { token: tok, json });
  const get = (path: string) => call(service.url, 'GET', `/api/v1/${path}`, { token: tok });

  t.test('brand config: upsert by brand_id, id = brand_id, defaults filled', async (t) => {
    const r = await put('squeeze-brand-config', {
      brand_id: 'acme',
      sqz_ratios: { content_box: 0.7 },
      animations: { in_sec: 1.5 },
    });
    t.equal(r.status, 200);
    t.match(r.body, {
      id: 'acme',
      brand_id: 'acme',
      sqz_ratios: { content_box: 0.7, ad_box: 0.5 },
      animations: { in_sec: 1.5, out_sec: 2 },
      layout: 'dualbox',
    });
    const again = await put('squeeze-brand-config', {
      brand_id: 'acme',
      sqz_ratios: { content_box: 0.65, ad_box: 0.4 },
    });
    t.match(again.body.sqz_ratios, { content_box: 0.65, ad_box: 0.4 });
    t.equal(again.body.animations.in_sec, 2, 'PUT replaces: unset fields back to defaults');
    t.equal((await get('squeeze-brand-config/acme')).body.id, 'acme');
    t.equal((await put('squeeze-brand-config', { brand_id: 42 })).body.id, 42, 'numeric brand ids keep their type');
  });

  t.test('brand config: bad input', async (t) => {
    const bad = [
      { brand_id: 'x', sqz_ratios: { content_box: 1.5 } },
      { brand_id: 'x', sqz_ratios: { content_box: 'big' } },
      { brand_id: 'x', animations: { in_sec: -1 } },
      { brand_id: 'x', layout: 'triple' },
      { brand_id: 'x', frames: { ad_box: { color: 'red; rm -rf' } } },
      { brand_id: 'x', background_uri: 'file:///etc/passwd' },
      { sqz_ratios: {} },
      { brand_id: 'x', unknown: 1 },
    ];
    for (const b of bad) {
      const r = await put('squeeze-brand-config', b);
      t.equal(r.status, 400, JSON.stringify(b));
      t.ok(Array.isArray(r.body?.errors));
    }
    t.equal((await call(service.url, 'PUT', '/api/v1/squeeze-brand-config', { json: { brand_id: 'x' } })).status, 401);
    t.equal((await get('squeeze-brand-config/nope')).status, 404);
  });

  t.test('event config: upsert by asset_id, effective merged config, 404 unknown brand, 409 caid clash', async (t) => {
    const r = await put('squeeze-event-config', {
      asset_id: 'EVKEY',
      source_uri: 'https://origin.example.org/live/master.m3u8',
      brand_config_id: 'acme',
      caid: 'CAID-1',
      windows_segs: 10,
      live_edge_delay_segments: 2,
      animations: { out_sec: 3 },
    });
    t.equal(r.status, 200);
    t.match(r.body, {
      id: Number,
      asset_id: 'EVKEY',
      windows_segs: 10,
      live_edge_delay_segments: 2,
      brand_config_id: 'acme',
      sqz_ratios: { content_box: 0.65, ad_box: 0.4 },
      animations: { in_sec: 2, out_sec: 3 },
    });
    const id = r.body.id;
    const again = await put('squeeze-event-config', {
      asset_id: 'EVKEY',
      source_uri: 'https://origin.example.org/live/master.m3u8',
      brand_config_id: 'acme',
      windows_segs: 5,
    });
    t.equal(again.body.id, id, 'same asset_id, same id');
    t.equal(again.body.live_edge_delay_segments, 0);
    t.equal((await get('squeeze-event-config?asset_id=EVKEY')).body.windows_segs, 5);
    // The spec's spellings in the body; responses carry snake_case only.
    const spec = await put('squeeze-event-config', {
      asset_id: 'EVKEY',
      source_uri: 'https://origin.example.org/live/master.m3u8',
      brand_config_id: 'acme',
      WindowsSegs: 8,
      LiveEdgeDelaySegments: 1,
    });
    t.equal(spec.status, 200);
    t.match(spec.body, { windows_segs: 8, live_edge_delay_segments: 1 });
    t.notOk('WindowsSegs' in spec.body || 'LiveEdgeDelaySegments' in spec.body, 'snake_case in responses');
    t.equal(
      (
        await put('squeeze-event-config', {
          asset_id: 'EVKEY',
          source_uri: 'https://origin.example.org/live/master.m3u8',
          brand_config_id: 'acme',
          WindowsSegs: 8,
          windows_segs: 9,
        })
      ).status,
      400,
      'two spellings, two values',
    );
    t.equal(
      (
        await put('squeeze-event-config', {
          asset_id: 'EVKEY',
          source_uri: 'https://origin.example.org/live/master.m3u8',
          brand_config_id: 'acme',
          windows_segs: 5,
        })
      ).status,
      200,
    );
    t.equal((await get(`squeeze-event-config/${id}`)).body.asset_id, 'EVKEY');
    t.equal((await get('squeeze-event-config?asset_id=NOPE')).status, 404);
    t.equal((await get('squeeze-event-config')).status, 400, 'asset_id required');
    t.equal((await get('squeeze-event-config/999999')).status, 404);
    t.equal(
      (
        await put('squeeze-event-config', {
          asset_id: 'E2',
          source_uri: 'https://o.example/x.m3u8',
          brand_config_id: 'missing',
        })
      ).status,
      404,
    );
    await put('squeeze-event-config', {
      asset_id: 'E3',
      source_uri: 'https://o.example/x.m3u8',
      brand_config_id: 'acme',
      caid: 'SHARED',
    });
    t.equal(
      (
        await put('squeeze-event-config', {
          asset_id: 'E4',
          source_uri: 'https://o.example/x.m3u8',
          brand_config_id: 'acme',
          caid: 'SHARED',
        })
      ).status,
      409,
    );
    for (const b of [
      { asset_id: 'E5', brand_config_id: 'acme' },
      { asset_id: 'E5', source_uri: 'ftp://x/y', brand_config_id: 'acme' },
      { asset_id: 'E5', source_uri: 'https://o/x.m3u8', brand_config_id: 'acme', windows_segs: -1 },
      { asset_id: 'E5', source_uri: 'https://o/x.m3u8', brand_config_id: 'acme', live_edge_delay_segments: 'two' },
      { asset_id: 'bad id/with slash', source_uri: 'https://o/x.m3u8', brand_config_id: 'acme' },
    ])
      t.equal((await put('squeeze-event-config', b)).status, 400, JSON.stringify(b));
  });

  t.test('the events list: effective configs by id, paged', async (t) => {
    t.equal(
      (
        await put('squeeze-event-config', {
          asset_id: 'EV-LIST-2',
          source_uri: 'https://origin.example.org/b/master.m3u8',
          brand_config_id: 'acme',
        })
      ).status,
      200,
    );
    const all = await get('squeeze-events?page_size=500');
    t.equal(all.status, 200);
    const results = all.body.results as Array<{ id: number; asset_id: string; sqz_ratios: unknown; layout: string }>;
    t.equal(all.body.total_results, results.length);
    t.ok(results.length >= 2);
    t.ok(
      results.every((r, i) => i === 0 || results[i - 1]!.id < r.id),
      'by id',
    );
    const listed = results.find((r) => r.asset_id === 'EV-LIST-2');
    t.same(listed, (await get('squeeze-event-config?asset_id=EV-LIST-2')).body, 'each as the single GET shows it');
    t.equal((await get('squeeze-events?page=1&page_size=1')).body.results[0].id, results[1]!.id);
    for (const q of ['?page_size=0', '?page_size=501', '?page=-1', '?page=x'])
      t.equal((await get(`squeeze-events${q}`)).status, 400, `bad query ${q}`);
    t.equal((await call(service.url, 'GET', '/api/v1/squeeze-events')).status, 401, 'no token');
  });

  t.test('the manifest proxy applies the event window at once, on this and another instance', async (t) => {
    const b = await startTestService(t, {
      databaseUrl,
      redisUrl: REDIS_URL,
      daiHost: sim.url,
      contentOrigin: 'https://origin.example.org',
    });
    const path = '/dai/manifest/linear/hls/pa/event/EVKEY/stream/cfg1:LOC/variant/720p.m3u8';
    await put('squeeze-event-config', {
      asset_id: 'EVKEY',
      source_uri: 'https://origin.example.org/live/master.m3u8',
      brand_config_id: 'acme',
      windows_segs: 10,
      live_edge_delay_segments: 2,
    });
    t.equal(reparse((await call(service.url, 'GET', path)).text).segments.length, 10);
    let seen = 0;
    for (let i = 0; i < 50 && seen !== 10; i++) {
      seen = reparse((await call(b.url, 'GET', path)).text).segments.length;
      if (seen !== 10) await new Promise((r) => setTimeout(r, 20));
    }
    t.equal(seen, 10, 'instance B follows within 1 s');
    await put('squeeze-event-config', {
      asset_id: 'EVKEY',
      source_uri: 'https://origin.example.org/live/master.m3u8',
      brand_config_id: 'acme',
      windows_segs: 0,
      live_edge_delay_segments: 0,
    });
    t.equal(
      reparse((await call(service.url, 'GET', path)).text).segments.length,
      30,
      'window removed: the DVR window passes through',
    );
  });
});
