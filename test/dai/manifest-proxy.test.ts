/** The manifest proxy over HTTP: the real server against the simulated DAI host (lib/sim). */
import t from 'tap';
import { request } from 'undici';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { keys } from '../../lib/store/index.js';
import { call, rawExchange } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';
import { reparse } from '../hls/reparse.js';

const STREAM = '6e1d2c3b-aaaa-bbbb-cccc-1234567890ab:LOC';
const base = `/linear/hls/pa/event/EVKEY/stream/${STREAM}`;

t.test('DAI manifest proxy', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: 'https://origin.example.org',
    publicBaseUrl: 'https://edge.example.net',
    upstreamDeadlineMs: 800,
  });
  const get = (path: string, headers: Record<string, string> = {}) => call(service.url, 'GET', path, { headers });

  t.test('master: variants and renditions point back at the proxy, query kept (rule 2)', async (t) => {
    const r = await get(`/dai/manifest${base}/master.m3u8?token=abc`);
    t.equal(r.status, 200);
    t.equal(r.headers['content-type'], 'application/vnd.apple.mpegurl');
    t.notMatch(r.text, sim.url, 'no DAI-host URL left');
    t.match(r.text, `https://edge.example.net/dai/manifest${base}/variant/720p.m3u8?token=abc`);
    t.match(r.text, `URI="https://edge.example.net/dai/manifest${base}/audio/en.m3u8?token=abc"`);
    t.equal(reparse(r.text).playlists?.length, 2);
  });

  t.test(
    'variant: relative segments → origin, DAI ad segments untouched, window passes through (rules 3, 5, 6, 7)',
    async (t) => {
      const r = await get(`/dai/manifest${base}/variant/720p.m3u8`);
      t.equal(r.status, 200);
      const upstream = reparse(sim.body(`${base}/variant/720p.m3u8`)!);
      const out = reparse(r.text);
      t.equal(out.segments.length, upstream.segments.length, 'DVR window unchanged with WindowsSegs 0');
      t.equal(out.mediaSequence, upstream.mediaSequence);
      t.ok(
        out.segments.every(
          (s) => s.uri.startsWith('https://origin.example.org/content/') || s.uri.startsWith(`${sim.url}/linear/pod/`),
        ),
        'content → origin, ads stay on the DAI host',
      );
      t.ok(
        out.segments.some((s) => s.uri.startsWith(`${sim.url}/linear/pod/`)),
        'the window carries DAI ads',
      );
      t.match(r.headers['cache-control'], /max-age=3/);
    },
  );

  t.test('encoded colon in the stream id, HEAD without body', async (t) => {
    const enc = await get(
      `/dai/manifest/linear/hls/pa/event/EVKEY/stream/${STREAM.replace(':', '%3A')}/variant/360p.m3u8`,
    );
    t.equal(enc.status, 200);
    const head = await request(`${service.url}/dai/manifest${base}/variant/360p.m3u8`, { method: 'HEAD' });
    t.equal(head.statusCode, 200);
    t.equal(await head.body.text(), '');
    t.ok(Number(head.headers['content-length']) > 100, 'HEAD reports the length');
  });

  t.test('the stream is registered with the event registry without the response waiting (rule 1)', async (t) => {
    await get(`/dai/manifest/linear/hls/pa/event/EVKEY/stream/reg-test:LOC/variant/720p.m3u8`);
    await service.streams.flush();
    const stream = await service.stores.state.hgetall(keys.stream('reg-test:LOC'));
    t.equal(stream['stream_id'], 'reg-test:LOC');
    t.equal(stream['asset_key'], 'EVKEY');
    t.equal(stream['flow'], 'dai');
    t.ok(Number(stream['last_seen']) > Date.now() - 10_000);
  });

  t.test('DASH: Location back through the proxy, segments pinned upstream', async (t) => {
    const r = await get(`/dai/manifest/linear/dash/event/EVKEY/stream/${STREAM}/manifest.mpd`);
    t.equal(r.status, 200);
    t.equal(r.headers['content-type'], 'application/dash+xml');
    t.match(
      r.text,
      `<Location>https://edge.example.net/dai/manifest/linear/dash/event/EVKEY/stream/${STREAM}/manifest.mpd</Location>`,
    );
    t.match(r.text, `<BaseURL>${sim.url}/linear/dash/event/EVKEY/stream/${STREAM}/</BaseURL>`);
  });

  t.test(
    'DASH through the proxy: root-relative content segments go to the content origin, ads stay (issue 25.3)',
    async (t) => {
      // The DAI host's MPD as providers write it: a BaseURL on the DAI host, root-relative content
      // segments (before issue 25 they resolved against that BaseURL, i.e. to the DAI host), an ad
      // Period with absolute segments on the DAI host.
      const path = `/linear/dash/event/EVKEY/stream/${STREAM}/rootrel.mpd`;
      sim.fixed.set(path, {
        body: `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT24S" minBufferTime="PT2S">
  <BaseURL>${sim.url}/linear/dash/event/EVKEY/stream/${STREAM}/</BaseURL>
  <Period id="content-1" duration="PT12S"><AdaptationSet mimeType="video/mp4"><Representation id="v" bandwidth="1000000">
    <SegmentTemplate timescale="1000" duration="6000" initialization="/content/dash/init_$RepresentationID$.mp4" media="/content/dash/seg_$Number$.m4s" startNumber="1"/>
  </Representation></AdaptationSet></Period>
  <Period id="dai_pod-1-ad-1" duration="PT12S"><AdaptationSet mimeType="video/mp4"><Representation id="v" bandwidth="1000000">
    <SegmentTemplate timescale="1000" duration="6000" initialization="${sim.url}/linear/pod/init.mp4" media="${sim.url}/linear/pod/ad_$Number$.m4s" startNumber="1"/>
  </Representation></AdaptationSet></Period>
</MPD>
`,
      });
      t.teardown(() => sim.fixed.delete(path));
      const r = await get(`/dai/manifest${path}`);
      t.equal(r.status, 200);
      // What a player resolves each template against: the BaseURL in force (RFC 3986 §5.2).
      const baseUrl = /<BaseURL>([^<]+)<\/BaseURL>/.exec(r.text)![1]!;
      const templates = [...r.text.matchAll(/(?:initialization|media)="([^"]+)"/g)].map((m) => new URL(m[1]!, baseUrl));
      t.same(
        templates.map((u) => u.origin),
        ['https://origin.example.org', 'https://origin.example.org', sim.url, sim.url],
        'content init and media on the content origin; the ad Period’s on the DAI host',
      );
      t.equal(templates[1]!.pathname, '/content/dash/seg_$Number$.m4s', 'the content path kept');
    },
  );

  t.test('concurrent requests for one upstream URL share one fetch', async (t) => {
    const path = `${base}/variant/collapse.m3u8`;
    const before = sim.requests.get(path) ?? 0;
    const all = await Promise.all(Array.from({ length: 50 }, () => get(`/dai/manifest${path}`)));
    t.ok(all.every((r) => r.status === 200));
    t.equal(new Set(all.map((r) => r.text)).size, 1, 'identical bodies');
    t.equal((sim.requests.get(path) ?? 0) - before, 1, 'one upstream request for 50 clients');
  });

  t.test('with a query: one fetch per path and query, and no path is answered with another’s', async (t) => {
    const master = (stream: string) => `/linear/hls/pa/event/EVKEY/stream/${stream}/master.m3u8`;
    const a = master('6e1d2c3b-aaaa-bbbb-cccc-00000000000a:LOC');
    const b = master('6e1d2c3b-aaaa-bbbb-cccc-00000000000b:LOC');
    const fetched = (path: string) => sim.requests.get(path) ?? 0;
    const before = [fetched(a), fetched(b)];
    const asked = [a, b, a, b].flatMap((path, i) =>
      Array.from({ length: 5 }, () => ({ path, query: i < 2 ? 'q=same' : 'q=other' })),
    );
    const all = await Promise.all(asked.map(({ path, query }) => get(`/dai/manifest${path}?${query}`)));
    all.forEach((r, i) => {
      const { path, query } = asked[i]!;
      const other = path === a ? b : a;
      t.equal(r.status, 200);
      t.match(r.text, `${path.slice(0, -'/master.m3u8'.length)}/variant/720p.m3u8?${query}`, `${path}?${query}`);
      t.notMatch(r.text, other.slice(0, -'/master.m3u8'.length), 'nothing of the other path');
    });
    t.same([fetched(a) - before[0]!, fetched(b) - before[1]!], [2, 2], 'one fetch per path and query');
  });

  t.test('path attacks → 400 problem, nothing fetched', async (t) => {
    const before = sim.requestCount;
    // Raw bytes: an HTTP client library would normalise dot segments before sending.
    const attacks = [
      '/dai/manifest/a/%2e%2e/b.m3u8',
      '/dai/manifest/a/%2E%2E/%2E%2E/b.m3u8',
      '/dai/manifest/a/../../b.m3u8',
      '/dai/manifest/a%2fb.m3u8',
      '/dai/manifest/a/%252e%252e/x.m3u8',
      '/dai/manifest//evil.example.com/x.m3u8',
      '/dai/manifest/user@evil.example/x.m3u8',
      '/dai/manifest/a%5cb.m3u8',
      '/dai/manifest/a\\b.m3u8',
      '/dai/manifest/a%00.m3u8',
      '/dai/manifest/a%0d%0aX-Injected:1/b.m3u8',
      '/dai/manifest/seg.ts',
    ];
    for (const p of attacks) {
      const raw = await rawExchange(service.port, [`GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
      t.match(raw, /^HTTP\/1\.1 400 /, p);
      t.match(raw, /application\/problem\+json/);
      t.notMatch(raw, /X-Injected/i);
    }
    t.equal(sim.requestCount, before, 'no upstream request for any of them');
  });

  t.test(
    'upstream failures: 4xx passed on, 5xx and garbage → 502, slow → 504 within the deadline, stale served',
    async (t) => {
      const fresh = (name: string) => `/dai/manifest${base}/variant/${name}.m3u8`;
      sim.mode = 'notfound';
      t.equal((await get(fresh('nf'))).status, 404);
      sim.mode = 'error';
      const e = await get(fresh('err'));
      t.equal(e.status, 502);
      t.equal(e.headers['content-type'], 'application/problem+json');
      t.equal(e.headers['cache-control'], 'no-store');
      sim.mode = 'garbage';
      t.equal((await get(fresh('garbage'))).status, 502);
      sim.mode = 'slow';
      const started = Date.now();
      const slow = await get(fresh('slow'));
      t.equal(slow.status, 504);
      t.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);

      sim.mode = 'ok';
      const good = await get(fresh('stale'));
      t.equal(good.status, 200);
      await new Promise((r) => setTimeout(r, 1100)); // past the micro-cache's fresh time
      sim.mode = 'error';
      const stale = await get(fresh('stale'));
      t.equal(stale.status, 200, 'last-good manifest served while the upstream fails');
      t.equal(stale.text, good.text);
      t.ok(Number(stale.headers['age']) >= 1, `Age: ${stale.headers['age']}`);
      sim.mode = 'ok';
    },
  );

  t.test('a client that goes away mid-request does not crash the server', async (t) => {
    sim.mode = 'slow';
    sim.slowMs = 300;
    await rawExchange(service.port, [`GET /dai/manifest${base}/variant/gone.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n`], {
      closeAfterSend: true,
    });
    await new Promise((r) => setTimeout(r, 500));
    sim.mode = 'ok';
    t.equal((await get('/healthz')).status, 200);
  });
});

t.test('live window and live-edge delay from the event settings (rule 7), trimmed on the raw playlist', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  const events = {
    generation: 0,
    forAssetKey: (k: string | undefined) =>
      k === 'WIN'
        ? { eventId: 7, windowSegs: 10, liveEdgeDelaySegments: 2 }
        : k === 'DELAY'
          ? { eventId: 8, windowSegs: 0, liveEdgeDelaySegments: 3 }
          : { windowSegs: 0, liveEdgeDelaySegments: 0 },
  };
  const service = await startTestService(
    t,
    { databaseUrl: await freshSchemaUrl(t), daiHost: sim.url, contentOrigin: 'https://origin.example.org' },
    { events },
  );
  const path = (key: string) => `/linear/hls/pa/event/${key}/stream/${key.toLowerCase()}1:LOC/variant/720p.m3u8`;
  const win = await call(service.url, 'GET', `/dai/manifest${path('WIN')}`);
  const upstream = reparse(sim.body(path('WIN'))!);
  const out = reparse(win.text);
  t.equal(out.segments.length, 10);
  const n = upstream.segments.length;
  t.same(
    out.segments.map((s) => s.uri.split('/').pop()),
    upstream.segments.slice(n - 12, n - 2).map((s) => s.uri.split('/').pop()),
    'segments n-12 … n-3',
  );
  t.equal(out.mediaSequence, upstream.mediaSequence! + n - 12);
  t.ok(
    out.segments.every((s) => !s.uri.startsWith('/')),
    'kept segments rewritten',
  );
  // Compared with the upstream playlist of the same moment: asked again when a segment boundary
  // passed during the request (a CI run on a loaded machine saw the sequence one apart).
  let delay, delayUpstream;
  for (let tries = 0; ; tries++) {
    const before = sim.body(path('DELAY'));
    delay = reparse((await call(service.url, 'GET', `/dai/manifest${path('DELAY')}?try=${tries}`)).text);
    if (sim.body(path('DELAY')) === before || tries === 5) {
      delayUpstream = reparse(before!);
      break;
    }
  }
  t.equal(delay.segments.length, delayUpstream.segments.length - 3);
  t.equal(delay.mediaSequence, delayUpstream.mediaSequence);

  // DASH gets the same window (issue 19: MPDs were never trimmed): 10 segments ending 2 before the edge.
  const mpdPath = '/linear/dash/event/WIN/stream/win2:LOC/timeline/manifest.mpd';
  const mpd = (await call(service.url, 'GET', `/dai/manifest${mpdPath}`)).text;
  const times = (xml: string) => {
    const out: number[] = [];
    for (const m of xml.matchAll(/<S t="(\d+)" d="(\d+)"(?: r="(\d+)")?\/>/g))
      for (let i = 0; i <= Number(m[3] ?? 0); i++) out.push(Number(m[1]) + i * Number(m[2]));
    return out;
  };
  const all = times(sim.body(mpdPath) ?? '');
  t.equal(all.length, 30, 'the simulator offers 30 segments');
  const kept = times(mpd);
  t.same(kept, all.slice(18, 28), 'segments 19–28 of 30 kept, timeline rewritten in place');
  t.match(mpd, /timeShiftBufferDepth="PT72S"/, 'the time-shift buffer covers the window plus the delay');
  t.notOk(/<S /.test(mpd) && mpd.includes('r="29"'), 'the original run is split');

  await service.streams.flush();
  const reg = await service.streams.streamIdsOf(7);
  t.same([...reg].sort(), ['win1:LOC', 'win2:LOC'], 'both streams are in their event registry');
  t.same(await service.streams.streamIdsOf(8), ['delay1:LOC']);
});
