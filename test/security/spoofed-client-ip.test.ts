/**
 * Client IP from trusted hops only (issue 24 item 3). The rule itself, then over HTTP from an
 * untrusted peer (loopback is not in TRUSTED_PROXIES here): 60 requests rotating `X-Device-Ip`
 * and `X-Forwarded-For` are limited as one client on `/dai/adproxy` and on new `/squeezeback`
 * streams, the streams record the peer as their client_ip (the ad requests' `vip`), and the DAI
 * host is told the peer, not the claimed address, as `X-Forwarded-For` (its geo).
 */
import t from 'tap';
import { request } from 'undici';
import { BlockList, isIPv4 } from 'node:net';
import fc from 'fast-check';
import { clientIp, dottedQuad, peerIPv4, quadText, trustedProxies, viewerOf } from '../../lib/http/client-ip.js';
import type { HttpResponse } from '../../lib/http/uws.js';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, UNLIMITED } from '../helpers/services.js';

const ROTATIONS = 60;
const BURST = 3;

t.test('the rule: headers count only from trusted peers', async (t) => {
  const trusted = trustedProxies('10.0.0.0/8, 192.0.2.1, 2001:db8::/32');
  t.equal(
    clientIp('198.51.100.7', '', '203.0.113.9', trusted),
    '203.0.113.9',
    'X-Device-Ip from an untrusted peer: the peer',
  );
  t.equal(
    clientIp('', '198.51.100.7', '203.0.113.9', trusted),
    '203.0.113.9',
    'X-Forwarded-For from an untrusted peer: the peer',
  );
  t.equal(clientIp('198.51.100.7', '', '10.1.2.3', trusted), '198.51.100.7', 'X-Device-Ip from the trusted ad manager');
  t.equal(clientIp('not-an-ip', '', '10.1.2.3', trusted), '10.1.2.3', 'a malformed X-Device-Ip: the peer');
  t.equal(
    clientIp('', '6.6.6.6, 198.51.100.7, 10.0.0.5', '192.0.2.1', trusted),
    '198.51.100.7',
    'X-Forwarded-For walked from the right: the client-written left part is ignored',
  );
  t.equal(clientIp('', '10.0.0.7, 10.0.0.5', '192.0.2.1', trusted), '10.0.0.7', 'every hop trusted: the leftmost');
  t.equal(
    clientIp('', 'garbage, 198.51.100.7', '192.0.2.1', trusted),
    '198.51.100.7',
    'a malformed entry left of the client is never reached',
  );
  t.equal(
    clientIp('', '198.51.100.7, garbage', '192.0.2.1', trusted),
    '192.0.2.1',
    'a malformed hop stops the walk at the last good one',
  );
  t.equal(clientIp('', '', '::ffff:203.0.113.9', trusted), '203.0.113.9', 'a mapped IPv4 peer is plain');
  t.equal(clientIp('198.51.100.7', '', '::ffff:10.0.0.1', trusted), '198.51.100.7', 'a mapped trusted peer is trusted');
  t.equal(clientIp('198.51.100.7', '', '2001:db8::1', trusted), '198.51.100.7', 'an IPv6 range');
  t.equal(
    clientIp('198.51.100.7', '', '127.0.0.1', trustedProxies('')),
    '127.0.0.1',
    'the default trusts nobody, loopback included',
  );
  t.throws(() => trustedProxies('10.0.0.0/33'), /TRUSTED_PROXIES/);
  t.throws(() => trustedProxies('10.0.0.0/'), /TRUSTED_PROXIES/);
  t.throws(() => trustedProxies('10.0.0.256'), /TRUSTED_PROXIES/);
  t.throws(() => trustedProxies('example.org'), /TRUSTED_PROXIES/);
});

