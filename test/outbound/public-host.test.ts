/**
 * The other half of the outbound policy: with private outbound off, a wrapper, a beacon and a
 * feed on a public IPv4 or IPv6 host are still fetched (a host in a network namespace of the
 * test's own; see test/helpers/public-host.ts).
 */
import t from 'tap';
import { OutboundClient, OutboundPolicy, type Lookup } from '../../lib/outbound/index.js';
import { BeaconForwarder } from '../../lib/beacons/forwarder.js';
import { resolveAds } from '../../lib/ads/resolve.js';
import { publicHost, PUBLIC_V4, PUBLIC_V6 } from '../helpers/public-host.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';

t.test('public hosts are reached with private outbound off', async (t) => {
  const host = await publicHost(t);
  if (!host) return;
  const policy = new OutboundPolicy({ allowPrivate: false, trusted: [] });
  const client = new OutboundClient(policy, { timeoutMs: 3000 });
  t.teardown(() => client.close());

  t.test('a VAST wrapper target on a public IPv4 and IPv6 literal', async (t) => {
    const v4 = await resolveAds({ url: `${host.v4}/vast?via=v4` }, (url, signal) => client.text(url, signal));
    t.equal(v4.ads.length, 1, 'the VAST on the public IPv4 host was read');
    const v6 = await client.text(`${host.v6}/vast?via=v6`, AbortSignal.timeout(3000));
    t.match(v6, /<VAST/, 'and on the public IPv6 host');
  });

  t.test('a name that resolves to the public address', async (t) => {
    const lookup: Lookup = (name, _o, cb) =>
      name === 'ads.public.test'
        ? cb(null, [{ address: PUBLIC_V4, family: 4 }])
        : cb(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []);
    const named = new OutboundClient(new OutboundPolicy({ allowPrivate: false, trusted: [], lookup }), {
      timeoutMs: 3000,
    });
    t.teardown(() => named.close());
    t.match(await named.text(`http://ads.public.test:${host.port}/vast?via=name`, AbortSignal.timeout(3000)), /<VAST/);
    const v6lookup: Lookup = (_n, _o, cb) => cb(null, [{ address: PUBLIC_V6, family: 6 }]);
    t.equal(
      await new OutboundPolicy({ allowPrivate: false, trusted: [], lookup: v6lookup }).allows(
        `http://cdn.public.test:${host.port}/ad.mp4`,
      ),
      true,
    );
  });

  t.test('a beacon on the public host', async (t) => {
    const fw = new BeaconForwarder({ claim: async () => true, policy });
    fw.enqueue({ url: `${host.v4}/track?ev=start`, streamId: 's', event: 'start' });
    fw.enqueue({ url: `${host.v6}/track?ev=complete`, streamId: 's', event: 'complete' });
    await fw.idle();
    await fw.close(100);
    t.match(fw.stats, { sent: 2, failed: 0 });
  });

  t.test('an MRSS feed pulled from the public host', async (t) => {
    if (!(await needServices(t, ['postgres']))) return;
    const service = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), allowPrivateOutbound: false });
    const jwt = await token(service);
    const r = await call(service.url, 'POST', '/api/v1/global-config', {
      token: jwt,
      json: { brand_name: 'pub', feed_name: 'pub-feed', feed_uri: `${host.v4}/feed.rss`, pagination_params: {} },
    });
    t.equal(r.status, 201);
    let total = 0;
    for (let i = 0; i < 100 && total < 2; i++) {
      await new Promise((res) => setTimeout(res, 50));
      total = (await call(service.url, 'GET', '/api/v1/catalog?brand_name=pub', { token: jwt })).body
        .total_results as number;
    }
    t.equal(total, 2, 'both items of the public feed were ingested');
  });

  t.test('the host saw every request', async (t) => {
    const hits = await host.hits();
    for (const path of [
      '/vast?via=v4',
      '/vast?via=v6',
      '/vast?via=name',
      '/track?ev=start',
      '/track?ev=complete',
      '/feed.rss',
    ])
      t.ok(hits.includes(path), path);
  });
});
