import t from 'tap';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { request } from 'undici';
import { AdServerSim } from '../../lib/sim/ad-server.js';

const VAST_NS = 'http://www.iab.com/VAST';
const VMAP_NS = 'http://www.iab.net/videosuite/vmap';

async function get(url: string) {
  const res = await request(url);
  return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text: await res.body.text() };
}

function parse(xml: string) {
  return new DOMParser().parseFromString(xml, 'text/xml');
}

const text = (e: Element | null | undefined) => (e?.textContent ?? '').trim();
const all = (e: { getElementsByTagNameNS(ns: string, n: string): ArrayLike<Element> }, ns: string, name: string) =>
  Array.from(e.getElementsByTagNameNS(ns, name));

t.test('ok: a VMAP with one linear pre-roll holding an inline VAST 4.0 pod', async (t) => {
  const sim = await new AdServerSim().start();
  t.teardown(() => sim.stop());
  const r = await get(`${sim.url}/ad/some/tag?s=st-1&cust_params=a%3D1`);
  t.equal(r.status, 200);
  t.match(r.type, /xml/);
  const doc = parse(r.text);
  t.equal(doc.documentElement!.localName, 'VMAP');
  t.equal(doc.documentElement!.getAttribute('version'), '1.0');
  const breaks = all(doc, VMAP_NS, 'AdBreak');
  t.equal(breaks.length, 1);
  t.equal(breaks[0]!.getAttribute('breakType'), 'linear');
  t.equal(breaks[0]!.getAttribute('timeOffset'), 'start');
  const vast = all(doc, VAST_NS, 'VAST');
  t.equal(vast.length, 1);
  t.equal(vast[0]!.getAttribute('version'), '4.0');
  const ads = all(doc, VAST_NS, 'Ad');
  t.same(
    ads.map((a) => [a.getAttribute('id'), a.getAttribute('sequence')]),
    [
      ['ad-1', '1'],
      ['ad-2', '2'],
    ],
  );
  t.same(
    ads.map((a) => text(all(a, VAST_NS, 'Duration')[0])),
    ['00:00:15.000', '00:00:10.000'],
  );
  const mf = all(ads[0]!, VAST_NS, 'MediaFile')[0]!;
  t.equal(text(mf), `${sim.url}/creatives/ad-1.mp4`);
  t.equal(mf.getAttribute('delivery'), 'progressive');
  t.equal(mf.getAttribute('type'), 'video/mp4');
  t.equal(text(all(ads[1]!, VAST_NS, 'Impression')[0]), `${sim.url}/track?ad=ad-2&ev=impression&s=st-1`);
  const tracking = all(ads[0]!, VAST_NS, 'Tracking');
  t.same(
    tracking.map((e) => e.getAttribute('event')),
    ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'],
  );
  t.equal(text(tracking[4]), `${sim.url}/track?ad=ad-1&ev=complete&s=st-1`);
  t.equal(sim.requests.length, 1);
  t.equal(sim.requests[0]!.path, '/ad/some/tag');
  t.equal(sim.requests[0]!.query.get('cust_params'), 'a=1');
  t.type(sim.requests[0]!.at, 'number');
  const noStream = parse((await get(`${sim.url}/ad`)).text);
  t.match(text(all(noStream, VAST_NS, 'Impression')[0]), /&s=none$/, 'no stream id → s=none');
});

t.test('ads can be overridden; ids are escaped', async (t) => {
  const sim = await new AdServerSim({ ads: [{ id: 'x&"<y', durationSec: 7.5 }] }).start();
  t.teardown(() => sim.stop());
  const doc = parse((await get(`${sim.url}/ad?stream_id=abc`)).text);
  const ads = all(doc, VAST_NS, 'Ad');
  t.equal(ads.length, 1);
  t.equal(ads[0]!.getAttribute('id'), 'x&"<y');
  t.equal(text(all(ads[0]!, VAST_NS, 'Duration')[0]), '00:00:07.500');
  t.equal(text(all(ads[0]!, VAST_NS, 'MediaFile')[0]), `${sim.url}/creatives/x%26%22%3Cy.mp4`);
  sim.ads = [
    { id: 'a', durationSec: 30 },
    { id: 'b', durationSec: 15 },
    { id: 'c', durationSec: 15 },
  ];
  t.equal(all(parse((await get(`${sim.url}/ad`)).text), VAST_NS, 'Ad').length, 3, 'ads can change between requests');
});

