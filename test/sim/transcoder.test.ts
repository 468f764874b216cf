import t from 'tap';
import { request } from 'undici';
import { TranscoderSim } from '../../lib/sim/transcoder.js';
import { call } from '../helpers/http.js';

const job = (over: Record<string, unknown> = {}) => ({
  content_uri: 'https://origin.example.org/content/ev/seg_990.ts',
  ad_uri: 'https://ads.example.com/creatives/ad-1.mp4',
  background_uri: 'https://cdn.example.com/brand/bg.png',
  layout: 'dualbox',
  sqz_ratios: { content_box: 0.7, ad_box: 0.3 },
  positions: { content_box: { x: 0, y: 0 }, ad_box: { x: 0.7, y: 0.2 } },
  animation: { phase: 'in', in_sec: 1, out_sec: 1 },
  frames: { content_box: { enabled: true, thickness_px: 4, color: 'white@0.8' } },
  ad_offset_sec: 0,
  duration_sec: 6,
  id3: { owner: 'com.brand.vtg', value: 'break-1' },
  output_key: 'ev/seg_990-ad-1-0',
  ...over,
});

t.test('ok: a valid job answers the output URI, which then serves MPEG-TS', async (t) => {
  const sim = await new TranscoderSim().start();
  t.teardown(() => sim.stop());
  const missing = await request(`${sim.url}/out/ev/seg_990-ad-1-0.ts`);
  await missing.body.dump();
  t.equal(missing.statusCode, 404, 'unknown before the job');
  const r = await call(sim.url, 'POST', '/v3/squeeze', { json: job() });
  t.equal(r.status, 200);
  t.same(r.body, { output_uri: `${sim.url}/out/ev/seg_990-ad-1-0.ts` });
  t.equal(sim.jobs.length, 1);
  t.equal(sim.jobs[0]!.content_uri, job().content_uri);
  t.equal(sim.jobsByKey.get('ev/seg_990-ad-1-0'), 1);
  const out = await request(r.body.output_uri);
  t.equal(out.statusCode, 200);
  t.equal(out.headers['content-type'], 'video/mp2t');
  const bytes = Buffer.from(await out.body.arrayBuffer());
  t.equal(bytes[0], 0x47, 'TS sync byte');
  const minimal = await call(sim.url, 'POST', '/v3/squeeze', {
    json: { content_uri: 'http://o/a.ts', ad_uri: 'http://a/b.mp4', layout: 'lbar', output_key: 'k 1' },
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  t.equal(minimal.status, 200, 'optional fields are optional');
  t.equal(minimal.body.output_uri, `${sim.url}/out/k%201.ts`);
  const o2 = await request(minimal.body.output_uri);
  await o2.body.dump();
  t.equal(o2.statusCode, 200);
});

t.test('validation: 400 problem, 415, 413, 404, 405', async (t) => {
  const sim = await new TranscoderSim().start();
  t.teardown(() => sim.stop());
  const bad = await call(sim.url, 'POST', '/v3/squeeze', {
    body: '{"content_uri":',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(bad.status, 400);
  t.match(bad.headers['content-type'], /application\/problem\+json/);
  t.match(bad.body, { status: 400, title: 'Bad Request' });
  for (const field of ['content_uri', 'ad_uri', 'output_key', 'layout']) {
    const body = job();
    delete (body as Record<string, unknown>)[field];
    const r = await call(sim.url, 'POST', '/v3/squeeze', { json: body });
    t.equal(r.status, 400, `missing ${field}`);
    t.match(r.body.errors, [{ path: field }]);
  }
  for (const [field, value] of [
    ['content_uri', 'file:///etc/passwd'],
    ['ad_uri', 'not a url'],
    ['background_uri', 'ftp://x/y.png'],
    ['layout', 'pip'],
    ['output_key', ''],
    ['output_key', 42],
    ['duration_sec', -1],
    ['animation', { phase: 'sideways' }],
    ['id3', { owner: 7 }],
    ['output_key', 'a/../b'],
    ['output_key', './b'],
    ['output_key', 'a//b'],
    ['sqz_ratios', [0.7, 0.3]],
    ['sqz_ratios', { content_box: 2 }],
    ['positions', { ad_box: { x: -0.1 } }],
    ['frames', { ad_box: { color: 'red:x=1' } }],
    ['frames', 150],
    ['audio', 'both'],
  ] as const) {
    const r = await call(sim.url, 'POST', '/v3/squeeze', { json: job({ [field]: value }) });
    t.equal(r.status, 400, `${field}=${JSON.stringify(value)}`);
    t.ok(r.body.errors.some((e: { path: string }) => e.path.startsWith(field)));
  }
  for (const body of ['[]', 'null', '"x"'])
    t.equal(
      (await call(sim.url, 'POST', '/v3/squeeze', { body, headers: { 'content-type': 'application/json' } })).status,
      400,
      body,
    );
  t.equal(
    (
      await call(sim.url, 'POST', '/v3/squeeze', {
        body: JSON.stringify(job()),
        headers: { 'content-type': 'text/plain' },
      })
    ).status,
    415,
  );
  t.equal((await call(sim.url, 'POST', '/v3/squeeze', { body: JSON.stringify(job()) })).status, 415, 'no content type');
  const huge = JSON.stringify(job({ pad: 'x'.repeat(1024 * 1024) }));
  t.equal(
    (await call(sim.url, 'POST', '/v3/squeeze', { body: huge, headers: { 'content-type': 'application/json' } }))
      .status,
    413,
  );
  t.equal((await call(sim.url, 'GET', '/v3/squeeze')).status, 405);
  t.equal((await call(sim.url, 'POST', '/v2/squeeze', { json: job() })).status, 404);
  t.equal(sim.jobs.length, 0, 'invalid jobs are not recorded');
});

t.test('modes: error, slow, delay, flaky', async (t) => {
  const sim = await new TranscoderSim({ slowMs: 150 }).start();
  t.teardown(() => sim.stop());
  sim.mode = 'error';
  const e = await call(sim.url, 'POST', '/v3/squeeze', { json: job({ output_key: 'e' }) });
  t.equal(e.status, 500);
  t.match(e.headers['content-type'], /problem\+json/);
  const gone = await request(`${sim.url}/out/e.ts`);
  await gone.body.dump();
  t.equal(gone.statusCode, 404, 'a failed job produced nothing');
  sim.mode = 'slow';
  let started = Date.now();
  t.equal((await call(sim.url, 'POST', '/v3/squeeze', { json: job({ output_key: 's' }) })).status, 200);
  t.ok(Date.now() - started >= 140, 'slow waits slowMs');
  sim.mode = 'ok';
  sim.delayMs = 100;
  started = Date.now();
  t.equal((await call(sim.url, 'POST', '/v3/squeeze', { json: job({ output_key: 'd' }) })).status, 200);
  t.ok(Date.now() - started >= 90, 'delayMs applies to ok answers');
  sim.delayMs = 0;
  sim.mode = 'flaky';
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++)
    statuses.push((await call(sim.url, 'POST', '/v3/squeeze', { json: job({ output_key: 'f' }) })).status);
  t.same(statuses, [503, 200, 503, 200], 'every other call of one key fails first');
  t.equal((await call(sim.url, 'POST', '/v3/squeeze', { json: job({ output_key: 'g' }) })).status, 503, 'per key');
  t.equal(sim.jobsByKey.get('f'), 4);
  t.equal(sim.jobsByKey.get('g'), 1);
  t.equal(sim.jobs.length, 8);
});
