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
import { fixture, fixturesDir } from '../helpers/fixtures.js';
import { REDIS_URL, freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { StaticHostSim } from '../../lib/sim/static-host.js';
import {
  checkDash,
  checkInterstitials,
  checkStitched,
  dateRangeAttrs,
  type CheckInput,
} from '../helpers/stitch-checks.js';
import { parseMaster } from '../../lib/stitch/hls/master.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

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
  // DASH: content and two ads from real fixtures (the second ad has two Periods of its own).
  const dashContent = fixture('dash/eyevinn-dash-mpd/go-dash-fixtures/segment_timeline.mpd');
  files.set('/vod/dash1/manifest.mpd', dashContent);
  files.set('/ads/dash/ad1.mpd', fixture('dash/dash-mpd-rs/ad-insertion-testcase6-av1.mpd'));
  files.set('/ads/dash/ad2.mpd', fixture('dash/dash-mpd-rs/ad-insertion-testcase6-av2.mpd'));
  const origin = await new StaticHostSim(files).start();
  t.teardown(() => origin.stop());
  const adServer = await new AdServerSim({
    breaks: ['start', '00:00:20.000', 'end'],
    ads: [
      { id: 'ad-1', durationSec: 43, hls: `${origin.url}/ads/ad1/master.m3u8`, dash: `${origin.url}/ads/dash/ad1.mpd` },
      { id: 'ad-2', durationSec: 10, dash: `${origin.url}/ads/dash/ad2.mpd` },
    ],
  }).start();
  t.teardown(() => adServer.stop());

  const databaseUrl = await freshSchemaUrl(t);
  const overrides = {
    databaseUrl,
    redisUrl: REDIS_URL,
    adServerUrl: `${adServer.url}/ad`,
    allowPrivateOutbound: true,
    beaconSecret: SECRET,
  };
  const a = await startTestService(t, overrides);
  const jwt = await token(a);
  t.equal(
    (
      await call(a.url, 'POST', '/api/v1/brand-recognition', {
        token: jwt,
        json: { brand_name: 'acme', match_type: 'header', match_name: 'X-Brand', match_value: 'acme' },
      })
    ).status,
    201,
  );
  t.equal(
    (await call(a.url, 'PUT', '/api/v1/brand-tokens/acme', { token: jwt, json: { mrss_token: TOKEN } })).status,
    204,
  );
  const mrss = `<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dfpvideo="http://api.google.com/dfpvideo"><channel>
<item><guid>vod-1</guid><dfpvideo:contentId>cid-1</dfpvideo:contentId><title>One</title>
<dfpvideo:cuepoints>20</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/hls1/master.m3u8" type="application/x-mpegURL" duration="87"/></item>
<item><guid>vod-dash</guid><dfpvideo:contentId>cid-dash</dfpvideo:contentId><title>Dash</title>
<dfpvideo:cuepoints>20</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/dash1/manifest.mpd" type="application/dash+xml" duration="65"/></item>
<item><guid>broken</guid><title>Broken</title><media:content url="${origin.url}/vod/broken/master.m3u8" type="application/x-mpegURL"/></item>
<item><guid>gone</guid><title>Gone</title><media:content url="${origin.url}/vod/gone/master.m3u8" type="application/x-mpegURL"/></item>
</channel></rss>`;
  const pushed = await call(a.url, 'POST', '/mrssfeed/acme', {
    body: mrss,
    headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN },
  });
  t.match(pushed.body, { inserted: 4 });
  // The brand rule reaches the matcher through the state store's pub/sub.
  const stitch = (
    base: string,
    stream: string,
    asset: string,
    json?: unknown,
    headers: Record<string, string> = { 'x-brand': 'acme' },
  ) =>
    call(base, 'POST', `/stitch/hls/stream/${stream}/asset/${asset}`, {
      headers,
      ...(json === undefined ? {} : { json }),
    });
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
  // ad-2 has no HLS media file but an MP4 (the simulator's stub): it is queued for conditioning (issue 26).
  t.match(warnings, [
    /ad-2.*left out this time: conditioning job/,
    /ad-2.*left out this time: conditioning job/,
    /ad-2.*left out this time: conditioning job/,
  ]);
  const ad = breaks[1].ads[0];
  t.match(ad, {
    id: 'ad-1',
    sequence: 1,
    title: 'Simulated ad ad-1',
    ad_system: 'AdServerSim',
    start: 27 + breaks[0].duration,
    duration: breaks[0].duration,
  });
  t.same(
    ad.tracking.map((x: { event: string }) => x.event),
    ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'],
  );
  t.ok(
    ad.tracking.every((x: { urls: string[] }) =>
      x.urls.every((u) => u.startsWith(`${a.url}/beacon?`) && u.includes('&sig=')),
    ),
    'every tracking URL goes through /beacon, signed',
  );
  t.equal(ad.tracking.find((x: { event: string }) => x.event === 'complete').offset, ad.start + ad.duration);
  const request = adServer.requests[0]!;
  t.equal(request.query.get('vdur'), '87', 'the content duration reaches the ad request');
  t.equal(request.query.get('genre'), 'news', 'the targeting reaches the ad request');
  t.equal(request.query.get('tpos'), '20', 'the cue point is a mid-roll slot');

  t.test('the answer is the one the OpenAPI document describes (issue 25 item 8)', async (t) => {
    const doc = (await call(a.url, 'GET', '/api/v1/openapi.json')).body;
    const op = doc.paths['/stitch/{protocol}/stream/{stream_id}/asset/{asset_id}'].post;
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    const validate = ajv.compile({
      ...op.responses['200'].content['application/json'].schema,
      components: doc.components,
    });
    t.ok(validate(first.body), 'the 200 answer validates', { errors: validate.errors?.slice(0, 3) });
    t.ok(op.responses['200'].headers['X-Request-Id'], 'X-Request-Id described');
    t.ok(first.headers['x-request-id'], 'and sent');
  });

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
      playlists: new Map(
        [...files]
          .filter(([p]) => p.startsWith('/vod/hls1/') && !p.endsWith('master.m3u8'))
          .map(([p, v]) => [origin.url + p, v]),
      ),
    };
    const adSrc = {
      url: `${origin.url}/ads/ad1/master.m3u8`,
      master: files.get('/ads/ad1/master.m3u8')!,
      playlists: new Map(
        [...files]
          .filter(([p]) => p.startsWith('/ads/ad1/') && !p.endsWith('master.m3u8'))
          .map(([p, v]) => [origin.url + p, v]),
      ),
    };
    const playlists = new Map<string, string>();
    for (const v of parseMaster(cacheUrl, master.text).variants) {
      const r = await call(b.url, 'GET', new URL(v.uri).pathname);
      t.equal(r.status, 200, `${v.uri} served`);
      playlists.set(v.uri.split('/').pop()!, r.text);
    }
    const pods = breaks.map((x: { ads: unknown[] }) => ({
      ids: [],
      contentOffset: 0,
      start: 0,
      duration: 0,
      ads: x.ads,
    }));
    const input: CheckInput = {
      content,
      ads: [adSrc],
      fillerUri: 'none',
      result: { master: master.text, playlists, pods, contentDuration: 0, skipped: [] },
    };
    checkStitched(t, input);
    const same = await stitch(a.url, 'stream-1', 'vod-1');
    t.equal(same.status, 200);
    t.equal(
      same.body.cache_url,
      cacheUrl,
      'the same stream and asset (by guid or content id) answers the same cache_url from the instance that stitched it',
    );
    t.equal(adServer.requests.length, 1, 'and asks the ad server nothing more');
    // Another instance does not hold the answer (only the plan is stored, issue 24): it stitches anew.
    const elsewhere = await stitch(b.url, 'stream-1', 'vod-1');
    t.equal(elsewhere.status, 200);
    t.not(elsewhere.body.cache_url, cacheUrl, 'another instance stitches the request anew');
    t.equal(adServer.requests.length, 2, 'with its own ad request');
    t.equal(
      (await call(b.url, 'GET', new URL(cacheUrl).pathname)).text,
      master.text,
      'the first cache_url still plays',
    );
    t.equal(
      (await stitch(b.url, 'stream-1', 'vod-1')).body.cache_url,
      elsewhere.body.cache_url,
      'and answers its own session again',
    );
  });

  t.test('tracking URLs are forwarded once through /beacon', async (t) => {
    const impression = breaks[0].ads[0].tracking.find((x: { event: string }) => x.event === 'impression').urls[0];
    const path = impression.slice(a.url.length);
    t.equal((await call(a.url, 'GET', path)).status, 200);
    t.equal((await call(a.url, 'GET', path)).status, 200, 'a repeat is accepted');
    t.ok(await until(() => adServer.hitCount('impression', 'ad-1') >= 1), 'forwarded to the ad server');
    await new Promise((r) => setTimeout(r, 300));
    t.equal(adServer.hitCount('impression', 'ad-1'), 1, 'once');
    t.equal(
      (await call(a.url, 'GET', path.replace(/sig=[^&]+/, 'sig=' + 'A'.repeat(43)))).status,
      400,
      'a forged signature is refused',
    );
  });

  const post = (base: string, path: string, json?: unknown) =>
    call(base, 'POST', path, { headers: { 'x-brand': 'acme' }, ...(json === undefined ? {} : { json }) });
  const hlsContent = () => ({
    url: `${origin.url}/vod/hls1/master.m3u8`,
    master: files.get('/vod/hls1/master.m3u8')!,
    playlists: new Map(
      [...files]
        .filter(([p]) => p.startsWith('/vod/hls1/') && !p.endsWith('master.m3u8'))
        .map(([p, v]) => [origin.url + p, v]),
    ),
  });

  t.test('?interstitials=1: the content untouched, each pod an interstitial with its asset list', async (t) => {
    const asked = adServer.requests.length;
    const r = await post(a.url, '/stitch/hls/stream/stream-1/asset/cid-1?interstitials=1');
    t.equal(r.status, 200, JSON.stringify(r.body));
    const url: string = r.body.cache_url;
    t.match(url, new RegExp(`^${a.url}/stitch/cache/[A-Za-z0-9_-]+/master\\.m3u8$`));
    t.not(url, cacheUrl, 'cached apart from the inline result of the same stream and asset');
    t.equal(adServer.requests.length, asked + 1, 'its own ad request');
    t.same(
      r.body.breaks.map((b: { type: string; start: number; content_offset: number }) => [
        b.type,
        b.start,
        b.content_offset,
      ]),
      [
        ['pre', 0, 0],
        ['mid', 27, 27],
        ['post', 87.266, 87.266],
      ],
      'the same pods at the same content offsets; start on the content timeline',
    );
    const ad = r.body.breaks[1].ads[0];
    t.equal(ad.start, 27, 'the ad starts at its break');
    t.ok(
      ad.tracking.every((x: { urls: string[] }) =>
        x.urls.every((u) => u.startsWith(`${a.url}/beacon?`) && u.includes('&sig=')),
      ),
      'tracking URLs signed through /beacon',
    );
    // Everything read from a second instance (Postgres), asset lists with the query hls.js adds.
    const b = await startTestService(t, overrides);
    const master = await call(b.url, 'GET', new URL(url).pathname);
    t.equal(master.status, 200);
    const playlists = new Map<string, string>();
    const assetLists = new Map<string, string>();
    for (const v of parseMaster(url, master.text).variants) {
      const m = await call(b.url, 'GET', new URL(v.uri).pathname);
      t.equal(m.status, 200, `${v.uri} served`);
      playlists.set(v.uri.split('/').pop()!, m.text);
      for (const line of m.text.split('\n').filter((l) => l.startsWith('#EXT-X-DATERANGE:'))) {
        const list = dateRangeAttrs(line)['X-ASSET-LIST']!;
        if (assetLists.has(list)) continue;
        t.ok(list.startsWith(url.replace(/master\.m3u8$/, 'assets/')), 'the asset list under the cache prefix');
        const got = await call(b.url, 'GET', `${new URL(list).pathname}?_HLS_primary_id=abc&_HLS_start_offset=0`);
        t.equal(got.status, 200, `${list} served`);
        t.equal(got.headers['content-type'], 'application/json');
        assetLists.set(list, got.text);
      }
    }
    t.equal(assetLists.size, 3, 'one asset list per pod');
    t.same(
      JSON.parse([...assetLists.values()][0]!).ASSETS[0].URI,
      `${origin.url}/ads/ad1/master.m3u8`,
      "the ad's HLS MediaFile",
    );
    const pods = r.body.breaks.map((x: { content_offset: number; duration: number }) => ({
      contentOffset: x.content_offset,
      duration: x.duration,
    }));
    checkInterstitials(t, { content: hlsContent(), master: master.text, playlists, assetLists, pods });
    t.equal(
      (await call(b.url, 'GET', new URL(url).pathname.replace('master.m3u8', 'assets/9.json'))).status,
      404,
      'no such asset list',
    );
    const again = await post(a.url, '/stitch/hls/stream/stream-1/asset/vod-1?interstitials=true');
    t.equal(again.body.cache_url, url, 'asked again (where it was stitched): the same cache_url');
    t.equal(
      (await post(a.url, '/stitch/hls/stream/stream-1/asset/cid-1?interstitials=0')).body.cache_url,
      cacheUrl,
      '?interstitials=0 is the inline result',
    );
    t.equal(
      (await post(a.url, '/stitch/hls/stream/stream-1/asset/cid-1?interstitials=yes')).status,
      400,
      'interstitials: 1, true, 0 or false',
    );
    t.equal((await post(a.url, '/stitch/dash/stream/stream-1/asset/cid-dash?interstitials=1')).status, 400, 'HLS only');
  });

  t.test('DASH: pre, mid and post rolls as Periods; cache_url from a second instance; beacons once', async (t) => {
    const r = await post(a.url, '/stitch/dash/stream/stream-d/asset/cid-dash');
    t.equal(r.status, 200, JSON.stringify(r.body));
    const url: string = r.body.cache_url;
    t.match(url, new RegExp(`^${a.url}/stitch/cache/[A-Za-z0-9_-]+/manifest\\.mpd$`));
    t.notOk(r.body.warnings, 'every ad has a DASH media file');
    const breaks = r.body.breaks as Array<{
      id: string;
      type: string;
      start: number;
      duration: number;
      content_offset: number;
      ads: Array<{ id: string; start: number; duration: number; tracking: Array<{ event: string; urls: string[] }> }>;
    }>;
    t.same(
      breaks.map((b) => [b.type, b.content_offset, b.ads.map((x) => [x.id, x.duration])]),
      [
        [
          'pre',
          0,
          [
            ['ad-1', 24],
            ['ad-2', 24],
          ],
        ],
        [
          'mid',
          22.856,
          [
            ['ad-1', 24],
            ['ad-2', 24],
          ],
        ],
        [
          'post',
          65.063,
          [
            ['ad-1', 24],
            ['ad-2', 24],
          ],
        ],
      ],
      'cue point 20 s → the video boundary at 22.856 s; each ad as long as its MPD',
    );
    t.same(
      breaks.map((b) => b.start),
      [0, 22.856 + 48, 65.063 + 96],
      'starts on the stitched timeline',
    );
    const c = await startTestService(t, overrides);
    const mpd = await call(c.url, 'GET', new URL(url).pathname);
    t.equal(mpd.status, 200, 'a second instance serves it from Postgres');
    t.equal(mpd.headers['content-type'], 'application/dash+xml');
    t.equal(mpd.text, (await call(a.url, 'GET', new URL(url).pathname)).text, 'the same MPD from both');
    checkDash(t, dashContent, {
      mpd: mpd.text,
      pods: breaks.map((b) => ({
        ids: b.id.split('+'),
        contentOffset: b.content_offset,
        start: b.start,
        duration: b.duration,
        ads: b.ads,
      })),
      contentDuration: 65.063,
    });
    t.match(
      mpd.text,
      /<BaseURL>https:\/\/dash\.akamaized\.net\/dashif\/ad-insertion-testcase6\/batch5\/<\/BaseURL>/,
      "the ads' BaseURLs kept absolute",
    );
    const tracking = breaks.flatMap((b) => b.ads.flatMap((x) => x.tracking.flatMap((e) => e.urls)));
    t.ok(
      tracking.length > 0 && tracking.every((u) => u.startsWith(`${a.url}/beacon?`) && u.includes('&sig=')),
      'every tracking URL signed through /beacon',
    );
    const impression = breaks[1]!.ads[1]!.tracking.find((e) => e.event === 'impression')!.urls[0]!;
    const before = adServer.hitCount('impression', 'ad-2');
    t.equal((await call(c.url, 'GET', impression.slice(a.url.length))).status, 200);
    t.equal(
      (await call(a.url, 'GET', impression.slice(a.url.length))).status,
      200,
      'a repeat, on another instance, is accepted',
    );
    t.ok(await until(() => adServer.hitCount('impression', 'ad-2') > before), 'forwarded to the ad server');
    await new Promise((r) => setTimeout(r, 300));
    t.equal(adServer.hitCount('impression', 'ad-2'), before + 1, 'once');
    const same = await post(a.url, '/stitch/dash/stream/stream-d/asset/vod-dash');
    t.equal(
      same.body.cache_url,
      url,
      'the same stream and asset: the same cache_url, from the instance that stitched it',
    );
  });

  t.test('failures', async (t) => {
    const noBrand = await stitch(a.url, 'stream-x', 'cid-1', undefined, {});
    t.equal(noBrand.status, 400);
    t.equal(noBrand.headers['content-type'], 'application/problem+json');
    t.equal((await stitch(a.url, 'stream-x', 'nope')).status, 404, 'unknown asset');
    t.equal(
      (await call(a.url, 'POST', '/stitch/smil/stream/s/asset/cid-1', { headers: { 'x-brand': 'acme' } })).status,
      404,
      'unknown protocol',
    );
    t.equal(
      (await stitch(a.url, 'stream-x', 'cid-1', { targeting: { a: 1 } })).status,
      400,
      'targeting values are strings',
    );
    t.equal((await stitch(a.url, 'stream-x', 'cid-1', { extra: true })).status, 400, 'unknown body fields');
    t.equal(
      (await stitch(a.url, 'stream-x', 'cid-1', { content_uri: 'https://elsewhere.example/x.m3u8' })).status,
      400,
      'content_uri must be one of the asset renditions',
    );
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
    t.match(
      (await stitch(a.url, 'stream-error', 'cid-1')).body,
      { breaks: [], warnings: [/no ads/] },
      'ad server down',
    );
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