t.test('tracking hits, creatives, unknown paths', async (t) => {
  const sim = await new AdServerSim().start();
  t.teardown(() => sim.stop());
  const hit = await get(`${sim.url}/track?ad=ad-1&ev=start&s=st-9&cb=1`);
  t.equal(hit.status, 200);
  t.equal(hit.type, 'image/gif');
  await get(`${sim.url}/track?ad=ad-2&ev=start&s=st-9`);
  await get(`${sim.url}/track?ad=ad-1&ev=complete&s=st-9`);
  t.equal(sim.hits.length, 3);
  t.match(sim.hits[0], { ad: 'ad-1', ev: 'start', s: 'st-9' });
  t.equal(sim.hits[0]!.query.get('cb'), '1');
  t.equal(sim.hitCount('start'), 2);
  t.equal(sim.hitCount('start', 'ad-2'), 1);
  t.equal(sim.hitCount('midpoint'), 0);
  t.equal(sim.requests.length, 0, 'tracking is not an ad request');
  await get(`${sim.url}/track?ad=ad-1&ev=start&s=st-9&cb=2`);
  t.same(
    Object.fromEntries(sim.beaconCounts()),
    { 'ad-1|start|st-9': 2, 'ad-2|start|st-9': 1, 'ad-1|complete|st-9': 1 },
    'counted per (ad, event, stream), whatever else the query carries',
  );
  t.same(AdServerSim.TRACKED_EVENTS, ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete']);
  sim.failTracks = 1;
  t.equal((await get(`${sim.url}/track?ad=a&ev=start`)).status, 500);
  t.equal((await get(`${sim.url}/track?ad=a&ev=start`)).status, 200);
  sim.trackStatus = 404;
  t.equal((await get(`${sim.url}/track?ad=a&ev=start`)).status, 404);
  const mp4 = await request(`${sim.url}/creatives/ad-1.mp4`);
  t.equal(mp4.statusCode, 200);
  t.equal(mp4.headers['content-type'], 'video/mp4');
  t.ok((await mp4.body.arrayBuffer()).byteLength > 0);
  t.equal((await get(`${sim.url}/nope`)).status, 404);
  t.equal((await get(`${sim.url}/advert`)).status, 404, '/advert is not under /ad');
});

t.test('failure modes', async (t) => {
  const sim = await new AdServerSim({ slowMs: 150 }).start();
  t.teardown(() => sim.stop());
  sim.mode = 'error';
  t.equal((await get(`${sim.url}/ad`)).status, 500);
  sim.mode = 'garbage';
  const g = await get(`${sim.url}/ad`);
  t.equal(g.status, 200);
  t.notMatch(g.text, /<\?xml|VMAP|VAST/);
  sim.mode = 'empty';
  const e = parse((await get(`${sim.url}/ad`)).text);
  t.equal(e.documentElement!.localName, 'VMAP');
  t.equal(all(e, VMAP_NS, 'AdBreak').length, 0);
  sim.mode = 'slow';
  const started = Date.now();
  const s = await get(`${sim.url}/ad`);
  t.equal(s.status, 200);
  t.ok(Date.now() - started >= 140, 'answered after slowMs');
  t.equal(all(parse(s.text), VAST_NS, 'Ad').length, 2);
  t.equal(sim.requests.length, 4, 'failed requests are recorded too');
});

t.test('stop() does not wait for a slow answer', async (t) => {
  const sim = await new AdServerSim({ mode: 'slow', slowMs: 60_000 }).start();
  const pending = request(`${sim.url}/ad`)
    .then((r) => r.body.text())
    .catch((err: Error) => err);
  await new Promise((r) => setTimeout(r, 50));
  const started = Date.now();
  await sim.stop();
  t.ok(Date.now() - started < 1000);
  t.type(await pending, Error);
});

t.test('wrapper: VMAP AdTagURI → VAST Wrapper → inline VAST', async (t) => {
  const sim = await new AdServerSim({ mode: 'wrapper' }).start();
  t.teardown(() => sim.stop());
  const vmap = parse((await get(`${sim.url}/ad?s=st-2`)).text);
  t.equal(all(vmap, VMAP_NS, 'VASTAdData').length, 0);
  const tagUri = text(all(vmap, VMAP_NS, 'AdTagURI')[0]);
  t.equal(tagUri, `${sim.url}/vast/wrapper?s=st-2`);
  const wrapper = parse((await get(tagUri)).text);
  const w = all(wrapper, VAST_NS, 'Wrapper');
  t.equal(w.length, 1);
  t.equal(text(all(wrapper, VAST_NS, 'Impression')[0]), `${sim.url}/track?ad=wrapper-1&ev=impression&s=st-2`);
  t.equal(all(wrapper, VAST_NS, 'Tracking').length, 5);
  const inlineUri = text(all(wrapper, VAST_NS, 'VASTAdTagURI')[0]);
  t.equal(inlineUri, `${sim.url}/vast/inline?s=st-2`);
  const inline = parse((await get(inlineUri)).text);
  t.equal(all(inline, VAST_NS, 'InLine').length, 2);
  t.equal(text(all(inline, VAST_NS, 'Impression')[0]), `${sim.url}/track?ad=ad-1&ev=impression&s=st-2`);
  t.same(
    sim.requests.map((r) => r.path),
    ['/ad', '/vast/wrapper', '/vast/inline'],
  );
});
