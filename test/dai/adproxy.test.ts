/** The preroll ad tag: always an empty VAST, the stream registered with its targeting, both registration orders. */
import t from 'tap';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { EMPTY_VAST } from '../../lib/dai/adproxy.js';
import { targetingFrom } from '../../lib/ads/targeting.js';
import { keys } from '../../lib/store/index.js';
import { call, rawExchange } from '../helpers/http.js';
import {
  freshSchemaUrl,
  needServices,
  startTestService,
  testConfig,
  token,
  REDIS_URL,
  UNLIMITED,
} from '../helpers/services.js';
import { pino } from 'pino';
import { startService } from '../../lib/app.js';

t.test('targeting capture', async (t) => {
  t.same(Object.fromEntries(targetingFrom('stream_id=s1&imafw_ge=m&gr=2&imafw_csid=x&csid=native')), {
    ge: 'm',
    csid: 'native',
    stream_id: 's1',
    gr: '2',
  });
  t.same(
    Object.fromEntries(targetingFrom('a%20b=c+d&imafw_x%3Dy=1&bad=%E0%A4%A')),
    { 'a b': 'c d', 'x=y': '1', bad: '%E0%A4%A' },
    'decoded; a malformed escape is kept as sent',
  );
  const many = Array.from({ length: 300 }, (_, i) => `p${i}=v`).join('&');
  t.equal(targetingFrom(many).size, 200, 'at most 200 parameters');
  const big = `stream_id=s&x=${'a'.repeat(10000)}`;
  t.ok(targetingFrom(big).has('stream_id'), 'truncated, not rejected');
  t.equal(
    JSON.stringify(Object.fromEntries(targetingFrom('__proto__=x&constructor=y&a=1'))),
    '{"__proto__":"x","constructor":"y","a":"1"}',
    'hostile names are plain names, stored as such',
  );
});

