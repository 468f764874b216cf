/**
 * Collaborators failing (docs/design.md §4 "Upstream failure", §7 "undici"; decisions.md
 * "Decisioning"): the DAI host refusing connections, black-holing, trickling bytes or sending
 * garbage gives a quick 502/504 problem within UPSTREAM_DEADLINE_MS, and a last-good manifest is
 * served stale (with Age) for at most two target durations. The ad server down, slow, garbage or
 * empty still lets a squeeze break start, on the configured fallback ads.
 */
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import { AdServerSim, type AdServerMode } from '../../lib/sim/ad-server.js';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';
import { sleep, timedGet, timedRequest } from './helpers.js';

const DEADLINE_MS = 500;
const TARGET_SEC = 1;
const PLAYLIST = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:${TARGET_SEC}\n#EXT-X-MEDIA-SEQUENCE:1\n#EXTINF:1.0,\n/content/a1.ts\n#EXTINF:1.0,\n/content/a2.ts\n`;

type Mode = 'ok' | 'refuse' | 'blackhole' | 'trickle' | 'garbage';

/** A DAI host whose behaviour the test switches; 'refuse' closes the listening socket itself. */
async function switchableHost(t: Tap): Promise<{ url: string; set(mode: Mode): Promise<void> }> {
  let mode: Mode = 'ok';
  const server = http.createServer((req, res) => {
    if (mode === 'blackhole') return;
    if (mode === 'garbage')
      return res.writeHead(200).end(Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13, 0]).toString('latin1').repeat(200));
    if (mode === 'trickle') {
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
      const timer = setInterval(() => res.write('#'), 50);
      return res.on('close', () => clearInterval(timer));
    }
    res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end(PLAYLIST);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return {
    url: `http://127.0.0.1:${port}`,
    set: async (next) => {
      server.closeAllConnections();
      if (next === 'refuse' && server.listening) await new Promise<void>((r) => server.close(() => r()));
      if (next !== 'refuse' && !server.listening)
        await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
      mode = next;
    },
  };
}
type Tap = import('tap').Test;

t.test('the DAI host failing', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const host = await switchableHost(t);
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: host.url,
    contentOrigin: 'https://origin.example.org',
    upstreamDeadlineMs: DEADLINE_MS,
  });
  let n = 0;
  // A new stream each time, so no cached or stale copy answers.
  const fresh = () =>
    timedGet(`${service.url}/dai/manifest/linear/hls/event/E/stream/S${++n}/variant/720p.m3u8`, {}, 5000);
  const budget = DEADLINE_MS + 300;

  for (const [mode, status, type] of [
    ['refuse', 502, 'upstream-failed'],
    ['blackhole', 504, 'upstream-timeout'],
    ['trickle', 504, 'upstream-timeout'],
    ['garbage', 502, 'upstream-failed'],
  ] as const) {
    await host.set(mode);
    const r = await fresh();
    t.equal(r.status, status, `${mode}: ${status}`);
    t.equal(r.type, type, `${mode}: problem ${type}`);
    t.ok(r.ms <= budget, `${mode}: answered in ${r.ms} ms (deadline ${DEADLINE_MS} ms)`);
  }

  t.test('a last-good manifest is served stale, with Age, for at most two target durations', async (t) => {
    await host.set('ok');
    const path = `${service.url}/dai/manifest/linear/hls/event/E/stream/STALE/variant/720p.m3u8`;
    const good = await timedGet(path);
    t.equal(good.status, 200);
    const goodAt = Date.now();
    await host.set('blackhole');
    await sleep(TARGET_SEC * 1000); // past freshness (half a target duration)
    const stale = await timedGet(path);
    t.equal(stale.status, 200, 'served stale while the upstream black-holes');
    t.equal(stale.body, good.body, 'the last-good body');
    t.ok(Number(stale.headers?.['age']) >= 1, `with Age (${String(stale.headers?.['age'])})`);
    t.ok(stale.ms <= budget, `within the deadline (${stale.ms} ms)`);
    await sleep(Math.max(0, goodAt + 2 * TARGET_SEC * 1000 + 200 - Date.now()));
    const expired = await timedGet(path);
    t.equal(expired.status, 504, 'no longer once two target durations passed');
    await host.set('ok');
    t.equal((await timedGet(path)).status, 200, 'fresh again once the upstream answers');
  });
});

t.test('the ad server failing: the break still starts, on the fallback ads', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({ shape: { segmentSec: 2 } }).start();
  const ads = await new AdServerSim({ slowMs: 8000 }).start();
  t.teardown(async () => {
    sim.stop();
    await ads.stop();
  });
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: sim.url,
    contentOrigin: sim.url,
    adServerUrl: `${ads.url}/ad`,
    allowPrivateOutbound: true,
  });
  const tok = await token(service);
  const api = (method: string, p: string, json?: unknown) =>
    call(service.url, method, `/api/v1/${p}`, { token: tok, ...(json === undefined ? {} : { json }) });
  t.equal((await api('PUT', 'squeeze-brand-config', { brand_id: 'faults' })).status, 200);

  for (const mode of ['error', 'slow', 'garbage', 'empty'] as AdServerMode[]) {
    ads.mode = mode;
    const ev = await api('PUT', 'squeeze-event-config', {
      asset_id: `ADS-${mode}`,
      source_uri: `${sim.url}/source/master.m3u8`,
      brand_config_id: 'faults',
    });
    t.equal(ev.status, 200);
    t.equal(
      (
        await api('PUT', 'squeeze-configured-ad', {
          event_id: ev.body.id,
          abid: 'fb',
          ad_uri: `${ads.url}/creatives/fallback.mp4`,
          duration: 10,
          is_curated: false,
        })
      ).status,
      200,
    );
    const started = await timedRequest('POST', `${service.url}/api/v1/squeeze-ad-break`, {
      headers: { authorization: `Bearer ${tok}` },
      json: { event_id: ev.body.id, break_duration: 10 },
      timeoutMs: 15_000,
    });
    const body = started.body ? JSON.parse(started.body) : {};
    t.equal(started.status, 200, `${mode}: the break is created`);
    t.not(body.status, 'failed', `${mode}: and is not failed (${body.status})`);
    t.match(body.ads?.[0]?.uri, /fallback\.mp4$/, `${mode}: on the fallback ad`);
    t.ok(body.decision?.reason, `${mode}: the reason is given (${body.decision?.reason})`);
    t.ok(started.ms < 4000, `${mode}: decided in ${started.ms} ms (ad request deadline 3 s)`);
  }
});