t.test('the hand-written IPv4 check agrees with node:net on every form', async (t) => {
  const forms = [
    '1.2.3.4',
    '0.0.0.0',
    '255.255.255.255',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '1..3.4',
    '.1.2.3',
    '1.2.3.',
    '1.2.3.4 ',
    ' 1.2.3.4',
    '1.2.3.04',
    '1.2.3.0',
    '1.2.3.a',
    '',
    '::ffff:1.2.3.4',
    '1.2.3.1000',
    '10.0.0.1',
  ];
  for (const f of forms) t.equal(dottedQuad(f) >= 0, isIPv4(f), `"${f}"`);
  t.equal(dottedQuad('10.1.2.3'), ((10 << 24) | (1 << 16) | (2 << 8) | 3) >>> 0);
  // Ranges of every prefix length against a BlockList, on addresses in, at the edges of and outside them.
  const spec = ['10.0.0.0/8', '192.0.2.1', '172.16.0.0/12', '198.51.100.128/25', '0.0.0.0/0'];
  for (const entry of spec) {
    const hops = trustedProxies(entry);
    const list = new BlockList();
    const [addr, bits] = entry.split('/');
    list.addSubnet(addr!, bits === undefined ? 32 : Number(bits), 'ipv4');
    const probes = [
      '10.0.0.0',
      '10.255.255.255',
      '11.0.0.0',
      '9.255.255.255',
      '192.0.2.1',
      '192.0.2.2',
      '172.31.255.255',
      '172.32.0.0',
      '198.51.100.127',
      '198.51.100.128',
      '198.51.100.255',
      '198.51.101.0',
      '0.0.0.0',
      '255.255.255.255',
    ];
    for (let i = 0; i < 200; i++) probes.push([0, 0, 0, 0].map(() => Math.floor(Math.random() * 256)).join('.'));
    const wrong = probes.filter((p) => hops.has(p) !== list.check(p, 'ipv4'));
    t.same(wrong, [], `${entry}: the same verdict as a BlockList on ${probes.length} addresses`);
  }
});

t.test('the manifest proxy reads the peer in binary and decides as clientIp does', async (t) => {
  t.equal(peerIPv4(new Uint8Array([203, 0, 113, 9]).buffer), dottedQuad('203.0.113.9'), 'four bytes');
  const mapped = new Uint8Array(16);
  mapped.set([0xff, 0xff, 10, 0, 0, 1], 10);
  t.equal(peerIPv4(mapped.buffer), dottedQuad('10.0.0.1'), '::ffff:10.0.0.1');
  mapped[9] = 1;
  t.equal(peerIPv4(mapped.buffer), -1, 'an IPv6 address that is not a mapped IPv4 one');
  t.equal(peerIPv4(new ArrayBuffer(0)), -1, 'no address');
  t.equal(quadText(dottedQuad('255.0.10.1')), '255.0.10.1');

  // uWS's two forms of one peer, as its HttpResponse hands them.
  const peer = (bytes: number[], text: string) =>
    ({
      getRemoteAddress: () => new Uint8Array(bytes).buffer,
      getRemoteAddressAsText: () => new TextEncoder().encode(text).buffer,
    }) as unknown as HttpResponse;
  const v4 = fc.tuple(fc.constantFrom(10, 127, 192, 203), fc.nat(255), fc.nat(255), fc.nat(255));
  const peers = fc.oneof(
    v4.map((b) => [peer(b, b.join('.')), b.join('.')] as const),
    v4.map(
      (b) =>
        [
          peer([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, ...b], `::ffff:${b.join('.')}`),
          `::ffff:${b.join('.')}`,
        ] as const,
    ),
    fc.constant([
      peer([0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], '2001:db8::1'),
      '2001:db8::1',
    ] as const),
  );
  const hop = fc.oneof(
    v4.map((b) => b.join('.')),
    fc.constantFrom('garbage', ' 10.0.0.5 ', '2001:db8::7', ''),
  );
  const forwarded = fc.array(hop, { maxLength: 3 }).map((h) => h.join(','));
  const trusted = fc
    .constantFrom('', '127.0.0.1', '10.0.0.0/8, 127.0.0.0/8', '2001:db8::/32, 192.0.0.0/8')
    .map(trustedProxies);
  fc.assert(
    fc.property(
      peers,
      forwarded,
      trusted,
      ([res, text], xff, hops) => viewerOf(res, xff, hops) === clientIp('', xff, text, hops),
    ),
    { numRuns: 5_000 },
  );
});

t.test("the DAI host's geo behind a trusted CDN edge: the viewer it names", async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim({ shape: { segmentSec: 2, windowSegments: 6, adEvery: 0, adSegments: 0 } }).start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: sim.url,
    allowPrivateOutbound: true,
    rateLimits: UNLIMITED,
    trustedProxies: '127.0.0.1',
  });
  const cases: Array<[string | undefined, string, string]> = [
    ['198.51.100.7', '198.51.100.7', 'one hop: the viewer'],
    ['6.6.6.6, 198.51.100.8', '198.51.100.8', 'two hops: the one the edge added'],
    ['garbage', '127.0.0.1', 'a malformed hop: the edge itself'],
    [undefined, '127.0.0.1', 'no header: the edge itself'],
  ];
  for (const [i, [xff, expected, what]] of cases.entries()) {
    const res = await call(
      service.url,
      'GET',
      `/dai/manifest/linear/hls/pa/event/EDGE/stream/edge${i}:LOC/variant/720p.m3u8?n=${i}`,
      {
        headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
      },
    );
    t.equal(res.status, 200, what);
    t.equal(sim.lastForwardedFor, expected, what);
  }
});

