/**
 * Sources of the squeezeback player flow other than a master with program date-time (issue 14):
 * a live source without EXT-X-PROGRAM-DATE-TIME squeezed in both flows (break segments placed by
 * media sequence and accumulated durations, identical on two instances), a source that is a media
 * playlist, and percent-encoded variant paths. Two instances on one Postgres and Redis; the origin,
 * ad server and transcoder simulated (lib/sim: `/source/nopdt/…` playlists carry no PDT).
 */
import t, { type Test } from 'tap';
import http from 'node:http';
import { request } from 'undici';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../lib/sim/transcoder.js';
import type { Service } from '../../lib/app.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../helpers/services.js';

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

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

/** A GET with the path sent as written (a URL parser would resolve `%2e%2e` before sending it). */
function rawStatus(base: string, path: string): Promise<number> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: u.hostname, port: u.port, path }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** The URIs between the break's CUE-OUT and its CUE-IN (the break segments), once the playlist holds both. */
function breakSegments(text: string): string[] | undefined {
  const lines = text.split('\n');
  const out = lines.findIndex((l) => l.startsWith('#EXT-X-CUE-OUT:'));
  const back = lines.indexOf('#EXT-X-CUE-IN', out);
  if (out === -1 || back === -1) return undefined;
  return lines.slice(out, back).filter((l) => l && !l.startsWith('#'));
}

