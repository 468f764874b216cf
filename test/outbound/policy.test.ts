/**
 * The outbound policy at connect time, with real servers on loopback addresses: what a fetch the
 * service makes on its own account may reach when ALLOW_PRIVATE_OUTBOUND is off.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { request } from 'undici';
import {
  OutboundClient,
  OutboundError,
  OutboundPolicy,
  OutboundRefused,
  type Lookup,
} from '../../lib/outbound/index.js';
import { resolveAds } from '../../lib/ads/resolve.js';
import { Registry } from '../../lib/metrics/index.js';

interface Hit {
  path: string;
}

async function server(
  t: Test,
  host: string,
  answer: (path: string, port: number) => string = () => 'ok',
): Promise<{ url: string; port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  const s = http.createServer((req, res) => {
    hits.push({ path: req.url ?? '' });
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(answer(req.url ?? '', (s.address() as AddressInfo).port));
  });
  await new Promise<void>((resolve) => s.listen(0, host, resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      }),
  );
  const port = (s.address() as AddressInfo).port;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port, hits };
}

function fakeLog() {
  const warnings: Array<{ host: string; reason: string }> = [];
  const log = {
    warn: (o: { host: string; reason: string }) => warnings.push(o),
    debug: () => undefined,
    info: () => undefined,
    error: () => undefined,
  };
  return { log: log as never, warnings };
}

const vmapWithWrapper = (wrapper: string) => `<?xml version="1.0"?>
<vmap:VMAP xmlns:vmap="http://www.iab.net/videosuite/vmap" version="1.0">
  <vmap:AdBreak timeOffset="start" breakType="linear" breakId="pre">
    <vmap:AdSource id="pre" allowMultipleAds="true" followRedirects="true">
      <vmap:AdTagURI templateType="vast4"><![CDATA[${wrapper}]]></vmap:AdTagURI>
    </vmap:AdSource>
  </vmap:AdBreak>
</vmap:VMAP>`;

t.test(
  'the reported SSRF: a VMAP from the configured ad server whose wrapper points at 127.0.0.2 is not fetched',
  async (t) => {
    const inside = await server(t, '127.0.0.2', () => '<VAST version="4.0"/>');
    const adServer = await server(t, '127.0.0.1', () => vmapWithWrapper(`${inside.url}/secret`));
    const { log, warnings } = fakeLog();
    const metrics = new Registry();
    const policy = new OutboundPolicy({ allowPrivate: false, trusted: [adServer.url], log, metrics });
    const client = new OutboundClient(policy, { timeoutMs: 3000 });
    t.teardown(() => client.close());
    const result = await resolveAds({ url: `${adServer.url}/ad?s=1` }, (url, signal) => client.text(url, signal));
    t.equal(adServer.hits.length, 1, 'the configured ad server (private, trusted by name) was asked');
    t.equal(inside.hits.length, 0, 'the wrapper on 127.0.0.2 was never reached');
    t.same(result.ads, []);
    t.equal(warnings.length, 1, 'logged once');
    t.match(warnings[0], { host: inside.url.slice(7), reason: /loopback/ });
    t.match(metrics.render(), /outbound_refused_total 1/);
  },
);

t.test(
  'the check runs at connect time: an agent of the policy refuses IP literals and names that resolve privately',
  async (t) => {
    const inside = await server(t, '127.0.0.2');
    const v6 = await server(t, '::1');
    const { log, warnings } = fakeLog();
    const policy = new OutboundPolicy({ allowPrivate: false, trusted: [], log });
    const agent = policy.agent({ timeoutMs: 2000, maxResponseSize: 1024 });
    t.teardown(() => policy.close());
    for (const url of [
      `${inside.url}/a`,
      `http://localhost:${inside.port}/b`,
      `${v6.url}/c`,
      `http://[::ffff:127.0.0.2]:${inside.port}/d`,
      `http://2130706434:${inside.port}/e`,
    ]) {
      // undici directly, no assertUrl first: only the connector stands in the way.
      await t.rejects(request(url, { dispatcher: agent }), { code: 'OUTBOUND_REFUSED' }, url);
    }
    t.equal(inside.hits.length + v6.hits.length, 0, 'no connection was made');
    // 2130706434 is 127.0.0.2 spelled as a number: the same host as the first, so not logged again.
    t.equal(warnings.length, 4, 'one warning per host and reason');
    await t.rejects(request(`${inside.url}/a`, { dispatcher: agent }), { code: 'OUTBOUND_REFUSED' });
    t.equal(warnings.length, 4, 'a repeat is counted, not logged again');
  },
);

t.test('names are resolved by the policy and judged by every address they resolve to', async (t) => {
  const inside = await server(t, '127.0.0.2');
  let calls = 0;
  const lookup: Lookup = (_host, _opts, cb) => {
    calls++;
    cb(null, [{ address: '127.0.0.2', family: 4 }]);
  };
  const policy = new OutboundPolicy({ allowPrivate: false, trusted: [], lookup });
  const client = new OutboundClient(policy, { timeoutMs: 2000 });
  t.teardown(() => client.close());
  await t.rejects(client.text(`http://rebind.example:${inside.port}/`, AbortSignal.timeout(2000)), { code: 'refused' });
  t.equal(inside.hits.length, 0);
  t.ok(calls >= 1, 'the policy resolver was the one asked');

  const mixed: Lookup = (_host, _opts, cb) =>
    cb(null, [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ]);
  const strict = new OutboundPolicy({ allowPrivate: false, trusted: [], lookup: mixed });
  t.equal(
    await strict.allows('http://mixed.example/x'),
    false,
    'one private answer among public ones refuses the name',
  );
  const pub: Lookup = (_host, _opts, cb) =>
    cb(null, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
  t.equal(
    await new OutboundPolicy({ allowPrivate: false, trusted: [], lookup: pub }).allows('http://cdn.example/ad.mp4'),
    true,
    'public answers pass',
  );
  t.equal(await strict.allows('http://8.8.8.8/ad.mp4'), true, 'a public literal passes');
  t.equal(await strict.allows('http://169.254.169.254/latest'), false, 'cloud metadata does not');
});

t.test('with private outbound allowed, and for trusted collaborators, loopback is reached', async (t) => {
  const inside = await server(t, '127.0.0.2', () => 'hello');
  const open = new OutboundClient(new OutboundPolicy({ allowPrivate: true, trusted: [] }), { timeoutMs: 2000 });
  t.teardown(() => open.close());
  t.equal(await open.text(`${inside.url}/x`, AbortSignal.timeout(2000)), 'hello');
  const trusted = new OutboundClient(new OutboundPolicy({ allowPrivate: false, trusted: [inside.url] }), {
    timeoutMs: 2000,
  });
  t.teardown(() => trusted.close());
  t.equal(await trusted.text(`${inside.url}/y`, AbortSignal.timeout(2000)), 'hello');
  await t.rejects(
    trusted.text(`http://127.0.0.3:${inside.port}/z`, AbortSignal.timeout(2000)),
    OutboundError,
    'the trust is for that host:port only',
  );
  t.equal(inside.hits.length, 2);
});

t.test('refusals are typed', async (t) => {
  const policy = new OutboundPolicy({ allowPrivate: false, trusted: [] });
  const err = t.throws(() => policy.assertUrl('http://10.0.0.1/')) as OutboundRefused;
  t.ok(err instanceof OutboundRefused);
  t.equal(err.code, 'OUTBOUND_REFUSED');
  t.equal(err.host, '10.0.0.1');
  t.match(err.reason, /private/);
});
