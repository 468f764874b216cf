/**
 * Issue 27's "Done when" on every manifest path, over HTTP against simulated collaborators: DAI HLS
 * (master, media, DVR) and DASH, a DAI VOD playlist and static MPD, the squeezeback master and
 * variant, a stitched cache URL and `/vast`. On each: `Accept-Encoding: gzip` gets a gzip body that
 * decompresses to exactly the identity answer, `br` where offered (shared bodies), none gets
 * identity; `Vary` merged with the CORS one on every form; `If-None-Match` with the current tag (any
 * form's) → 304 without a body, a stale one → 200 and the body; HEAD the same headers. Then every
 * row of the cache table (README "CDN origin"), squeezeback VOD Last-Modified, and the DAI
 * specifics: q-values, cache headers per answer kind, stale answers with Age, Last-Modified on VOD
 * answers, and no 304 for a body that changed (an upstream update, a trim change).
 */
import t, { type Test } from 'tap';
import zlib from 'node:zlib';
import { request } from 'undici';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../lib/sim/transcoder.js';
import { StitchStore } from '../../lib/stitch/store.js';
import { call } from '../helpers/http.js';
import { fixture } from '../helpers/fixtures.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';

const STREAM = 'cdn0c3b-aaaa-bbbb-cccc-1234567890ab:LOC';
const base = `/linear/hls/pa/event/EVKEY/stream/${STREAM}`;
const PLAYER = 'https://player.example.com';
const VARY = 'Origin, Accept-Encoding';

