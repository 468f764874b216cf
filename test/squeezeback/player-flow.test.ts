/**
 * The squeezeback player flow over HTTP (issue 14): two instances on one Postgres and Redis, the
 * content origin (lib/sim/dai-host.ts serves /source/… as an origin would), the ad server and the
 * transcoder simulated as real HTTP servers.
 */
import t from 'tap';
import zlib from 'node:zlib';
import { request } from 'undici';
import { SignJWT } from 'jose';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../lib/sim/transcoder.js';
import type { Service } from '../../lib/app.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../helpers/services.js';

const SEG = 2;
const KEY = 'player-key-for-tests-0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
}

/** The raw bytes of an answer (gzip bodies are not decoded: the test compares them itself). */
async function pull(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; raw: Buffer; headers: Record<string, unknown> }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, raw: Buffer.from(await res.body.arrayBuffer()), headers: res.headers };
}

const jwt = (claims: Record<string, unknown>, key = KEY, exp: string | number = '10m') =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(exp).sign(new TextEncoder().encode(key));
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

t.test('squeezeback player flow', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
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
  const common = {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    contentOrigin: sim.url,
    adServerUrl: `${ads.url}/ad`,
    transcoderUrl: transcoder.url,
    beaconSecret: 'beacon-secret-for-tests-0123456789',
    allowPrivateOutbound: true,
    breakLeaseMs: 1500,
    breakTickMs: 200,
    breakRetentionSec: 120,
    // The test client stands for a trusted CDN edge (loopback) in front of a proxy at 10.0.0.1.
    trustedProxies: '127.0.0.1, 10.0.0.0/8',
  };
  const a = await startTestService(t, common);
  const b = await startTestService(t, common);
  const tok = await token(a);
  const api = (s: Service, method: string, path: string, json?: unknown) =>
    call(s.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });

  t.equal((await api(a, 'PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  // Two segments of live-edge delay give the transcoder its time: a break segment listed before it
  // was composed stays content (stable substitutions), so with none the break would show no squeeze.
  const event = {
    asset_id: 'SB1',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
    live_edge_delay_segments: 2,
  };
  const ev = await api(a, 'PUT', 'squeeze-event-config', event);
  t.equal(ev.status, 200);
  const eventId = ev.body.id as number;
  t.equal(
    (
      await api(a, 'POST', 'brand-recognition', {
        brand_name: 'acme',
        match_type: 'hostname',
        match_value: '*.acme.example',
      })
    ).status,
    201,
  );
  t.equal(
    (
      await api(a, 'POST', 'brand-recognition', {
        brand_name: 'other',
        match_type: 'query_param',
        match_name: 'site',
        match_value: 'other',
      })
    ).status,
    201,
  );
  t.equal(
    (await api(a, 'PUT', 'brand-tokens/acme', { jwt_key: KEY })).status,
    204,
    'the player-token key is set (write-only)',
  );
  t.equal((await api(a, 'PUT', 'brand-tokens/acme', { jwt_key: 'short' })).status, 400, 'a short key is refused');
  t.equal((await api(a, 'PUT', 'brand-tokens/acme', {})).status, 400, 'nothing to set');
  await sleep(300); // the key reaches B through pub/sub

  const acme = { 'x-forwarded-host': 'www.acme.example' };
  const master = (s: Service, query: string, headers: Record<string, string> = acme) =>
    get(`${s.url}/squeezeback/SB1/master.m3u8${query ? `?${query}` : ''}`, headers);
  const sidOf = (body: string) => /^(\d{9})\/variant\/720p\.m3u8$/m.exec(body)?.[1];

  const m1 = await master(
    a,
    `s=viewer1&kv=one&geo=x&token=${await jwt({ kv: 'from-jwt', n: 5, obj: { a: 1 }, list: [1] })}`,
    { ...acme, 'x-device-ip': '198.51.100.7' },
  );
  t.equal(m1.status, 200, m1.body);
  t.equal(m1.headers['cache-control'], 'private, no-store', "a stream's master is never shared");
  const m2 = await master(b, 's=viewer2&kv=two', { ...acme, 'x-forwarded-for': '203.0.113.5, 10.0.0.1' });
  t.equal(m2.status, 200);
  const [s1, s2] = [sidOf(m1.body), sidOf(m2.body)];
  t.ok(s1 && s2 && s1 !== s2, `two distinct 9-digit streams (${s1}, ${s2})`);
  t.match(m1.body, new RegExp(`URI="${s1}/audio/en\\.m3u8"`), 'renditions mapped');
  t.match(m1.body, new RegExp(`URI="${s1}/iframe/720p\\.m3u8"`), 'I-frame playlists mapped');
  t.notOk(m1.body.includes(sim.url), 'no origin URL left for a playlist');

  await Promise.all([a.streams.flush(), b.streams.flush()]);
  const st1 = await api(b, 'GET', `streams/${s1}`);
  t.match(
    st1.body,
    {
      stream_id: s1,
      event_id: eventId,
      flow: 'squeezeback',
      client_ip: '198.51.100.7',
      brand: 'acme',
      fw_params: { s: 'viewer1', kv: 'from-jwt', n: '5', geo: 'x' },
    },
    'targeting: query overridden by the JWT',
  );
  t.notOk(
    'token' in st1.body.fw_params ||
      'obj' in st1.body.fw_params ||
      'list' in st1.body.fw_params ||
      'exp' in st1.body.fw_params,
    'no token, no object claims, no registered claims',
  );
  t.match(
    (await api(a, 'GET', `streams/${s2}`)).body,
    { client_ip: '203.0.113.5', brand: 'acme', fw_params: { kv: 'two' } },
    'X-Forwarded-For through trusted hops (loopback, then 10.0.0.1)',
  );

  const dai = await get(`${b.url}/dai/adproxy?stream_id=D1&asset_key=SB1&site=other`);
  t.equal(dai.status, 200);
  await b.streams.flush();
  t.match(
    (await api(a, 'GET', 'streams/D1')).body,
    { flow: 'dai', brand: 'other' },
    'the DAI flow records the brand too',
  );
  t.ok(
    (await get(`${a.url}/metrics`)).body.includes('squeezeback_streams_total{brand="acme"}'),
    'streams counted per brand',
  );

  const variant = (s: Service, sid: string, path = 'variant/720p.m3u8') =>
    get(`${s.url}/squeezeback/SB1/${sid}/${path}`);
  await t.test('variants: the origin playlist with absolute segments, identical on both instances', async (t) => {
    const v = await variant(a, s1!);
    t.equal(v.status, 200);
    t.match(v.body, new RegExp(`^${sim.url}/content/720p/seg_\\d+\\.ts$`, 'm'), 'segments absolute on the origin');
    await until(
      'identical variants on A and B',
      async () => (await variant(a, s1!)).body === (await variant(b, s1!)).body,
    );
    t.equal((await variant(b, s2!, 'audio/en.m3u8')).status, 200, 'a rendition');
    const before = sim.requests.get('/source/variant/720p.m3u8') ?? 0;
    await Promise.all(Array.from({ length: 40 }, (_, i) => variant(i % 2 ? a : b, i % 3 ? s1! : s2!)));
    const fetched = (sim.requests.get('/source/variant/720p.m3u8') ?? 0) - before;
    t.ok(fetched <= 6, `40 requests of two streams on two instances cost ${fetched} origin fetches`);
    // Issue 31: a stream's own query makes each request an origin fetch; equal bytes are rendered once.
    const memoHits = async () =>
      Number(/^squeezeback_render_memo_hits_total (\d+)/m.exec((await get(`${a.url}/metrics`)).body)?.[1]);
    const hitsBefore = await memoHits();
    let n = 0;
    const bodies = await until('three answers from one origin playlist', async () => {
      const three: string[] = [];
      for (let i = 0; i < 3; i++) three.push((await variant(a, s1!, `variant/720p.m3u8?q=${++n}`)).body);
      return three.every((b) => b === three[0]) && three;
    });
    t.match(bodies[0], new RegExp(`^${sim.url}/content/720p/seg_\\d+\\.ts$`, 'm'), 'rendered as without a query');
    t.ok((await memoHits()) > hitsBefore, 'answered from the memo');
  });

  await t.test(
    'variants as a CDN origin (issue 27): gzip of exactly the identity body, Vary, ETag → 304',
    async (t) => {
      const url = `${a.url}/squeezeback/SB1/${s1}/variant/720p.m3u8`;
      // Two pulls see one rendering unless a segment boundary falls between them: retried a few times.
      for (let i = 0; i < 5; i++) {
        const plain = await pull(url);
        const gz = await pull(url, { 'accept-encoding': 'gzip' });
        if (gz.headers['etag'] !== `${String(plain.headers['etag']).slice(0, -1)}-gz"`) continue;
        t.equal(gz.headers['content-encoding'], 'gzip');
        t.notOk(plain.headers['content-encoding'], 'identity without Accept-Encoding');
        t.ok(zlib.gunzipSync(gz.raw).equals(plain.raw), 'gunzip(body) is exactly the identity body');
        t.equal(plain.headers['vary'], 'Accept-Encoding');
        t.equal(gz.headers['vary'], 'Accept-Encoding');
        t.match(
          plain.headers['cache-control'],
          /^public, max-age=1, stale-while-revalidate=2, stale-if-error=4$/,
          'half the 2 s target duration',
        );
        const nm = await pull(url, { 'if-none-match': String(gz.headers['etag']), 'accept-encoding': 'gzip' });
        if (nm.status === 200) {
          t.not(nm.headers['etag'], gz.headers['etag'], 'a 200 on revalidation only with a new tag');
          continue;
        }
        t.equal(nm.status, 304, 'the current tag → 304');
        t.equal(nm.raw.byteLength, 0, 'no body');
        t.equal((await pull(url, { 'if-none-match': '"stale"' })).status, 200, 'a stale tag → 200');
        const m = await pull(`${a.url}/squeezeback/SB1/master.m3u8?s=viewer9`, { ...acme, 'accept-encoding': 'gzip' });
        t.equal(m.status, 200);
        t.match(String(m.headers['etag']), /^"/, "a stream's master has an ETag too");
        return;
      }
      t.fail('no two pulls saw one rendering');
    },
  );

  await t.test('bad input', async (t) => {
    t.equal(
      (await master(a, `token=${await jwt({ kv: 'x' }, 'another-key-0123456789abcdef0123456789')}`)).status,
      401,
      'signed with another key',
    );
    t.equal(
      (await master(a, `token=${await jwt({ kv: 'x' }, KEY, Math.floor(Date.now() / 1000) - 120)}`)).status,
      401,
      'expired',
    );
    t.equal(
      (await master(a, `token=${b64({ alg: 'none' })}.${b64({ kv: 'x', exp: Math.floor(Date.now() / 1000) + 600 })}.`))
        .status,
      401,
      'alg none',
    );
    t.equal(
      (
        await master(
          a,
          `token=${await new SignJWT({ kv: 'x' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(KEY))}`,
        )
      ).status,
      401,
      'no exp',
    );
    t.equal((await master(a, 'token=garbage')).status, 401, 'malformed');
    const noBrand = await master(a, `token=${await jwt({ kv: 'x' })}`, {});
    t.equal(noBrand.status, 401, 'no brand recognised');
    t.equal(noBrand.headers['content-type'], 'application/problem+json');
    t.equal((await master(a, `site=other&token=${await jwt({ kv: 'x' })}`, {})).status, 401, 'a brand without a key');
    t.equal((await get(`${a.url}/squeezeback/NOPE/master.m3u8`)).status, 404, 'unknown asset');
    t.equal((await get(`${a.url}/squeezeback/SB1/123456789/variant/720p.m3u8`)).status, 404, 'unknown stream');
    t.equal((await get(`${a.url}/squeezeback/SB1/abc/variant/720p.m3u8`)).status, 404, 'not a stream id');
    for (const p of [
      `SB1/${s1}/../x.m3u8`,
      `SB1/${s1}/variant%2f720p.m3u8`,
      `SB1/${s1}/a%00.m3u8`,
      `..%2f/master.m3u8`,
      `SB1/${s1}/content/720p/seg_1.ts`,
      `SB1/${s1}//x.m3u8`,
    ]) {
      const r = await request(`${a.url}/squeezeback/${p}`);
      await r.body.text();
      t.equal(r.statusCode, 400, p);
    }
    const many = Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`).join('&');
    const big = `kv=${'x'.repeat(16 * 1024)}`;
    for (const q of [many, big]) {
      const r = await master(a, q).catch(() => ({ status: 0, body: '' }));
      t.ok([200, 400, 431, 0].includes(r.status), `huge query answered ${r.status}`);
    }
    await Promise.all([a.streams.flush(), b.streams.flush()]);
    const created = (await api(a, 'GET', `streams?event_id=${eventId}`)).body.results as Array<{
      fw_params: Record<string, string>;
    }>;
    t.ok(
      created.every((s) => Object.keys(s.fw_params).length <= 200),
      'targeting capped',
    );
    t.equal((await master(a, 's=again')).status, 200, 'the service still answers');
  });

  await t.test(
    'a PUT break: one ad request per stream with its targeting, squeezed variants, /vast, cue-in',
    async (t) => {
      // Only the two streams of this test are live for the break: the others expire by naming.
      const requestsBefore = ads.requests.length;
      const preBreak = await pull(`${a.url}/squeezeback/SB1/${s1}/variant/720p.m3u8`);
      const started = await api(b, 'PUT', 'squeeze-ad-break', {
        event_id: eventId,
        break_duration: 3 * SEG,
        stream_ids: [s1, s2],
        abid: 'brk-abid',
      });
      t.equal(started.status, 200, JSON.stringify(started.body));
      t.match(started.body, { status: 'scheduled', decision: { source: 'vmap' }, streams: 2 });
      const sent = ads.requests.slice(requestsBefore).map((r) => r.query);
      t.equal(sent.length, 2, 'the ad server asked once per stream');
      const q1 = sent.find((q) => q.get('s') === 'viewer1');
      const q2 = sent.find((q) => q.get('s') === 'viewer2');
      t.equal(q1?.get('kv'), 'from-jwt', 'stream 1: the JWT claim');
      t.equal(q1?.get('vip'), '198.51.100.7', 'stream 1: its client IP');
      t.equal(q2?.get('kv'), 'two', 'stream 2: its query');
      t.equal(q2?.get('vip'), '203.0.113.5');
      t.ok(
        sent.every((q) => q.get('abid') === 'brk-abid'),
        "the break's abid",
      );

      const hitsBefore = ads.hits.length;
      const outputs = () =>
        transcoder.jobs.filter((j) => j.ad_uri.startsWith(ads.url)).map((j) => transcoder.outputUri(j.output_key));
      const carries = async (s: Service, sid: string) => {
        const m = (await variant(s, sid)).body;
        return outputs().some((o) => m.includes(o)) && m;
      };
      const squeezed = await until(
        'squeezeback segments in the stream’s variant on A and B',
        async () => (await carries(a, s1!)) && (await carries(b, s1!)),
      );
      t.match(squeezed, /#EXT-X-CUE-OUT:6|#EXT-X-CUE-OUT-CONT/, 'cue-out');
      // Issue 27: a CDN revalidating with the tag from before the break gets the squeezed body, never a 304.
      const after = await pull(`${a.url}/squeezeback/SB1/${s1}/variant/720p.m3u8`, {
        'if-none-match': String(preBreak.headers['etag']),
      });
      t.equal(after.status, 200, 'the pre-break tag no longer matches');
      t.ok(
        outputs().some((o) => after.raw.toString().includes(o)),
        'and the body is the squeezed one',
      );
      await until(
        'identical squeezed variants on A and B',
        async () => (await variant(a, s1!)).body === (await variant(b, s1!)).body,
      );
      // Issue 27: streams with different break assignments render from one origin fetch per fresh
      // period (the origin's playlist is fresh for 1 s here): once both renderings have expired,
      // the second stream's takes the base the first one's fetched. A stream outside the break has
      // an assignment of its own (none).
      const s3 = sidOf((await master(a, 's=viewer3')).body);
      t.ok(s3, 'a stream outside the break');
      // The player flow's own fetches (the break worker follows the same source playlist with a
      // user agent of its own). A pair that took most of the fresh second (a busy machine, ffmpeg
      // composing beside it) may rightly fetch twice: only pairs well inside the window count.
      const flowFetches = () => sim.requestsByAgent.get('squeezeback-player-flow /source/variant/720p.m3u8') ?? 0;
      let inWindow = 0;
      for (let attempt = 0; attempt < 10 && inWindow < 2; attempt++) {
        await sleep(1100);
        const before = flowFetches();
        const started = Date.now();
        await variant(a, s1!);
        await variant(a, s3!);
        const took = Date.now() - started;
        const fetched = flowFetches() - before;
        if (took > 600) {
          t.comment(`a pair took ${took} ms (${fetched} origin fetches): not counted`);
          continue;
        }
        inWindow++;
        t.equal(fetched, 1, 'two break assignments, one origin fetch');
      }
      t.equal(inWindow, 2, 'two pairs answered inside the fresh window');
      await sleep(1500);
      t.equal(
        ads.hits.slice(hitsBefore).filter((h) => h.s === 'viewer1' || h.s === 'viewer2').length,
        0,
        'no beacon fired by the service for squeezeback streams',
      );
      const vast = await until('the VAST of the stream', async () => {
        const v = await get(`${a.url}/vast?stream_id=${s1}`);
        return v.body.includes('<Ad ') && v;
      });
      t.ok(vast.body.includes('/beacon?') && !vast.body.includes(`${ads.url}/track`), 'signed beacon URLs only');
      const gzVast = await pull(`${a.url}/vast?stream_id=${s1}`, { 'accept-encoding': 'gzip' });
      const plainVast = await pull(`${a.url}/vast?stream_id=${s1}`);
      t.equal(gzVast.headers['content-encoding'], 'gzip', '/vast: gzip when accepted');
      t.equal(
        zlib.gunzipSync(gzVast.raw).toString(),
        plainVast.raw.toString(),
        '/vast: gunzip(body) is exactly the identity body',
      );
      t.notOk(plainVast.headers['content-encoding']);
      t.equal(gzVast.headers['vary'], 'Accept-Encoding');
      t.equal(plainVast.headers['vary'], 'Accept-Encoding');
      t.equal(gzVast.headers['cache-control'], 'no-store', '/vast: no-store');
      t.notOk(gzVast.headers['etag'], '/vast: no validators');
      await until('cue-in after the break', async () => (await variant(a, s1!)).body.includes('#EXT-X-CUE-IN'));
    },
  );

  await t.test('max_concurrent_streams: the next viewer gets 429, the playing ones keep playing', async (t) => {
    await Promise.all([a.streams.flush(), b.streams.flush()]);
    const live = (await api(a, 'GET', `streams?event_id=${eventId}`)).body.total_results as number;
    t.equal((await api(a, 'PUT', 'squeeze-event-config', { ...event, max_concurrent_streams: live + 1 })).status, 200);
    await sleep(300);
    const ok = await master(b, 'kv=last');
    t.equal(ok.status, 200, 'one more viewer fits');
    const refused = await master(a, 'kv=over');
    t.equal(refused.status, 429, 'the next viewer is refused');
    t.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
    t.equal(refused.headers['content-type'], 'application/problem+json');
    t.equal((await variant(a, s1!)).status, 200, 'a playing stream is not cut off');
    t.equal((await variant(b, sidOf(ok.body)!)).status, 200);
    t.equal((await api(a, 'PUT', 'squeeze-event-config', event)).status, 200);
  });
});
