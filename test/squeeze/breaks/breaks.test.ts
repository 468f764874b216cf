/**
 * Squeezeback breaks end to end over HTTP (issue 5): two service instances on one Postgres and
 * Redis, with the DAI host / origin, ad server and transcoder simulated as real HTTP servers.
 */
import t from 'tap';
import { request } from 'undici';
import { DaiHostSim } from '../../../lib/sim/dai-host.js';
import { AdServerSim } from '../../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import type { Service } from '../../../lib/app.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';

const SEG = 2;
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

async function text(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

t.test('squeezeback breaks end to end', async (t) => {
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
  const databaseUrl = await freshSchemaUrl(t);
  const common = {
    databaseUrl,
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
  };
  const a = await startTestService(t, common);
  const b = await startTestService(t, common);
  const tok = await token(a);
  const api = (s: Service, method: string, path: string, json?: unknown) =>
    call(s.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });

  t.equal(
    (
      await api(a, 'PUT', 'squeeze-brand-config', {
        brand_id: 'acme',
        background_uri: 'https://cdn.example.com/bg.png',
      })
    ).status,
    200,
  );
  const ev = await api(a, 'PUT', 'squeeze-event-config', {
    asset_id: 'EV1',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
    // Players see a segment two segments after it exists: the transcoder's time to compose it. A
    // break segment listed as content stays content (docs/decisions.md, "Squeeze breaks: stable
    // substitutions"), so without a delay no segment would ever be listed squeezed.
    live_edge_delay_segments: 2,
  });
  t.equal(ev.status, 200);
  const eventId = ev.body.id as number;

  // Registration both ways: S1 preroll first (through A), S2 manifest first (through B).
  const variant = (s: Service, stream: string) =>
    `${s.url}/dai/manifest/linear/hls/event/EV1/stream/${stream}/variant/720p.m3u8`;
  t.equal((await text(`${a.url}/dai/adproxy?stream_id=S1&asset_key=EV1&imafw_kv=one`)).status, 200);
  t.equal((await text(variant(a, 'S1'))).status, 200);
  t.equal((await text(variant(b, 'S2'))).status, 200);
  t.equal((await text(`${b.url}/dai/adproxy?stream_id=S2&asset_key=EV1&imafw_kv=two`)).status, 200);
  await Promise.all([a.streams.flush(), b.streams.flush()]);
  const listed = await api(a, 'GET', `streams?event_id=${eventId}`);
  t.equal(listed.status, 200);

  const manifestsCarry = async (needle: string, streams = ['S1', 'S2']) => {
    for (const s of [a, b])
      for (const st of streams) if (!(await text(variant(s, st))).body.includes(needle)) return false;
    return true;
  };

  await t.test('bad input', async (t) => {
    t.equal(
      (await api(a, 'POST', 'squeeze-ad-break', { event_id: 99999, break_duration: 10 })).status,
      404,
      'unknown event',
    );
    t.equal(
      (await api(a, 'POST', 'squeeze-ad-break', { asset_id: 'NOPE', break_duration: 10 })).status,
      404,
      'unknown asset',
    );
    for (const d of [0, -5, 601, 'ten'])
      t.equal(
        (await api(a, 'POST', 'squeeze-ad-break', { event_id: eventId, break_duration: d })).status,
        400,
        `duration ${d}`,
      );
    t.equal((await api(a, 'POST', 'squeeze-ad-break', { break_duration: 10 })).status, 400, 'no event');
    t.equal(
      (await call(a.url, 'POST', '/api/v1/squeeze-ad-break', { json: { event_id: eventId, break_duration: 10 } }))
        .status,
      401,
      'no token',
    );
    t.equal((await api(a, 'GET', 'squeeze-ad-break/not-a-break')).status, 404);
    t.equal((await api(a, 'GET', 'squeeze-ad-break/00000000-0000-4000-8000-000000000000')).status, 404);
    t.equal(
      (
        await text(
          `${a.url}/beacon?u=${encodeURIComponent(`${ads.url}/track?ev=x`)}&s=S1&e=start&sig=${'A'.repeat(43)}`,
        )
      ).status,
      400,
      'forged beacon',
    );
    t.equal((await text(`${a.url}/beacon`)).status, 400, 'no beacon');
  });

  await t.test('curated break: cue-out, squeezeback segments on both instances, cue-in', async (t) => {
    const ad = await api(a, 'PUT', 'squeeze-configured-ad', {
      event_id: eventId,
      abid: 'cur-1',
      ad_uri: 'https://cdn.example.com/curated.mp4',
      duration: 10,
      is_curated: true,
    });
    t.equal(ad.status, 200);
    const started = await api(a, 'POST', 'squeeze-ad-break', { event_id: eventId, break_duration: 3 * SEG });
    t.equal(started.status, 200, JSON.stringify(started.body));
    t.match(started.body, {
      break_id: String,
      status: 'scheduled',
      event_id: eventId,
      break_duration: 3 * SEG,
      decision: { source: 'curated' },
    });
    t.equal(started.body.segments.length, 3, 'three planned segments');
    t.match(started.body.segments[0], { index: 0, expected_start: String, duration: SEG, status: 'pending' });
    t.equal(
      (await api(b, 'POST', 'squeeze-ad-break', { event_id: eventId, break_duration: 10 })).status,
      409,
      'a second break on the event',
    );
    const id = started.body.break_id as string;

    await until('squeezeback segments in both instances’ manifests', () => manifestsCarry(`${transcoder.url}/out/`));
    const [ma, mb] = [(await text(variant(a, 'S1'))).body, (await text(variant(b, 'S1'))).body];
    t.ok(ma.includes(`#EXT-X-CUE-OUT:${3 * SEG}`), 'cue-out with the break duration');
    t.ok(
      transcoder.jobs.every(
        (j) =>
          j.ad_uri === 'https://cdn.example.com/curated.mp4' &&
          j.background_uri === 'https://cdn.example.com/bg.png' &&
          j.id3?.owner === 'com.acme.vtg',
      ),
      'jobs carry the curated ad, the background and the brand ID3 owner',
    );
    await until(
      'identical manifests on A and B',
      async () => (await text(variant(a, 'S1'))).body === (await text(variant(b, 'S1'))).body,
    );
    t.ok(ma.length > 0 && mb.length > 0);
    // An instance started mid-break (a restart) rebuilds the break from Postgres and renders the same.
    const c = await startTestService(t, common);
    await until(
      'a new instance renders the same manifest',
      async () =>
        (await text(variant(c, 'S1'))).body === (await text(variant(a, 'S1'))).body &&
        (await text(variant(c, 'S1'))).body.includes(`${transcoder.url}/out/`),
    );
    t.equal((await api(c, 'GET', `squeeze-ad-break/${id}`)).body.break_id, id, 'the break survives in Postgres');
    await c.close();
    await until('cue-in after the break', () => manifestsCarry('#EXT-X-CUE-IN'));
    const done = await until('break completed', async () => {
      const r = await api(b, 'GET', `squeeze-ad-break/${id}`);
      return r.body.status === 'completed' && r.body;
    });
    t.ok(
      done.segments.every(
        (s: { status: string; uri?: string }) => s.status === 'ready' && s.uri?.startsWith(transcoder.url),
      ),
      'every planned segment ready',
    );
    // Issue 30.2: S1 and S2 were rendered through both instances; each instance's notes reach the store with its flush.
    const reached = await until('both streams counted as reached', async () => {
      const r = await api(a, 'GET', `squeeze-ad-break/${id}`);
      return r.body.matched_streams === 2 && r.body;
    });
    t.same([reached.unmatched_streams, reached.warnings], [0, []], 'no stream missed it, no warning');
    const perKey = [...transcoder.jobsByKey.values()];
    t.ok(
      perKey.every((n) => n === 1),
      'each output composed once',
    );
    t.equal((await api(a, 'DELETE', 'squeeze-configured-ad', { id: ad.body.id })).status, 200);
  });

  await t.test(
    'VMAP break on the DAI streams: per-stream ad requests, /vast, beacons once, extend, terminate',
    async (t) => {
      ads.hits.length = 0;
      const requestsBefore = ads.requests.length;
      // Long enough to still be running after the waits below on a busy machine (the VAST is answered
      // and the break extended only while it runs); the DELETE ends it at the next segment boundary.
      const started = await api(b, 'PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 15 * SEG });
      t.equal(started.status, 200, JSON.stringify(started.body));
      t.match(started.body, { status: 'scheduled', decision: { source: 'vmap' }, streams: 2 });
      t.equal(started.body.assignments.length, 1, 'two streams given the same creatives share one assignment');
      const sent = ads.requests
        .slice(requestsBefore)
        .map((r) => [...r.query.entries()].map(([k, v]) => `${k}=${v}`).join('&'));
      t.ok(
        sent.some((q) => q.includes('kv=one')) && sent.some((q) => q.includes('kv=two')),
        'each stream’s targeting reached the ad server',
      );
      t.ok(
        sent.every((q) => q.includes('caid=EV1') && q.includes('vmap1')),
        'FreeWheel-style global params',
      );
      const id = started.body.break_id as string;

      await until('segments squeezed with the decided ads', async () => {
        const outputs = transcoder.jobs
          .filter((j) => j.ad_uri.startsWith(ads.url))
          .map((j) => transcoder.outputUri(j.output_key));
        const m = (await text(variant(a, 'S1'))).body;
        return outputs.some((o) => m.includes(o));
      });
      // S2 never calls /vast: the service fires its beacons itself once its manifest carries the squeezed segments.
      const hitsBefore = ads.hits.length;
      await until('S2 manifests with the squeezed segments', async () => {
        const outputs = transcoder.jobs
          .filter((j) => j.ad_uri.startsWith(ads.url))
          .map((j) => transcoder.outputUri(j.output_key));
        const m = (await text(variant(b, 'S2'))).body;
        return outputs.some((o) => m.includes(o));
      });
      await until(
        'impression and start fired for S2 by the service',
        async () =>
          ads.hits.slice(hitsBefore).some((h) => h.ev === 'impression' && h.s === 'S2') &&
          ads.hits.some((h) => h.ev === 'start' && h.s === 'S2'),
      );
      // Instances learn of the break through pub/sub: A may hear of it a moment after B answered.
      const vast = await until('the VAST of the break', async () => {
        const v = await text(`${a.url}/vast?stream_id=S1`);
        return v.body.includes('<Ad ') && v;
      });
      t.equal(vast.status, 200);
      t.ok(vast.body.includes('<VAST version="4.0"'), 'a VAST 4 document');
      t.notOk(vast.body.includes(`${ads.url}/track`), 'the original tracking URLs never reach the player');
      t.ok(vast.body.includes('/beacon?'), 'beacon URLs instead');
      const beaconUrls = [...vast.body.matchAll(/<!\[CDATA\[([^\]]*\/beacon\?[^\]]*)\]\]>/g)].map((m) => m[1]!);
      t.ok(beaconUrls.length >= 6, `beacon URLs handed out (${beaconUrls.length})`);
      t.ok(beaconUrls.every((u) => u.startsWith(`${a.url}/beacon?`)));
      for (const [i, u] of beaconUrls.entries())
        t.equal((await text(u.replace(a.url, i % 2 ? b.url : a.url))).status, 200, 'beacon accepted');
      for (const u of beaconUrls.slice(0, 3)) t.equal((await text(u)).status, 200, 'the same beacon again');
      const tampered = beaconUrls[0]!.replace('s=S1', 's=S2');
      t.equal((await text(tampered)).status, 400, 'tampered beacon');
      t.equal((await text(`${a.url}/vast?stream_id=NOSUCH`)).body.includes('<Ad '), false, 'no break: empty VAST');

      const extended = await api(a, 'POST', `squeeze-ad-break/${id}/extend`, { additional_sec: 2 * SEG });
      t.equal(extended.status, 200);
      t.equal(extended.body.break_duration, 17 * SEG);
      t.equal(extended.body.segments.length, 17);
      const ended = await api(b, 'DELETE', `squeeze-ad-break/${id}`);
      t.equal(ended.status, 200);
      t.equal(ended.body.status, 'cancelled');
      t.ok(
        Date.parse(ended.body.end_time) <= Date.parse(extended.body.end_time),
        'the end moved forward to a segment boundary',
      );
      t.equal(
        (await api(a, 'POST', `squeeze-ad-break/${id}/extend`, { additional_sec: 2 })).status,
        409,
        'an ended break cannot be extended',
      );
      t.equal(
        (await api(a, 'DELETE', `squeeze-ad-break/${id}`)).body.status,
        'cancelled',
        'DELETE again shows it as it is',
      );
      await until('cue-in after the terminated break', () => manifestsCarry('#EXT-X-CUE-IN', ['S1']));
      await sleep(1000);
      const perBeacon = new Map<string, number>();
      for (const h of ads.hits) perBeacon.set(h.query.toString(), (perBeacon.get(h.query.toString()) ?? 0) + 1);
      t.ok(perBeacon.size >= 6, `distinct beacons received (${perBeacon.size})`);
      t.same(
        [...perBeacon].filter(([, n]) => n !== 1),
        [],
        'the ad server received each beacon once',
      );
      t.ok(
        [...transcoder.jobsByKey.values()].every((n) => n === 1),
        'each squeezeback output composed once for both streams',
      );
    },
  );

  await t.test('ad server down: the break runs on the configured fallback and says why', async (t) => {
    await api(a, 'PUT', 'squeeze-configured-ad', {
      event_id: eventId,
      abid: 'fb-1',
      ad_uri: 'https://cdn.example.com/fallback.mp4',
      duration: 30,
      is_curated: false,
    });
    ads.mode = 'error';
    const r = await api(a, 'POST', 'squeeze-ad-break', { event_id: eventId, break_duration: 2 * SEG });
    ads.mode = 'ok';
    t.equal(r.status, 200);
    t.match(r.body, { status: 'scheduled', decision: { source: 'fallback', reason: /fallback/ } });
    t.match(r.body.ads, [{ uri: 'https://cdn.example.com/fallback.mp4' }]);
    t.equal((await api(a, 'DELETE', `squeeze-ad-break/${r.body.break_id}`)).status, 200);
    for (const mode of ['garbage', 'slow'] as const) {
      ads.mode = mode;
      ads.slowMs = 15_000;
      const g = await api(b, 'POST', 'squeeze-ad-break', { event_id: eventId, break_duration: 2 * SEG });
      ads.mode = 'ok';
      t.match(g.body, { status: 'scheduled', decision: { source: 'fallback' } }, mode);
      t.equal((await api(b, 'DELETE', `squeeze-ad-break/${g.body.break_id}`)).status, 200);
    }
  });

  await t.test('a later break on the same stream fires its beacons again', async (t) => {
    const impressionsS2 = () => ads.hits.filter((h) => h.ev === 'impression' && h.s === 'S2').length;
    const before = impressionsS2();
    t.ok(before > 0, 'S2 already had an impression in the earlier VMAP break');
    const r = await api(a, 'PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 2 * SEG });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.match(r.body, { decision: { source: 'vmap' }, streams: 2 });
    // The DAI flow fires beacons when the stream's manifest is requested: keep requesting it, as the player does.
    await until('a second impression for S2', async () => {
      const outputs = transcoder.jobs
        .filter((j) => j.id3?.value === r.body.break_id)
        .map((j) => transcoder.outputUri(j.output_key));
      const m = (await text(variant(b, 'S2'))).body;
      return outputs.some((o) => m.includes(o)) && impressionsS2() > before;
    });
    t.equal(
      impressionsS2(),
      before + 1,
      'the same creative and tracking URL in another break is another impression, fired once',
    );
    await until(
      'the break ends',
      async () => (await api(a, 'GET', `squeeze-ad-break/${r.body.break_id}`)).body.status === 'completed',
    );
  });

  await t.test('a PUT naming streams squeezes those streams only', async (t) => {
    const ad = await api(a, 'PUT', 'squeeze-configured-ad', {
      event_id: eventId,
      abid: 'cur-2',
      ad_uri: 'https://cdn.example.com/only-s1.mp4',
      duration: 10,
      is_curated: true,
    });
    t.equal(ad.status, 200);
    const r = await api(a, 'PUT', 'squeeze-ad-break', {
      event_id: eventId,
      break_duration: 2 * SEG,
      stream_ids: ['S1'],
    });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.match(r.body, { decision: { source: 'curated' }, streams: 1 });
    const outputs = () =>
      transcoder.jobs
        .filter((j) => j.ad_uri === 'https://cdn.example.com/only-s1.mp4')
        .map((j) => transcoder.outputUri(j.output_key));
    await until('S1 squeezed', async () => {
      const m = (await text(variant(a, 'S1'))).body;
      return outputs().some((o) => m.includes(o));
    });
    const s2 = (await text(variant(a, 'S2'))).body;
    t.notOk(
      outputs().some((o) => s2.includes(o)),
      'S2 untouched by this break',
    );
    t.equal((await api(a, 'DELETE', `squeeze-ad-break/${r.body.break_id}`)).status, 200);
    t.equal((await api(a, 'DELETE', 'squeeze-configured-ad', { id: ad.body.id })).status, 200);
  });

  await t.test('max_concurrent_streams caps the DAI streams a PUT squeezes', async (t) => {
    const event = {
      asset_id: 'EV1',
      source_uri: `${sim.url}/source/master.m3u8`,
      brand_config_id: 'acme',
      live_edge_delay_segments: 2,
    };
    t.equal((await api(a, 'PUT', 'squeeze-event-config', { ...event, max_concurrent_streams: 1 })).status, 200);
    const r = await api(a, 'PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 2 * SEG });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.equal(r.body.streams, 1, 'one of the two streams');
    t.equal((await api(a, 'DELETE', `squeeze-ad-break/${r.body.break_id}`)).status, 200);
    t.equal((await api(a, 'PUT', 'squeeze-event-config', event)).status, 200);
  });

  await t.test("an event's breaks, newest first, paged (the operator page)", async (t) => {
    const all = await api(b, 'GET', `squeeze-ad-break?event_id=${eventId}&page_size=50`);
    t.equal(all.status, 200);
    const results = all.body.results as Array<{
      break_id: string;
      event_id: number;
      start_time: string;
      segments: unknown[];
    }>;
    t.ok(results.length >= 4, 'the breaks of the tests above');
    t.equal(all.body.total_results, results.length);
    t.ok(
      results.every(
        (r, i) =>
          r.event_id === eventId &&
          Array.isArray(r.segments) &&
          (i === 0 || results[i - 1]!.start_time >= r.start_time),
      ),
      'each with its segments, newest first',
    );
    const one = await api(a, 'GET', `squeeze-ad-break/${results[0]!.break_id}`);
    // The break may still be composing between the two reads: its segments' progress can move on.
    const still = ({
      segments: _segments,
      matched_streams: _m,
      unmatched_streams: _u,
      warnings: _w,
      ...rest
    }: Record<string, unknown>) => rest;
    t.same(still(results[0]!), still(one.body), 'each as GET /squeeze-ad-break/{id} shows it');
    const page1 = await api(a, 'GET', `squeeze-ad-break?event_id=${eventId}&page=1&page_size=2`);
    t.same(
      page1.body.results.map((r: { break_id: string }) => r.break_id),
      results.slice(2, 4).map((r) => r.break_id),
    );
    t.same(
      (await api(a, 'GET', 'squeeze-ad-break?event_id=99999')).body,
      { results: [], total_results: 0 },
      'an unknown event has none',
    );
    for (const q of ['', '?event_id=x', `?event_id=${eventId}&page_size=51`, `?event_id=${eventId}&page=-1`])
      t.equal((await api(a, 'GET', `squeeze-ad-break${q}`)).status, 400, `bad query ${q || '(none)'}`);
    t.equal((await call(a.url, 'GET', `/api/v1/squeeze-ad-break?event_id=${eventId}`)).status, 401, 'no token');
  });

  await t.test('the worker-owning instance dies mid-break: the other finishes it', async (t) => {
    const r = await api(a, 'POST', 'squeeze-ad-break', { event_id: eventId, break_duration: 4 * SEG });
    t.equal(r.status, 200);
    const id = r.body.break_id as string;
    const owner = await until(
      'a lease owner',
      async () =>
        (
          await a.stores.sql<{ lease_owner: string | null }[]>`select lease_owner from squeeze_break where id = ${id}`
        )[0]?.lease_owner,
    );
    const [dying, survivor] = owner === a.breakWorker.owner ? [a, b] : [b, a];
    await dying.breakWorker.stop(false); // as after kill -9: the lease is not handed back, it lapses
    const done = await until(
      'break completed by the survivor',
      async () => {
        const g = await api(survivor, 'GET', `squeeze-ad-break/${id}`);
        return g.body.status === 'completed' && g.body;
      },
      40_000,
    );
    t.ok(
      done.segments.every((s: { status: string }) => s.status === 'ready'),
      'every segment composed',
    );
    const finalOwner = (
      await survivor.stores.sql<
        { lease_owner: string | null }[]
      >`select lease_owner from squeeze_break where id = ${id}`
    )[0];
    t.not(finalOwner?.lease_owner, dying.breakWorker.owner);
  });
});