t.test('rotating X-Device-Ip from an untrusted peer changes no limit', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim({ shape: { segmentSec: 2, windowSegments: 6, adEvery: 0, adSegments: 0 } }).start();
  t.teardown(() => sim.stop());
  // New stream ids, DAI and squeezeback alike, share the `stream` budget: the geo subtest's new DAI id takes one.
  const rateLimits = { ...UNLIMITED, adproxy: { rate: 0.01, burst: BURST }, stream: { rate: 0.01, burst: BURST + 1 } };
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: sim.url,
    allowPrivateOutbound: true,
    rateLimits,
    // The ad manager and the CDN live elsewhere: the test client (loopback) is an outsider.
    trustedProxies: '10.0.0.0/8',
  });
  const tok = await token(service);
  const api = (method: string, path: string, json?: unknown) =>
    call(service.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  t.equal((await api('PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  t.equal(
    (
      await api('PUT', 'squeeze-event-config', {
        asset_id: 'SPOOF',
        source_uri: `${sim.url}/source/master.m3u8`,
        brand_config_id: 'acme',
      })
    ).status,
    200,
  );
  const spoof = (i: number) => ({
    'x-device-ip': `198.51.${i >> 8}.${i & 255}`,
    'x-forwarded-for': `203.0.113.${i & 255}`,
  });

  // First: the rotations below spend this client's budget of new stream ids.
  t.test("the DAI host's geo: the peer as X-Forwarded-For", async (t) => {
    const res = await call(service.url, 'GET', '/dai/manifest/linear/hls/pa/event/SPOOF/stream/geo1:LOC/master.m3u8', {
      headers: { 'x-forwarded-for': '6.6.6.6' },
    });
    t.equal(res.status, 200);
    t.equal(sim.lastForwardedFor, '127.0.0.1', 'the claimed 6.6.6.6 is not passed on');
  });

  t.test('/dai/adproxy', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < ROTATIONS; i++)
      statuses.push(
        (await call(service.url, 'GET', `/dai/adproxy?stream_id=spoof${i}&asset_key=SPOOF`, { headers: spoof(i) }))
          .status,
      );
    // The ad tag always answers the empty VAST (issue 25): over the limit the stream is just not registered.
    t.equal(statuses.filter((s) => s === 200).length, ROTATIONS, 'every call answered the empty VAST');
    await service.streams.flush();
    const registered = await Promise.all(
      Array.from({ length: ROTATIONS }, async (_, i) => (await api('GET', `streams/spoof${i}`)).status === 200),
    );
    t.equal(
      registered.filter(Boolean).length,
      BURST,
      `${BURST} of ${ROTATIONS} registered: the burst of one client, whatever X-Device-Ip claimed`,
    );
    const stream = await api('GET', 'streams/spoof0');
    t.equal(stream.status, 200);
    t.equal(
      stream.body.client_ip,
      '127.0.0.1',
      "the stream's client_ip (the ad request's vip) is the peer, not the claimed address",
    );
  });

  t.test('new /squeezeback streams', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < ROTATIONS; i++) {
      const res = await request(`${service.url}/squeezeback/SPOOF/master.m3u8`, { headers: spoof(i) });
      const body = await res.body.text();
      statuses.push(res.statusCode);
      if (res.statusCode === 200 && i === 0) {
        const sid = /^(\d{9})\/variant\//m.exec(body)?.[1];
        t.ok(sid, 'a stream id in the first master');
        t.equal((await api('GET', `streams/${sid}`)).body.client_ip, '127.0.0.1', 'its client_ip is the peer');
      }
    }
    t.equal(
      statuses.filter((s) => s === 200).length,
      BURST,
      `${BURST} of ${ROTATIONS} new streams: the burst of one client`,
    );
    t.equal(statuses.filter((s) => s === 429).length, ROTATIONS - BURST, 'the rest were limited');
  });
});
