/**
 * The stitching flow end to end (issue 16), real Postgres and Redis: catalog pushed as MRSS, the
 * content and the ads' HLS served from fixtures by a small origin simulator, the ad server
 * simulator answering pre, mid and post rolls. POST → cache_url served by a second instance;
 * tracking URLs signed and forwarded once through /beacon; failures answered as the issue says.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { call } from '../helpers/http.js';
import { fixturesDir } from '../helpers/fixtures.js';
import { REDIS_URL, freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { StaticHostSim } from '../../lib/sim/static-host.js';
import { checkStitched, type CheckInput } from '../helpers/stitch-checks.js';
import { parseMaster } from '../../lib/stitch/hls/master.js';

const TOKEN = 'push-token-0123456789abcdefghij';
const SECRET = 'stitch-beacon-secret-0123456789';

/** A fixture folder's playlists under a path of the origin simulator. */
function serveFolder(files: Map<string, string>, rel: string, at: string): number {
  const dir = path.join(fixturesDir, rel);
  let n = 0;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.m3u8')) continue;
    files.set(`${at}/${f}`, readFileSync(path.join(dir, f), 'utf8'));
    n++;
  }
  return n;
}

async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return cond();
}

t.test('server-side stitching flow', async (t) => {
  if (!(await needServices(t, ['postgres', 'redis']))) return;
  const files = new Map<string, string>();
  t.equal(serveFolder(files, 'hls/eyevinn-hls-splice/hls1', '/vod/hls1'), 3, 'content playlists served');
  t.equal(serveFolder(files, 'hls/eyevinn-hls-splice/ad1', '/ads/ad1'), 3, 'ad playlists served');
  files.set('/vod/broken/master.m3u8', '<html>not a playlist</html>');
  const origin = await new StaticHostSim(files).start();
  t.teardown(() => origin.stop());
  const adServer = await new AdServerSim({
    breaks: ['start', '00:00:20.000', 'end'],
    ads: [
      { id: 'ad-1', durationSec: 43, hls: `${origin.url}/ads/ad1/master.m3u8` },
      { id: 'ad-2', durationSec: 10 },
    ],
  }).start();
  t.teardown(() => adServer.stop());

  const databaseUrl = await freshSchemaUrl(t);
  const overrides = { databaseUrl, redisUrl: REDIS_URL, adServerUrl: `${adServer.url}/ad`, allowPrivateOutbound: true, beaconSecret: SECRET };
  const a = await startTestService(t, overrides);
  const jwt = await token(a);
  t.equal((await call(a.url, 'POST', '/api/v1/brand-recognition', { token: jwt, json: { brand_name: 'acme', match_type: 'header', match_name: 'X-Brand', match_value: 'acme' } })).status, 201);
  t.equal((await call(a.url, 'PUT', '/api/v1/brand-tokens/acme', { token: jwt, json: { mrss_token: TOKEN } })).status, 204);
  const mrss = `<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dfpvideo="http://api.google.com/dfpvideo"><channel>
<item><guid>vod-1</guid><dfpvideo:contentId>cid-1</dfpvideo:contentId><title>One</title>
<dfpvideo:cuepoints>20</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/hls1/master.m3u8" type="application/x-mpegURL" duration="87"/></item>
<item><guid>broken</guid><title>Broken</title><media:content url="${origin.url}/vod/broken/master.m3u8" type="application/x-mpegURL"/></item>
<item><guid>gone</guid><title>Gone</title><media:content url="${origin.url}/vod/gone/master.m3u8" type="application/x-mpegURL"/></item>
</channel></rss>`;
  const pushed = await call(a.url, 'POST', '/mrssfeed/acme', { body: mrss, headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN } });
  t.match(pushed.body, { inserted: 3 });
  // The brand rule reaches the matcher through the state store's pub/sub.
  const stitch = (base: string, stream: string, asset: string, json?: unknown, headers: Record<string, string> = { 'x-brand': 'acme' }) =>
    call(base, 'POST', `/stitch/hls/stream/${stream}/asset/${asset}`, { headers, ...(json === undefined ? {} : { json }) });
  t.ok(await until(() => a.brands.current.size === 1), 'brand rule loaded');

  const first = await stitch(a.url, 'stream-1', 'cid-1', { targeting: { genre: 'news' } });
  t.equal(first.status, 200, JSON.stringify(first.body));
  const { cache_url: cacheUrl, breaks, warnings } = first.body;
  t.match(cacheUrl, new RegExp(`^${a.url}/stitch/cache/[A-Za-z0-9_-]+/master\\.m3u8$`));
  t.same(
    breaks.map((b: { type: string; content_offset: number }) => [b.type, b.content_offset]),
    [
      ['pre', 0],
      ['mid', 27],
      ['post', 87.266],
    ],
    'pre, mid (cue point 20 s → boundary 27 s) and post roll',
  );
  t.equal(breaks[0].ads.length, 1, 'only the ad with an HLS media file plays');
  t.match(warnings, [/ad-2.*no HLS/, /ad-2.*no HLS/, /ad-2.*no HLS/]);
  const ad = breaks[1].ads[0];
  t.match(ad, { id: 'ad-1', sequence: 1, title: 'Simulated ad ad-1', ad_system: 'AdServerSim', start: 27 + breaks[0].duration, duration: breaks[0].duration });
  t.same(
    ad.tracking.map((x: { event: string }) => x.event),
    ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'],
  );
  t.ok(
    ad.tracking.every((x: { urls: string[] }) => x.urls.every((u) => u.startsWith(`${a.url}/beacon?`) && u.includes('&sig='))),
    'every tracking URL goes through /beacon, signed',
  );
  t.equal(ad.tracking.find((x: { event: string }) => x.event === 'complete').offset, ad.start + ad.duration);
  const request = adServer.requests[0]!;
  t.equal(request.query.get('vdur'), '87', 'the content duration reaches the ad request');
  t.equal(request.query.get('genre'), 'news', 'the targeting reaches the ad request');
  t.equal(request.query.get('tpos'), '20', 'the cue point is a mid-roll slot');

  t.test('the cache_url and its playlists, from this instance and from another', async (t) => {
    const master = await call(a.url, 'GET', new URL(cacheUrl).pathname);
    t.equal(master.status, 200);
    t.equal(master.headers['content-type'], 'application/vnd.apple.mpegurl');
    t.equal(master.headers['access-control-allow-origin'], '*', 'web players on other origins may read it (CORS)');
    const b = await startTestService(t, overrides);
    const again = await call(b.url, 'GET', new URL(cacheUrl).pathname);
    t.equal(again.status, 200, 'a second instance serves it from Postgres');
    t.equal(again.text, master.text);
    const head = await call(b.url, 'HEAD', new URL(cacheUrl).pathname);
    t.equal(head.status, 200);
    t.equal(head.text, '');
    const content = {
      url: `${origin.url}/vod/hls1/master.m3u8`,
      master: files.get('/vod/hls1/master.m3u8')!,
      playlists: new Map([...files].filter(([p]) => p.startsWith('/vod/hls1/') && !p.endsWith('master.m3u8')).map(([p, v]) => [origin.url + p, v])),
    };
    const adSrc = {
      url: `${origin.url}/ads/ad1/master.m3u8`,
      master: files.get('/ads/ad1/master.m3u8')!,
      playlists: new Map([...files].filter(([p]) => p.startsWith('/ads/ad1/') && !p.endsWith('master.m3u8')).map(([p, v]) => [origin.url + p, v])),
    };
    const playlists = new Map<string, string>();
    for (const v of parseMaster(cacheUrl, master.text).variants) {
      const r = await call(b.url, 'GET', new URL(v.uri).pathname);
      t.equal(r.status, 200, `${v.uri} served`);
      playlists.set(v.uri.split('/').pop()!, r.text);
    }
    const pods = breaks.map((x: { ads: unknown[] }) => ({ ids: [], contentOffset: 0, start: 0, duration: 0, ads: x.ads }));
    const input: CheckInput = { content, ads: [adSrc], fillerUri: 'none', result: { master: master.text, playlists, pods, contentDuration: 0, skipped: [] } };
    checkStitched(t, input);
    const same = await stitch(b.url, 'stream-1', 'vod-1');
    t.equal(same.status, 200);
    t.equal(same.body.cache_url, cacheUrl, 'the same stream and asset (by guid or content id) answers the same cache_url, from any instance');
    t.equal(adServer.requests.length, 1, 'and asks the ad server nothing more');
  });

  t.test('tracking URLs are forwarded once through /beacon', async (t) => {
    const impression = breaks[0].ads[0].tracking.find((x: { event: string }) => x.event === 'impression').urls[0];
    const path = impression.slice(a.url.length);
    t.equal((await call(a.url, 'GET', path)).status, 200);
    t.equal((await call(a.url, 'GET', path)).status, 200, 'a repeat is accepted');
    t.ok(await until(() => adServer.hitCount('impression', 'ad-1') >= 1), 'forwarded to the ad server');
    await new Promise((r) => setTimeout(r, 300));
    t.equal(adServer.hitCount('impression', 'ad-1'), 1, 'once');
    t.equal((await call(a.url, 'GET', path.replace(/sig=[^&]+/, 'sig=' + 'A'.repeat(43)))).status, 400, 'a forged signature is refused');
  });

  t.test('failures', async (t) => {
    const noBrand = await stitch(a.url, 'stream-x', 'cid-1', undefined, {});
    t.equal(noBrand.status, 400);
    t.equal(noBrand.headers['content-type'], 'application/problem+json');
    t.equal((await stitch(a.url, 'stream-x', 'nope')).status, 404, 'unknown asset');
    t.equal((await call(a.url, 'POST', '/stitch/smil/stream/s/asset/cid-1', { headers: { 'x-brand': 'acme' } })).status, 404, 'unknown protocol');
    t.equal((await stitch(a.url, 'stream-x', 'cid-1', { targeting: { a: 1 } })).status, 400, 'targeting values are strings');
    t.equal((await stitch(a.url, 'stream-x', 'cid-1', { extra: true })).status, 400, 'unknown body fields');
    t.equal((await stitch(a.url, 'stream-x', 'cid-1', { content_uri: 'https://elsewhere.example/x.m3u8' })).status, 400, 'content_uri must be one of the asset renditions');
    t.equal((await stitch(a.url, 'stream-x', 'broken')).status, 422, 'an unparseable content manifest');
    t.equal((await stitch(a.url, 'stream-x', 'gone')).status, 502, 'the content origin answers 404');
    adServer.mode = 'garbage';
    const garbage = await stitch(a.url, 'stream-garbage', 'cid-1');
    t.equal(garbage.status, 200);
    t.same(garbage.body.breaks, [], 'garbage from the ad server: the content without ads');
    t.match(garbage.body.warnings, [/no ads: ad server answered/]);
    const plain = await call(a.url, 'GET', new URL(garbage.body.cache_url).pathname);
    t.notMatch(plain.text, /DISCONTINUITY|CUE-OUT/);
    adServer.mode = 'error';
    t.match((await stitch(a.url, 'stream-error', 'cid-1')).body, { breaks: [], warnings: [/no ads/] }, 'ad server down');
    adServer.mode = 'ok';
    origin.mode = 'error';
    t.equal((await stitch(a.url, 'stream-origin-down', 'cid-1')).status, 502, 'content origin failing');
    origin.mode = 'ok';
  });

  t.test('an expired session answers 404', async (t) => {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    t.teardown(() => sql.end());
    await sql`update stitch_session set expires_at = now() - interval '1 second'`;
    const c = await startTestService(t, overrides);
    const gone = await call(c.url, 'GET', new URL(cacheUrl).pathname);
    t.equal(gone.status, 404);
    t.equal(gone.headers['content-type'], 'application/problem+json');
  });
});