interface Pulled {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

async function pull(
  url: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' = 'GET',
): Promise<Pulled> {
  const res = await request(url, { method, headers });
  return { status: res.statusCode, headers: res.headers, raw: Buffer.from(await res.body.arrayBuffer()) };
}

const header = (p: Pulled, name: string) => String(p.headers[name] ?? '');
/** The identity tag a form's tag names (`"…-gz"`, `"…-br"` → `"…"`). */
const stem = (tag: string) => tag.replace(/-(?:gz|br)"$/, '"');
const DECODE = { gzip: zlib.gunzipSync, br: zlib.brotliDecompressSync } as const;

interface PathCase {
  /** Brotli offered (a shared body), or gzip only (one stream's, one request's). */
  br: boolean;
  /** ETag and 304s (all but `/vast`, which is no-store). */
  validators: boolean;
  /** HEAD checked: the same headers as GET. */
  head: boolean;
  headers?: Record<string, string>;
  /**
   * A new body per request (the squeezeback master makes a stream per request): the forms are
   * compared after this (its stream ids replaced), and no 304 can match a later request.
   */
  perRequest?: (body: string) => string;
}

/**
 * The identity, gzip and br answers of one rendering: pulled until all carry the same tag stem (a
 * live playlist moves on at segment boundaries, so pulls may straddle one; bounded by the
 * boundaries a few pulls can cross). Without validators, until the decoded bodies agree.
 */
async function forms(url: string, extra: Record<string, string>, validators: boolean) {
  // validators false: one request's answers, compared by what they decode to.
  for (let i = 0; i < 6; i++) {
    const plain = await pull(url, extra);
    const gzip = await pull(url, { ...extra, 'accept-encoding': 'gzip' });
    const br = await pull(url, { ...extra, 'accept-encoding': 'br' });
    const both = await pull(url, { ...extra, 'accept-encoding': 'gzip, deflate, br' });
    const tags = [plain, gzip, br, both].map((p) => stem(header(p, 'etag')));
    if (validators ? tags.every((x) => x !== '""' && x === tags[0]) : true) return { plain, gzip, br, both };
  }
  throw new Error(`no four pulls of ${url} saw one rendering`);
}

/** The "Done when" checks on one path. */
async function doneWhen(t: Test, url: string, c: PathCase): Promise<void> {
  const extra = { origin: PLAYER, ...c.headers };
  const { plain, gzip, br, both } = await forms(url, extra, c.validators && !c.perRequest);
  const same = (a: Buffer, b: Buffer) =>
    c.perRequest ? c.perRequest(a.toString()) === c.perRequest(b.toString()) : a.equals(b);
  t.equal(plain.status, 200, `200 (${plain.raw.toString().slice(0, 200)})`);
  t.equal(header(plain, 'content-encoding'), '', 'identity without Accept-Encoding');
  for (const p of [plain, gzip, br, both]) {
    t.equal(header(p, 'vary'), VARY, 'one Vary, merged with the CORS one');
    t.equal(header(p, 'access-control-allow-origin'), PLAYER, 'CORS still echoed');
  }
  t.equal(header(gzip, 'content-encoding'), 'gzip', 'gzip when accepted');
  t.ok(same(zlib.gunzipSync(gzip.raw), plain.raw), 'gunzip(body) is exactly the identity body');
  t.equal(Number(header(gzip, 'content-length')), gzip.raw.byteLength);
  if (c.br) {
    t.equal(header(br, 'content-encoding'), 'br', 'br when accepted (a shared body)');
    t.ok(same(zlib.brotliDecompressSync(br.raw), plain.raw), 'brotli-decoded body is exactly the identity body');
  } else {
    t.equal(header(br, 'content-encoding'), '', 'br alone: identity (gzip only for per-stream bodies)');
    t.ok(same(br.raw, plain.raw));
  }
  const chosen = header(both, 'content-encoding') as 'gzip' | 'br';
  t.ok(chosen === 'gzip' || (c.br && chosen === 'br'), `gzip, deflate, br: ${chosen}`);
  t.ok(same(DECODE[chosen](both.raw), plain.raw), 'and it decodes to the identity body');
  if (c.br && chosen === 'br') t.ok(br.raw.byteLength < gzip.raw.byteLength, 'br chosen only where it is smaller');

  if (c.validators && c.perRequest) {
    t.match(header(plain, 'etag'), /^"[A-Za-z0-9_-]{22}"$/, 'a strong ETag (a new one per answer)');
    t.match(header(gzip, 'etag'), /^"[A-Za-z0-9_-]{22}-gz"$/);
  } else if (c.validators) {
    const tag = header(plain, 'etag');
    t.match(tag, /^"[A-Za-z0-9_-]{22}"$/, 'a strong ETag');
    t.equal(header(gzip, 'etag'), `${tag.slice(0, -1)}-gz"`, "the gzip form's tag");
    if (c.br) t.equal(header(br, 'etag'), `${tag.slice(0, -1)}-br"`, "the br form's tag");
    // Revalidation: the current tag (any form's) → 304 without a body; a stale one → 200 and the body.
    for (const [form, ae] of [
      [plain, ''],
      [gzip, 'gzip'],
      [c.br ? br : gzip, 'gzip, br'],
    ] as const) {
      for (let i = 0; ; i++) {
        const cur = await pull(url, { ...extra, 'accept-encoding': ae });
        const nm = await pull(url, { ...extra, 'accept-encoding': ae, 'if-none-match': header(cur, 'etag') });
        if (nm.status === 200 && i < 4) {
          // The playlist moved on between the two pulls: a new body, so a new tag.
          t.not(header(nm, 'etag'), header(cur, 'etag'), 'a 200 on revalidation carries a new tag');
          continue;
        }
        t.equal(nm.status, 304, `If-None-Match with the current ${ae || 'identity'} tag → 304`);
        t.equal(nm.raw.byteLength, 0, '304: no body');
        t.equal(header(nm, 'content-length'), '', '304: no Content-Length');
        t.equal(header(nm, 'cache-control'), header(cur, 'cache-control'), '304: Cache-Control');
        t.equal(header(nm, 'vary'), VARY, '304: Vary');
        break;
      }
      t.ok(form.raw.byteLength > 0);
    }
    const stale = await pull(url, { ...extra, 'if-none-match': '"AAAAAAAAAAAAAAAAAAAAAA"' });
    t.equal(stale.status, 200, 'a stale tag → 200');
    t.ok(stale.raw.byteLength > 0, 'with the body');
    t.not(header(stale, 'etag'), '"AAAAAAAAAAAAAAAAAAAAAA"');
  } else {
    t.equal(header(plain, 'etag'), '', 'no validators');
    t.equal(header(gzip, 'etag'), '');
  }

  if (c.head) {
    for (const ae of ['', 'gzip', 'br']) {
      const get = await pull(url, { ...extra, 'accept-encoding': ae });
      const head = await pull(url, { ...extra, 'accept-encoding': ae }, 'HEAD');
      t.equal(head.raw.byteLength, 0, `HEAD ${ae || 'identity'}: no body`);
      // The same rendering unless a segment boundary fell between: compared by what does not move.
      for (const name of ['content-encoding', 'content-type', 'cache-control', 'vary', 'access-control-allow-origin'])
        t.equal(header(head, name), header(get, name), `HEAD ${ae || 'identity'}: the same ${name}`);
      if (c.validators && stem(header(head, 'etag')) === stem(header(get, 'etag')))
        t.equal(header(head, 'content-length'), String(get.raw.byteLength), 'HEAD: the GET body length');
    }
  }
}

t.test('every manifest path as a CDN origin (the "Done when" of issue 27)', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim({ shape: { segmentSec: 4, windowSegments: 15 } }).start();
  const ads = await new AdServerSim({
    ads: [
      { id: 'ad-1', durationSec: 4 },
      { id: 'ad-2', durationSec: 4 },
    ],
  }).start();
  const transcoder = await new TranscoderSim().start();
  t.teardown(async () => {
    sim.stop();
    await ads.stop();
    await transcoder.stop();
  });
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: sim.url,
    publicBaseUrl: 'https://edge.example.net',
    corsAllowedOrigins: PLAYER,
    adServerUrl: `${ads.url}/ad`,
    transcoderUrl: transcoder.url,
    beaconSecret: 'beacon-secret-for-tests-0123456789',
    allowPrivateOutbound: true,
    trustedProxies: '127.0.0.1',
    // Low enough that every body here is compressed (the DAI master is 0.5 KB).
    compressMinBytes: 128,
  });
  const tok = await token(service);
  const api = (method: string, path: string, json: unknown) =>
    call(service.url, method, `/api/v1/${path}`, { token: tok, json });
  t.equal((await api('PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  const event = { asset_id: 'CDN1', source_uri: `${sim.url}/source/master.m3u8`, brand_config_id: 'acme' };
  const ev = await api('PUT', 'squeeze-event-config', event);
  t.equal(ev.status, 200);
  const rule = { brand_name: 'acme', match_type: 'hostname', match_value: '*.acme.example' };
  t.equal((await api('POST', 'brand-recognition', rule)).status, 201);
  const acme = { 'x-forwarded-host': 'www.acme.example' };

  const dai = (p: string) => `${service.url}/dai/manifest${p}`;
  const VOD = '/ondemand/hls/content/1/vid/tears/streams/cdn1/vod.m3u8';
  const STATIC_MPD = '/ondemand/dash/content/1/vid/tears/streams/cdn1/manifest.mpd';
  sim.fixed.set(VOD, { body: fixture('hls/grafov-m3u8/wowza-vod-chunklist.m3u8') });
  sim.fixed.set(STATIC_MPD, { body: fixture('dash/dash-mpd-rs/aws.mpd') });
  const shared = { br: true, validators: true, head: true };
  const cases: Array<[string, string, PathCase]> = [
    ['DAI HLS master', dai(`${base}/master.m3u8`), shared],
    ['DAI HLS media', dai(`${base}/variant/720p.m3u8`), shared],
    ['DAI HLS DVR window', dai(`${base}/dvr/variant/720p.m3u8`), shared],
    ['DAI DASH', dai(`/linear/dash/event/EVKEY/stream/${STREAM}/manifest.mpd`), shared],
    ['DAI HLS VOD', dai(VOD), shared],
    ['DAI DASH static', dai(STATIC_MPD), shared],
  ];

  // The squeezeback flow: a stream's master (its own: gzip only) and its variant (shared).
  const master = await pull(`${service.url}/squeezeback/CDN1/master.m3u8?s=viewer1`, acme);
  t.equal(master.status, 200, master.raw.toString());
  const sid = /^(\d{9})\/variant\/720p\.m3u8$/m.exec(master.raw.toString())?.[1];
  t.ok(sid, 'a squeezeback stream');
  cases.push(
    [
      'squeezeback master',
      `${service.url}/squeezeback/CDN1/master.m3u8?s=viewer1`,
      {
        br: false,
        validators: true,
        head: true,
        headers: acme,
        perRequest: (s) => s.replace(/\b\d{9}\//g, 'SID/'),
      },
    ],
    ['squeezeback variant', `${service.url}/squeezeback/CDN1/${sid}/variant/720p.m3u8`, shared],
  );

  // A stitched session, stored as another instance's POST would have.
  const id = 'cdnAllPaths012345678';
  await new StitchStore(service.stores.sql).put({
    id,
    key: 'cdn-all-paths',
    protocol: 'hls',
    files: {
      'master.m3u8': fixture('hls/eyevinn-hls-splice/hls1/master.m3u8'),
      'v0.m3u8': fixture('hls/grafov-m3u8/wowza-vod-chunklist.m3u8'),
    },
    response: {},
    expiresAt: Date.now() + 600_000,
  });
  cases.push(['stitched cache URL', `${service.url}/${service.config.stitchPath}/cache/${id}/v0.m3u8`, shared]);

  // /vast of a stream in a break: one request's VAST (gzip only, no validators, no-store).
  const brk = await api('PUT', 'squeeze-ad-break', {
    event_id: ev.body.id,
    break_duration: 60,
    stream_ids: [sid],
  });
  t.equal(brk.status, 200, `a break on the stream: ${brk.status === 200 ? '' : JSON.stringify(brk.body)}`);
  const vastUrl = `${service.url}/vast?stream_id=${sid}`;
  const deadline = Date.now() + 20_000;
  while (!(await pull(vastUrl)).raw.toString().includes('<Ad ')) {
    if (Date.now() > deadline) throw new Error('no ads in the VAST of the stream');
    await new Promise((r) => setTimeout(r, 200));
  }
  cases.push(['/vast', vastUrl, { br: false, validators: false, head: true }]);

  for (const [name, url, c] of cases) await t.test(name, (t) => doneWhen(t, url, c));
  const vast = await pull(vastUrl, { 'accept-encoding': 'gzip' });
  t.equal(header(vast, 'cache-control'), 'no-store', '/vast: no-store');

  // The cache table (README "CDN origin"), the rows these paths answer; the DAI rows are below.
  await t.test('cache table: squeezeback master and live variant', async (t) => {
    const m = await pull(`${service.url}/squeezeback/CDN1/master.m3u8?s=viewer2`, acme);
    t.equal(header(m, 'cache-control'), 'private, no-store', "a stream's master: never shared");
    const v = await pull(`${service.url}/squeezeback/CDN1/${sid}/variant/720p.m3u8`);
    // The simulator's target duration is 4 s here: fresh for 2, stale while revalidating for 4, through errors for 8.
    t.equal(header(v, 'cache-control'), 'public, max-age=2, stale-while-revalidate=4, stale-if-error=8');
    t.equal(header(v, 'last-modified'), '', 'a live variant has no Last-Modified');
  });

  await t.test('cache table: stitched cache URLs, for the session remaining lifetime', async (t) => {
    const v = await pull(`${service.url}/${service.config.stitchPath}/cache/${id}/v0.m3u8`);
    const maxAge = Number(/^public, max-age=(\d+)$/.exec(header(v, 'cache-control'))?.[1]);
    t.ok(maxAge > 0 && maxAge <= 600 && maxAge % 60 === 0, `whole minutes of the 10 left (${maxAge})`);
    t.ok(header(v, 'last-modified'), 'with a Last-Modified');
    const long = 'cdnLongSession012345';
    await new StitchStore(service.stores.sql).put({
      id: long,
      key: 'cdn-long-session',
      protocol: 'hls',
      files: { 'v0.m3u8': fixture('hls/grafov-m3u8/wowza-vod-chunklist.m3u8') },
      response: {},
      expiresAt: Date.now() + 7_200_000,
    });
    const l = await pull(`${service.url}/${service.config.stitchPath}/cache/${long}/v0.m3u8`);
    t.equal(header(l, 'cache-control'), 'public, max-age=3600', 'at most an hour');
  });

  await t.test('cache table: ad tags no-store', async (t) => {
    const tag = await pull(`${service.url}/dai/adproxy?stream_id=cdn-tag&asset_key=K`);
    t.equal(tag.status, 200);
    t.equal(header(tag, 'cache-control'), 'no-store', '/dai/adproxy');
    t.equal(header(await pull(vastUrl), 'cache-control'), 'no-store', '/vast');
  });

  await t.test('cache table: errors', async (t) => {
    // 4xx on the manifest paths: two seconds, no validators.
    for (const [what, path] of [
      ['squeezeback, no such event', '/squeezeback/NOPE1/master.m3u8'],
      ['squeezeback, unknown stream', '/squeezeback/CDN1/999999999/variant/720p.m3u8'],
      ['stitched, no such session', `/${service.config.stitchPath}/cache/noSuchSession0123456/v0.m3u8`],
      ['DAI, not a manifest path', '/dai/manifest/seg.ts'],
    ]) {
      const r = await pull(`${service.url}${path}`);
      t.equal(r.status === 404 || r.status === 400, true, `${what}: ${r.status}`);
      t.equal(header(r, 'cache-control'), 'public, max-age=2', `${what}: two seconds`);
      t.equal(header(r, 'etag'), '', `${what}: no validators`);
    }
    // A VAST (and a beacon) is never stored, its errors neither.
    const bad = await pull(`${service.url}/vast`);
    t.equal(bad.status, 400);
    t.equal(header(bad, 'cache-control'), 'no-store', '/vast 400: no-store');
    const beacon = await pull(`${service.url}/beacon?u=x`);
    t.equal(beacon.status >= 400 && beacon.status < 500, true, `/beacon unsigned: ${beacon.status}`);
    t.equal(header(beacon, 'cache-control'), 'no-store', '/beacon 4xx: no-store');
    // 405: only methods a CDN does not cache get it.
    const post = await request(`${service.url}/dai/manifest${base}/variant/720p.m3u8`, { method: 'POST', body: '' });
    await post.body.dump();
    t.equal(post.statusCode, 405);
    t.equal(String(post.headers['cache-control']), 'no-store', '405: no-store');
    // 429: one client's, never stored. An event capped at one stream refuses the second viewer.
    const capped = { ...event, asset_id: 'CDN3', max_concurrent_streams: 1 };
    t.equal((await api('PUT', 'squeeze-event-config', capped)).status, 200);
    t.equal((await pull(`${service.url}/squeezeback/CDN3/master.m3u8?s=a`, acme)).status, 200);
    const over = await pull(`${service.url}/squeezeback/CDN3/master.m3u8?s=b`, acme);
    t.equal(over.status, 429);
    t.equal(header(over, 'cache-control'), 'no-store', '429: no-store');
    // 5xx: never stored (the origin fails and nothing stale is held for this URL).
    sim.mode = 'error';
    try {
      const down = await pull(`${service.url}/squeezeback/CDN1/${sid}/variant/never-fetched.m3u8`);
      t.equal(down.status, 502);
      t.equal(header(down, 'cache-control'), 'no-store', '5xx: no-store');
    } finally {
      sim.mode = 'ok';
    }
  });

  await t.test('cache table: squeezeback stale answers carry Age', async (t) => {
    // CDN1 has a break, so every stream's variant is its own rendering of the event's shared one.
    const paths = [`/squeezeback/CDN1/${sid}/variant/720p.m3u8`, `/squeezeback/CDN1/${sid}/variant/480p.m3u8`];
    const good = [];
    for (const p of paths) good.push(await pull(`${service.url}${p}`));
    t.same(
      good.map((g) => g.status),
      [200, 200],
    );
    sim.mode = 'error';
    try {
      for (const [i, p] of paths.entries()) {
        // Pulled until an answer says it is stale (Age), within the deadline. The origin's request
        // count alone cannot tell: other readers of the source (the cue monitor) ask it too.
        let r: Pulled;
        const asked = sim.requestCount;
        for (const deadline = Date.now() + 5000; ;) {
          r = await pull(`${service.url}${p}`);
          if (header(r, 'age') !== '' || Date.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        t.ok(sim.requestCount > asked, `${p}: the origin was asked again`);
        t.equal(r.status, 200, `${p}: served stale while the origin fails`);
        t.ok(Number(header(r, 'age')) >= 1, `${p}: with Age (${header(r, 'age')})`);
        t.equal(header(r, 'cache-control'), header(good[i]!, 'cache-control'), `${p}: the rendering's Cache-Control`);
      }
    } finally {
      sim.mode = 'ok';
    }
  });

  await t.test('squeezeback VOD: Last-Modified, If-Modified-Since, never a 304 for a changed body', async (t) => {
    const src = '/vodsrc/cdn/vod.m3u8';
    const chunklist = fixture('hls/grafov-m3u8/wowza-vod-chunklist.m3u8');
    const upstreamDate = new Date().toUTCString();
    sim.fixed.set(src, { body: chunklist, lastModified: upstreamDate });
    const vodEvent = { ...event, asset_id: 'CDN2', source_uri: `${sim.url}${src}` };
    t.equal((await api('PUT', 'squeeze-event-config', vodEvent)).status, 200);
    // A source that is a media playlist: the stream's master names it as its one variant.
    const m = await pull(`${service.url}/squeezeback/CDN2/master.m3u8`, acme);
    t.equal(m.status, 200, m.raw.toString());
    const variant = /^\d{9}\/\S+$/m.exec(m.raw.toString())?.[0];
    t.ok(variant, 'a variant under the stream');
    const url = `${service.url}/squeezeback/CDN2/${variant}`;
    const first = await pull(url, { origin: PLAYER });
    const answeredAt = Date.now();
    t.equal(first.status, 200);
    t.ok(first.raw.toString().endsWith('#EXT-X-ENDLIST\n'), 'the VOD playlist');
    t.equal(header(first, 'cache-control'), 'public, max-age=300, stale-if-error=86400', 'VOD cache headers');
    const lastModified = header(first, 'last-modified');
    // The origin's date, never earlier than the moment the instance first saw the event's new settings
    // (lib/delivery/vod-dates.ts): that is this first answer, a later second than upstreamDate when the
    // PUT and the master above crossed a second boundary (as on a loaded machine).
    const stated = Date.parse(lastModified);
    t.ok(
      lastModified === upstreamDate ||
        (stated > Date.parse(upstreamDate) && stated <= Math.floor(answeredAt / 1000) * 1000),
      `the origin's Last-Modified, or the second the new settings were seen (${lastModified}; origin ${upstreamDate})`,
    );

    // A new rendering of the same body (once the micro-cache moved on) keeps its date.
    const fetched = sim.requests.get(src) ?? 0;
    let again = first;
    for (const deadline = Date.now() + 5000; (sim.requests.get(src) ?? 0) === fetched;) {
      if (Date.now() > deadline) throw new Error('the VOD playlist was not fetched again');
      await new Promise((r) => setTimeout(r, 100));
      again = await pull(url);
    }
    t.equal(header(again, 'last-modified'), lastModified, 'a re-rendering of the same body keeps its date');
    t.equal(header(again, 'etag'), header(first, 'etag'));

    for (const ae of ['', 'gzip', 'br']) {
      const ims = await pull(url, { origin: PLAYER, 'if-modified-since': lastModified, 'accept-encoding': ae });
      t.equal(ims.status, 304, `If-Modified-Since at Last-Modified → 304 (${ae || 'identity'})`);
      t.equal(ims.raw.byteLength, 0, '304: no body');
      t.equal(header(ims, 'last-modified'), lastModified, '304: Last-Modified');
      t.equal(header(ims, 'cache-control'), 'public, max-age=300, stale-if-error=86400', '304: Cache-Control');
      t.equal(header(ims, 'vary'), VARY, '304: Vary');
    }
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
    t.equal((await pull(url, { 'if-modified-since': earlier })).status, 200, 'an earlier date → 200');
    t.equal(
      (await pull(url, { 'if-modified-since': lastModified, 'if-none-match': '"other"' })).status,
      200,
      'If-None-Match decides when both are sent',
    );
    const head = await pull(url, { 'if-modified-since': earlier }, 'HEAD');
    t.equal(header(head, 'last-modified'), lastModified, 'HEAD: the same Last-Modified');

    // The origin updates the playlist and keeps its date: a new body, never a 304 for it.
    sim.fixed.set(src, {
      body: chunklist.replace('#EXT-X-ENDLIST', '#EXTINF:2.0,\nextra.ts\n#EXT-X-ENDLIST'),
      lastModified: upstreamDate,
    });
    for (const deadline = Date.now() + 5000; ;) {
      const r = await pull(url, { 'if-modified-since': lastModified });
      if (r.raw.toString().includes('/extra.ts')) {
        t.equal(r.status, 200, 'the update: 200 with the new body');
        const date = header(r, 'last-modified');
        t.ok(date === '' || Date.parse(date) > Date.parse(lastModified), `a later date or none (${date})`);
        break;
      }
      // The micro-cache still holds the old rendering (a second at most): a 304 is right for it.
      t.equal(r.status, 304, 'the old body until the cache moves on: 304');
      if (Date.now() > deadline) throw new Error('the update never came');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

t.test('DAI manifest proxy as a CDN origin', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  let windowSegs = 0;
  let vodOrigin: string | undefined;
  const events = {
    generation: 0,
    forAssetKey: (k: string | undefined) =>
      k === 'TRIM'
        ? { eventId: 9, windowSegs, liveEdgeDelaySegments: 0 }
        : k === 'VODTRIM'
          ? { eventId: 10, windowSegs: 0, liveEdgeDelaySegments: 0, contentOrigin: vodOrigin }
          : { windowSegs: 0, liveEdgeDelaySegments: 0 },
  };
  const service = await startTestService(
    t,
    {
      databaseUrl: await freshSchemaUrl(t),
      daiHost: sim.url,
      contentOrigin: 'https://origin.example.org',
      publicBaseUrl: 'https://edge.example.net',
      corsAllowedOrigins: PLAYER,
    },
    { events },
  );
  const url = (p: string) => `${service.url}/dai/manifest${p}`;
  const kinds = {
    master: `${base}/master.m3u8`,
    variant: `${base}/variant/720p.m3u8`,
    dvr: `${base}/dvr/variant/720p.m3u8`,
    mpd: `/linear/dash/event/EVKEY/stream/${STREAM}/manifest.mpd`,
  };

  t.test('Accept-Encoding q-values: what each spelling gets', async (t) => {
    for (const ae of [
      'gzip;q=0',
      'identity',
      'br;q=0',
      '*;q=0',
      'gzip;q=0, br;q=0, *;q=1',
      'deflate;q=0.5, gzip;q=0.000',
    ]) {
      const r = await pull(url(kinds.variant), { 'accept-encoding': ae });
      t.equal(header(r, 'content-encoding'), '', `${ae}: identity`);
      t.equal(header(r, 'vary'), 'Origin, Accept-Encoding');
    }
    for (const ae of ['GZIP', 'x-gzip', 'identity;q=0, gzip;q=0.1', 'br;q=0.5, gzip', 'br;q=0, *']) {
      t.equal(
        header(await pull(url(kinds.variant), { 'accept-encoding': ae }), 'content-encoding'),
        'gzip',
        `${ae}: gzip`,
      );
    }
    // The live variant (3.4 KB): brotli is smaller than gzip, so a tie goes to br.
    for (const ae of ['br', 'BR', '*', 'gzip, deflate, br', 'br;q=1, gzip;q=0.5', 'gzip;q=0, *']) {
      t.equal(header(await pull(url(kinds.variant), { 'accept-encoding': ae }), 'content-encoding'), 'br', `${ae}: br`);
    }
  });

  t.test('cache headers per answer kind', async (t) => {
    const variant = await pull(url(kinds.variant));
    // The simulator's target duration is 6 s: fresh for 3, stale while revalidating for 6, through errors for 12.
    t.equal(header(variant, 'cache-control'), 'public, max-age=3, stale-while-revalidate=6, stale-if-error=12');
    t.equal(header(await pull(url(kinds.master)), 'cache-control'), 'public, max-age=2, stale-if-error=30');
    // A live MPD is never answered stale while revalidating: a player's own cache would hand it the
    // MPD it already has at every update (issue 30.1).
    t.equal(header(await pull(url(kinds.mpd)), 'cache-control'), 'public, max-age=1, stale-if-error=12');
    t.equal(header(variant, 'last-modified'), '', 'a live playlist has no Last-Modified');
    // A live answer has no date: If-Modified-Since never makes it a 304, on a miss or on the fast lane (a micro-cache hit).
    const future = new Date(Date.now() + 86_400_000).toUTCString();
    for (let i = 0; i < 2; i++)
      t.equal(
        (await pull(url(kinds.variant), { 'if-modified-since': future })).status,
        200,
        'If-Modified-Since: ignored',
      );
    sim.mode = 'notfound';
    const nf = await pull(url(`${base}/variant/gone.m3u8`));
    t.equal(nf.status, 404);
    t.equal(header(nf, 'cache-control'), 'public, max-age=2', '4xx: two seconds');
    t.equal(header(nf, 'etag'), '', 'errors carry no validators');
    sim.mode = 'error';
    const err = await pull(url(`${base}/variant/broken.m3u8`), { 'accept-encoding': 'gzip' });
    t.equal(err.status, 502);
    t.equal(header(err, 'cache-control'), 'no-store', '5xx: not stored');
    t.equal(header(err, 'content-encoding'), '', 'problems go out as they are');
    sim.mode = 'ok';
    const bad = await pull(url('/seg.ts'));
    t.equal(bad.status, 400);
    t.equal(header(bad, 'cache-control'), 'public, max-age=2');
  });

  t.test('stale answers: the rendering Cache-Control, with Age', async (t) => {
    // One path per kind; each is rendered once, then the upstream fails and the micro-cache serves it stale.
    const paths: Array<[string, string, string]> = [
      ['live variant', `${base}/variant/stale.m3u8`, 'public, max-age=3, stale-while-revalidate=6, stale-if-error=12'],
      ['master', `/linear/hls/pa/event/EVKEY/stream/stale1:LOC/master.m3u8`, 'public, max-age=2, stale-if-error=30'],
    ];
    for (const [, p] of paths) t.equal((await pull(url(p))).status, 200);
    const fetched = sim.requestCount;
    sim.mode = 'error';
    try {
      for (const [what, p, cc] of paths) {
        // Pulled until the upstream was asked again (the rendering no longer fresh): that answer is the stale one.
        let r: Pulled;
        const asked = sim.requestCount;
        for (const deadline = Date.now() + 5000; ;) {
          r = await pull(url(p));
          if (sim.requestCount > asked || Date.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        t.ok(sim.requestCount > fetched, `${what}: the upstream was asked again`);
        t.equal(r.status, 200, `${what}: served stale while the upstream fails`);
        t.ok(Number(header(r, 'age')) >= 1, `${what}: with Age (${header(r, 'age')})`);
        t.equal(header(r, 'cache-control'), cc, `${what}: the rendering's Cache-Control`);
      }
    } finally {
      sim.mode = 'ok';
    }
  });

  t.test(
    'Last-Modified on VOD answers: the upstream date, If-Modified-Since, never a 304 for a changed body',
    async (t) => {
      const vod = '/linear/hls/pa/event/VODTRIM/stream/vod1:LOC/vod.m3u8';
      // Root-relative segment URIs: they go to the event's content origin.
      const chunklist = fixture('hls/grafov-m3u8/wowza-vod-chunklist.m3u8').replace(/^media-/gm, '/vod/media-');
      // The upstream's date: now (later than the service's start, so it is the one stated).
      const upstreamDate = new Date().toUTCString();
      sim.fixed.set(vod, { body: chunklist, lastModified: upstreamDate });
      const first = await pull(url(vod));
      t.equal(first.status, 200);
      t.equal(header(first, 'cache-control'), 'public, max-age=300, stale-if-error=86400', 'VOD cache headers');
      const lastModified = header(first, 'last-modified');
      t.equal(lastModified, upstreamDate, "the upstream's Last-Modified");
      // A new rendering of the same body (after the micro-cache's second) keeps its date.
      const fetched = sim.requests.get(vod) ?? 0;
      let again = first;
      for (const deadline = Date.now() + 5000; (sim.requests.get(vod) ?? 0) === fetched;) {
        if (Date.now() > deadline) throw new Error('the VOD playlist was not fetched again');
        await new Promise((r) => setTimeout(r, 100));
        again = await pull(url(vod));
      }
      t.equal(header(again, 'last-modified'), lastModified, 'a re-rendering of the same body keeps its date');
      t.equal(header(again, 'etag'), header(first, 'etag'));

      const ims = await pull(url(vod), { 'if-modified-since': lastModified, 'accept-encoding': 'gzip' });
      t.equal(ims.status, 304, 'If-Modified-Since at Last-Modified → 304');
      t.equal(ims.raw.byteLength, 0);
      t.equal(header(ims, 'last-modified'), lastModified);
      t.equal(header(ims, 'vary'), VARY);
      const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
      t.equal((await pull(url(vod), { 'if-modified-since': earlier })).status, 200, 'an earlier date → 200');
      t.equal(
        (await pull(url(vod), { 'if-modified-since': lastModified, 'if-none-match': '"other"' })).status,
        200,
        'If-None-Match decides when both are sent',
      );
      const head = await pull(url(vod), { 'if-modified-since': earlier }, 'HEAD');
      t.equal(header(head, 'last-modified'), lastModified, 'HEAD: the same Last-Modified');

      // Changed bodies the upstream dates no later than before: the event's content origin changed
      // (its segment URIs), then an upstream update that keeps its date. Each is answered 200 with
      // the new body, never a 304.
      const changes: Array<[string, () => void, (body: string) => boolean]> = [
        [
          'a settings change',
          () => {
            vodOrigin = 'https://other.example.org';
            events.generation++;
          },
          (body) => body.includes('https://other.example.org/vod/'),
        ],
        [
          'an upstream update with the same date',
          () =>
            sim.fixed.set(vod, {
              body: chunklist.replace('#EXT-X-ENDLIST', '#EXTINF:2.0,\nextra.ts\n#EXT-X-ENDLIST'),
              lastModified: upstreamDate,
            }),
          (body) => body.includes('/extra.ts'),
        ],
      ];
      let seenDate = lastModified;
      for (const [what, change, isNew] of changes) {
        change();
        for (const deadline = Date.now() + 5000; ;) {
          const r = await pull(url(vod), { 'if-modified-since': seenDate });
          if (isNew(r.raw.toString())) {
            t.equal(r.status, 200, `${what}: 200 with the new body`);
            const date = header(r, 'last-modified');
            t.ok(date === '' || Date.parse(date) > Date.parse(seenDate), `${what}: a later date or none (${date})`);
            if (date) seenDate = date;
            break;
          }
          // The micro-cache still holds the old rendering (a second at most): a 304 is right for it.
          t.ok(r.status === 304 || r.status === 200, `${what}: the old body until the cache moves on`);
          if (Date.now() > deadline) throw new Error(`${what}: the new body never came`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    },
  );

  t.test('Last-Modified on a static MPD without an upstream date: when it was first made', async (t) => {
    const mpd = '/ondemand/dash/content/2/vid/x/streams/s/manifest.mpd';
    sim.fixed.set(mpd, { body: fixture('dash/dash-mpd-rs/aws.mpd') });
    const before = Math.floor(Date.now() / 1000) * 1000;
    const r = await pull(url(mpd));
    t.equal(r.status, 200);
    t.equal(header(r, 'cache-control'), 'public, max-age=300, stale-if-error=86400', 'the VOD cache headers');
    const date = Date.parse(header(r, 'last-modified'));
    t.ok(date >= before && date <= Date.now(), `first made now (${header(r, 'last-modified')})`);
    t.equal((await pull(url(mpd), { 'if-modified-since': header(r, 'last-modified') })).status, 304);
    const live = await pull(url(kinds.mpd));
    t.equal(header(live, 'last-modified'), '', 'a dynamic MPD has none');
    t.match(header(live, 'cache-control'), /^public, max-age=1, /, 'and the live cache headers');
  });

  t.test('no 304 for a body that changed: a trim change', async (t) => {
    const path = url('/linear/hls/pa/event/TRIM/stream/trim1:LOC/variant/720p.m3u8');
    const before = await pull(path);
    windowSegs = 5;
    events.generation++;
    const after = await pull(path, { 'if-none-match': header(before, 'etag') });
    t.equal(after.status, 200, 'the old tag no longer matches');
    t.not(header(after, 'etag'), header(before, 'etag'));
    t.equal((after.raw.toString().match(/#EXTINF/g) ?? []).length, 5, 'the new window');
    const again = await pull(path, { 'if-none-match': header(after, 'etag') });
    t.equal(again.status, 304, 'and the new one does');
  });
});

t.test('no 304 for a body that changed: an upstream update', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  // One-second segments: the upstream playlist moves on every second.
  const sim = await new DaiHostSim({ shape: { segmentSec: 1 } }).start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: 'https://origin.example.org',
  });
  const path = `${service.url}/dai/manifest/linear/hls/pa/event/EV/stream/upd1:LOC/variant/720p.m3u8`;
  const first = await pull(path);
  const seen = new Set([first.raw.toString()]);
  let last = first;
  // Every pull revalidates with the tag of the body it last saw, until the playlist moved on (a
  // second, plus the half-second micro-cache; bounded by 20 pulls that each wait for the answer).
  for (let i = 0; i < 20 && seen.size < 2; i++) {
    const r = await pull(path, { 'if-none-match': header(last, 'etag') });
    if (r.status !== 304) {
      t.equal(r.status, 200);
      t.not(r.raw.toString(), last.raw.toString(), 'a 200 only for a changed body');
      t.not(header(r, 'etag'), header(last, 'etag'), 'with a new tag');
      seen.add(r.raw.toString());
      last = r;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  t.equal(seen.size, 2, 'the upstream update was seen as a 200 with the new body');
});