t.test('GET /dai/adproxy', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  // The test client plays the ad manager's server: trusted, so its X-Device-Ip names the viewer.
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    trustedProxies: '127.0.0.1',
  });
  const tok = await token(service);
  await call(service.url, 'PUT', '/api/v1/squeeze-brand-config', { token: tok, json: { brand_id: 'b1' } });
  const ev = await call(service.url, 'PUT', '/api/v1/squeeze-event-config', {
    token: tok,
    json: { asset_id: 'AK1', caid: 'C1', source_uri: 'https://o.example/m.m3u8', brand_config_id: 'b1' },
  });
  const eventId = ev.body.id;
  const stream = async (id: string) => {
    await service.streams.flush();
    return service.stores.state.hgetall(keys.stream(id));
  };

  t.test('preroll first, then manifest', async (t) => {
    const r = await call(
      service.url,
      'GET',
      '/dai/adproxy?stream_id=p1:LOC&asset_key=AK1&imafw_ge=f&gr=3&vprn=1234567890&_fw_us_privacy=1YNN',
      { headers: { 'x-device-ip': '203.0.113.9' } },
    );
    t.equal(r.status, 200);
    t.equal(r.headers['content-type'], 'application/xml');
    t.equal(r.text, EMPTY_VAST);
    let s = await stream('p1:LOC');
    t.equal(s['event_id'], String(eventId));
    t.equal(s['client_ip'], '203.0.113.9');
    t.equal(s['vprn'], '1234567890');
    t.match(s['pvrn'], /^\d{10}$/, 'random 10-digit fallback');
    t.match(JSON.parse(s['fw_params']!), { ge: 'f', gr: '3', _fw_us_privacy: '1YNN' });
    await call(service.url, 'GET', '/dai/manifest/linear/hls/pa/event/AK1/stream/p1:LOC/variant/720p.m3u8');
    s = await stream('p1:LOC');
    t.match(JSON.parse(s['fw_params']!), { ge: 'f' }, 'targeting kept');
    t.same(await service.streams.streamIdsOf(eventId), ['p1:LOC']);
  });

  t.test('manifest first, then preroll (by caid), and both at once', async (t) => {
    await call(service.url, 'GET', '/dai/manifest/linear/hls/pa/event/AK1/stream/m1:LOC/variant/720p.m3u8');
    let s = await stream('m1:LOC');
    t.equal(s['event_id'], String(eventId));
    t.equal(s['fw_params'], undefined, 'no targeting yet');
    await call(service.url, 'GET', '/dai/adproxy?stream_id=m1:LOC&caid=C1&sb=1', {
      headers: { 'x-device-ip': 'not-an-ip' },
    });
    s = await stream('m1:LOC');
    t.match(JSON.parse(s['fw_params']!), { sb: '1' });
    t.equal(s['client_ip'], '127.0.0.1', 'invalid X-Device-Ip: the socket address');
    await Promise.all([
      call(service.url, 'GET', '/dai/adproxy?stream_id=r1:LOC&asset_key=AK1&ge=m'),
      call(service.url, 'GET', '/dai/manifest/linear/hls/pa/event/AK1/stream/r1:LOC/variant/720p.m3u8'),
    ]);
    s = await stream('r1:LOC');
    t.equal(s['event_id'], String(eventId));
    t.match(JSON.parse(s['fw_params']!), { ge: 'm' });
  });

  t.test('never an error: unknown event, no stream id, huge query', async (t) => {
    const unknown = await call(service.url, 'GET', '/dai/adproxy?stream_id=u1:LOC&asset_key=NOPE');
    t.equal(unknown.status, 200);
    t.equal(unknown.text, EMPTY_VAST);
    const s = await stream('u1:LOC');
    t.equal(s['event_id'], undefined, 'recorded without an event');
    t.equal((await call(service.url, 'GET', '/dai/adproxy')).text, EMPTY_VAST);
    const huge = `/dai/adproxy?stream_id=h1:LOC&${Array.from({ length: 400 }, (_, i) => `k${i}=${'v'.repeat(30)}`).join('&')}`;
    t.ok(huge.length > 12000);
    const raw = await rawExchange(service.port, [`GET ${huge} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
    t.match(raw, /^HTTP\/1\.1 200 /);
    t.match(raw, /<VAST version="4\.0"\/>/);
  });
});

t.test(
  'over the per-viewer limit: still the empty VAST, not registered, counted and logged; unknown asset keys counted and logged (issue 25 item 5)',
  async (t) => {
    if (!(await needServices(t))) return;
    const sim = await new DaiHostSim().start();
    t.teardown(() => sim.stop());
    const lines: Array<Record<string, unknown>> = [];
    const log = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const config = testConfig(t, {
      databaseUrl: await freshSchemaUrl(t),
      redisUrl: REDIS_URL,
      daiHost: sim.url,
      rateLimits: { ...UNLIMITED, adproxy: { rate: 0.01, burst: 2 } },
      trustedProxies: '127.0.0.1',
    });
    const service = await startService(config, log);
    t.teardown(() => service.close());
    const tok = await token(service);
    await call(service.url, 'PUT', '/api/v1/squeeze-brand-config', { token: tok, json: { brand_id: 'b1' } });
    const ev = await call(service.url, 'PUT', '/api/v1/squeeze-event-config', {
      token: tok,
      json: { asset_id: 'AK1', source_uri: 'https://o.example/m.m3u8', brand_config_id: 'b1' },
    });
    const viewer = { 'x-device-ip': '198.51.100.7' };
    const answers = [];
    for (let i = 1; i <= 4; i++)
      answers.push(
        await call(service.url, 'GET', `/dai/adproxy?stream_id=lim${i}:LOC&asset_key=AK1`, { headers: viewer }),
      );
    t.same(
      answers.map((a) => [a.status, a.headers['content-type'], a.text]),
      Array(4).fill([200, 'application/xml', EMPTY_VAST]),
      'every call, over the limit too, is answered the empty VAST 4.0 document (before issue 25: a 429 problem)',
    );
    await service.streams.flush();
    t.same(
      (await service.streams.streamIdsOf(ev.body.id)).filter((id) => id.startsWith('lim')).sort(),
      ['lim1:LOC', 'lim2:LOC'],
      'the two within the burst are registered; the two over it are not',
    );
    t.same(await service.streams.get('lim3:LOC'), undefined);
    const unknown = await call(service.url, 'GET', '/dai/adproxy?stream_id=unk1:LOC&asset_key=NOPE', {
      headers: { 'x-device-ip': '198.51.100.8' },
    });
    t.equal(unknown.text, EMPTY_VAST);
    await call(service.url, 'GET', '/dai/adproxy?stream_id=unk2:LOC&asset_key=NOPE', {
      headers: { 'x-device-ip': '198.51.100.9' },
    });
    const metrics = (await call(service.url, 'GET', '/metrics')).text;
    t.match(
      metrics,
      /dai_adproxy_requests_total\{outcome="rate_limited"\} 2\b/,
      'the refused registrations are counted',
    );
    t.match(metrics, /dai_adproxy_requests_total\{outcome="unknown_event"\} 2\b/, 'unknown asset keys are counted');
    t.match(
      metrics,
      /dai_adproxy_requests_total\{outcome="registered"\} 4\b/,
      'the unknown-key streams are still recorded',
    );
    const limited = lines.filter((l) => String(l['msg']).includes('over the per-viewer rate limit'));
    t.equal(limited.length, 1, 'one log line for the refused burst (at most one a second)');
    t.match(limited[0], { level: 40, client_ip: '198.51.100.7' });
    const unknownLines = lines.filter((l) => String(l['msg']).includes('no event config for this asset key'));
    t.equal(unknownLines.length, 1, 'the unknown key is logged once a minute, not once a request');
    t.match(unknownLines[0], { level: 40, key: 'NOPE', stream_id: 'unk1:LOC' });
  },
);