t.test('squeezeback sources: no PDT, a media playlist, percent-encoded paths', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const ads = await new AdServerSim({ ads: [{ id: 'ad-1', durationSec: 4 }] }).start();
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
  };
  const a = await startTestService(t, common);
  const b = await startTestService(t, common);
  const tok = await token(a);
  const api = (s: Service, method: string, path: string, json?: unknown) =>
    call(s.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  t.equal((await api(a, 'PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  const eventOf = async (asset: string, source: string) => {
    const r = await api(a, 'PUT', 'squeeze-event-config', {
      asset_id: asset,
      source_uri: `${sim.url}${source}`,
      brand_config_id: 'acme',
      // The transcoder's time: a segment listed as content stays content (docs/decisions.md).
      live_edge_delay_segments: 2,
    });
    t.equal(r.status, 200);
    return r.body.id as number;
  };
  const sbn = await eventOf('SBN', '/source/nopdt/master.m3u8');
  const dn = await eventOf('DN', '/source/nopdt/master.m3u8');
  await eventOf('SBM', '/source/media/variant/720p.m3u8');
  await sleep(300); // the events reach B through pub/sub
  const outputs = () =>
    transcoder.jobs.filter((j) => j.ad_uri.startsWith(ads.url)).map((j) => transcoder.outputUri(j.output_key));

  /** A break on `eventId` for one stream, then the stream's variant through A and B until it has been squeezed and has come back. */
  const squeezedRun = async (t: Test, eventId: number, streamId: string, variantOf: (s: Service) => string) => {
    const plain = await get(variantOf(a));
    t.equal(plain.status, 200, plain.body);
    t.notOk(plain.body.includes('#EXT-X-PROGRAM-DATE-TIME'), 'the source has no program date-time');
    const started = await api(b, 'PUT', 'squeeze-ad-break', {
      event_id: eventId,
      break_duration: 3 * SEG,
      stream_ids: [streamId],
    });
    t.equal(started.status, 200, JSON.stringify(started.body));
    t.match(started.body, { status: 'scheduled', streams: 1 });
    const squeezed = await until('squeezeback segments in the variant on A and B', async () => {
      const [va, vb] = await Promise.all([get(variantOf(a)), get(variantOf(b))]);
      return outputs().some((o) => va.body.includes(o) && vb.body.includes(o)) && va.body;
    });
    t.match(squeezed, /#EXT-X-CUE-OUT:6\n|#EXT-X-CUE-OUT-CONT:/, 'cue-out');
    await until(
      'identical variants on A and B',
      async () => (await get(variantOf(a))).body === (await get(variantOf(b))).body,
    );
    const done = await until('the whole break and its cue-in in the window', async () => {
      const body = (await get(variantOf(a))).body;
      return breakSegments(body) && body;
    });
    const segs = breakSegments(done)!;
    t.equal(segs.length, 3, 'three 2 s segments for a 6 s break: placed by media sequence and accumulated durations');
    t.ok(
      segs.every((u) => outputs().includes(u)),
      'every break segment squeezed',
    );
    t.match(
      done,
      /#EXT-X-CUE-IN\n#EXTINF:2\.000,\nhttp:\/\/127\.0\.0\.1:\d+\/content\/nopdt_720p\/seg_\d+\.ts\n/,
      'cue-in before the next content segment',
    );
    t.equal(done, (await get(variantOf(b))).body, 'identical on both instances');
    await until(
      'the break completes',
      async () =>
        (await api(a, 'GET', `squeeze-ad-break/${started.body.break_id as string}`)).body.status === 'completed',
    );
  };

  const sidOf = (body: string, path = 'variant/720p.m3u8') =>
    new RegExp(`^(\\d{9})/${path.replace('.', '\\.')}$`, 'm').exec(body)?.[1];

  // The two PDT-less runs are on events and streams of their own and wait on the real clock (two
  // 6 s breaks): they run side by side, each a buffered subtest of its own.
  await t.test('sources without PDT, both flows at once', { jobs: 2 }, async (t) => {
    t.test('a source without PDT is squeezed (squeezeback flow)', async (t) => {
      const m = await get(`${a.url}/squeezeback/SBN/master.m3u8?kv=np`);
      t.equal(m.status, 200);
      const sid = sidOf(m.body)!;
      t.ok(sid, 'a stream');
      await Promise.all([a.streams.flush(), b.streams.flush()]);
      await squeezedRun(t, sbn, sid, (s) => `${s.url}/squeezeback/SBN/${sid}/variant/720p.m3u8`);
    });

    t.test('a source without PDT is squeezed (DAI flow)', async (t) => {
      t.equal((await get(`${a.url}/dai/adproxy?stream_id=DNP1&asset_key=DN&imafw_kv=dai`)).status, 200);
      await Promise.all([a.streams.flush(), b.streams.flush()]);
      await squeezedRun(
        t,
        dn,
        'DNP1',
        (s) => `${s.url}/dai/manifest/linear/hls/event/DN/stream/DNP1/nopdt/variant/720p.m3u8`,
      );
    });
  });

  await t.test('a source that is a media playlist: a master of one variant', async (t) => {
    const m = await get(`${b.url}/squeezeback/SBM/master.m3u8`);
    t.equal(m.status, 200, m.body);
    const sid = sidOf(m.body, '720p.m3u8');
    t.ok(sid, 'one variant under the stream id');
    t.match(m.body, /^#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\d+\n\d{9}\/720p\.m3u8\n$/, 'exactly one variant');
    const v = await get(`${a.url}/squeezeback/SBM/${sid}/720p.m3u8`);
    t.equal(v.status, 200);
    t.match(
      v.body,
      new RegExp(`^${sim.url}/content/720p/seg_\\d+\\.ts$`, 'm'),
      'the media playlist, segments absolute on the origin',
    );
  });

  await t.test('percent-encoded paths: plain characters decoded, traversal and separators refused', async (t) => {
    const m = await get(`${a.url}/squeezeback/%53BN/master.m3u8`);
    t.equal(m.status, 200, 'an encoded letter in the asset id');
    const sid = sidOf(m.body)!;
    const plain = await get(`${a.url}/squeezeback/SBN/${sid}/variant/720p.m3u8`);
    const encoded = await get(`${a.url}/squeezeback/SBN/${sid}/%76ariant/%37%32%30p.m3u8`);
    t.equal(encoded.status, 200);
    t.equal(encoded.body, plain.body, 'the same variant as its plain spelling');
    t.equal(
      (await get(`${a.url}/squeezeback/SBN/${sid}/variant/720%70.m3u8`)).status,
      200,
      'an encoded letter before the extension',
    );
    for (const p of [
      `SBN/${sid}/%2e%2e/variant/720p.m3u8`,
      `SBN/${sid}/%2E%2E/720p.m3u8`,
      `SBN/${sid}/.%2e/720p.m3u8`,
      `SBN/${sid}/%2e/720p.m3u8`,
      `SBN/${sid}/variant%2f720p.m3u8`,
      `SBN/${sid}/variant%2F720p.m3u8`,
      `SBN/${sid}/variant%5c720p.m3u8`,
      `SBN/${sid}/a%00.m3u8`,
      `SBN/${sid}/a%0d%0a.m3u8`,
      `SBN/${sid}/a%zz.m3u8`,
      `SBN/${sid}/a%.m3u8`,
      `SBN/${sid}/a%c3.m3u8`,
      `%2e%2e/master.m3u8`,
      `SBN%2f..%2f/master.m3u8`,
      `SBN/${sid}/variant/720p%2em3u8%2f..`,
    ]) {
      t.equal(await rawStatus(a.url, `/squeezeback/${p}`), 400, p);
    }
  });
});
