/**
 * Hygiene (issue 24 item 6): a bare CR ends a line in every HLS reader (so no player that splits
 * on CR sees a line the rewriter never classified); public error bodies name no internal address
 * or upstream URL (the reason is logged under the answer's request id); METRICS_TOKEN guards
 * `/metrics`.
 */
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import { request } from 'undici';
import {
  PlaylistRewriter,
  rewritePlaylist,
  mapMasterUris,
  trimThenRewrite,
  type UriRules,
} from '../../lib/hls/index.js';
import { masterVariants } from '../../lib/squeeze/breaks/source.js';
import { playlistLines } from '../../lib/stitch/hls/master.js';
import { masterRenditions } from '../../lib/inspection/hls-pods.js';
import { readHlsCues } from '../../lib/scte35/hls-cues.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';

const RULES: UriRules = {
  daiHost: 'https://dai.example',
  proxyBase: 'https://svc.example/dai/manifest',
  contentOrigin: 'https://origin.example',
  playlistUrl: 'https://dai.example/p/media.m3u8',
};
const MEDIA_LF =
  '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:7\n#EXTINF:2.0,\n/content/a.ts\n#EXTINF:2.0,\n/content/b.ts\n#EXTINF:2.0,\n/content/c.ts\n';
/** The same playlist with a bare CR (and a CRLF) where LFs were: what a player splitting on CR would read as MEDIA_LF. */
const MEDIA_CR = MEDIA_LF.replace(
  '/content/a.ts\n#EXTINF:2.0,\n/content/b.ts',
  '/content/a.ts\r#EXTINF:2.0,\r\n/content/b.ts',
);
const MASTER_LF =
  '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nlow.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2000000\nhigh.m3u8\n';
const MASTER_CR = MASTER_LF.replace('low.m3u8\n', 'low.m3u8\r');

function chunked(text: string, at: number): string {
  const r = new PlaylistRewriter(RULES);
  const bytes = Buffer.from(text);
  return r.push(bytes.subarray(0, at)) + r.push(bytes.subarray(at)) + r.end();
}

t.test('a bare CR ends a line in every HLS reader', async (t) => {
  const whole = rewritePlaylist(MEDIA_LF, RULES).text;
  t.match(whole, /^https:\/\/origin\.example\/content\/b\.ts$/m, 'the LF form rewrites b.ts');
  t.equal(
    rewritePlaylist(MEDIA_CR, RULES).text,
    whole,
    'the rewriter: a URI after a bare CR is rewritten like any other line',
  );
  t.notOk(rewritePlaylist(MEDIA_CR, RULES).text.includes('\r'), 'no CR reaches the player');
  let splits = 0;
  for (let at = 1; at < MEDIA_CR.length; at++) if (chunked(MEDIA_CR, at) === whole) splits++;
  t.equal(splits, MEDIA_CR.length - 1, 'the same output wherever a chunk boundary falls (a CR, a CRLF split in two)');
  const long = (sep: string) =>
    `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:7\n${'abcdefgh'
      .split('')
      .map((c) => `#EXTINF:2.0,${sep}/content/${c}.ts`)
      .join('\n')}\n`;
  const trimmed = trimThenRewrite(long('\n'), new PlaylistRewriter(RULES), { windowSegments: 3, delaySegments: 0 });
  t.match(trimmed, /#EXT-X-MEDIA-SEQUENCE:12\n/, 'the LF form is trimmed to its last three segments');
  t.equal(
    trimThenRewrite(long('\r'), new PlaylistRewriter(RULES), { windowSegments: 3, delaySegments: 0 }),
    trimmed,
    'the live-window trim counts the same segments',
  );
  t.same(
    masterVariants(MASTER_CR, 'https://o.example/m.m3u8'),
    masterVariants(MASTER_LF, 'https://o.example/m.m3u8'),
    "the break worker's master reader",
  );
  t.same(playlistLines(MEDIA_CR), playlistLines(MEDIA_LF), "the stitcher's lines");
  t.equal(readHlsCues(MEDIA_CR).segments.length, 3, 'the SCTE-35 cue reader sees three segments');
  t.same(
    mapMasterUris(MASTER_CR, (u) => `X/${u}`),
    mapMasterUris(MASTER_LF, (u) => `X/${u}`),
    "the squeezeback master's URI map",
  );
  t.same(
    masterRenditions(MASTER_CR, 'https://o.example/m.m3u8'),
    masterRenditions(MASTER_LF, 'https://o.example/m.m3u8'),
    "the ID3 inspection's master reader",
  );
});

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

/** A port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

t.test('over HTTP', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const crHost = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
    res.end(MEDIA_CR);
  });
  const crPort = await listen(crHost);
  t.teardown(() => new Promise<void>((r) => (crHost.closeAllConnections(), crHost.close(() => r()))));
  const metricsToken = 'metrics-token-0123456789abcdef';
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: `http://127.0.0.1:${crPort}`,
    contentOrigin: 'https://origin.example',
    allowPrivateOutbound: true,
    metricsToken,
  });

  t.test('the manifest proxy: a bare CR in an upstream playlist', async (t) => {
    const res = await call(service.url, 'GET', '/dai/manifest/linear/hls/pa/event/CR/stream/cr1:LOC/variant/720p.m3u8');
    t.equal(res.status, 200);
    t.notOk(res.text.includes('\r'), 'no CR in the answer');
    t.match(
      res.text,
      /^https:\/\/origin\.example\/content\/b\.ts$/m,
      'the segment after the CR was classified and rewritten',
    );
    t.equal(
      res.text.split('\n').filter((l) => l.startsWith('https://origin.example/content/')).length,
      3,
      'three segments, each on its own line',
    );
  });

  t.test('METRICS_TOKEN', async (t) => {
    const bare = await call(service.url, 'GET', '/metrics');
    t.equal(bare.status, 401, 'no token: 401');
    t.equal(bare.headers['content-type'], 'application/problem+json');
    t.match(String(bare.headers['www-authenticate']), /^Bearer/);
    t.notOk(bare.text.includes('http_management'), 'no metric in the refusal');
    t.equal(
      (
        await call(service.url, 'GET', '/metrics', {
          headers: { authorization: 'Bearer wrong-token-0123456789abcdef' },
        })
      ).status,
      401,
      'a wrong token: 401',
    );
    t.equal(
      (await call(service.url, 'GET', '/metrics', { headers: { 'x-metrics-token': metricsToken.slice(0, -1) } }))
        .status,
      401,
      'a prefix of the token: 401',
    );
    const bearer = await call(service.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
    t.equal(bearer.status, 200, 'Authorization: Bearer');
    t.match(bearer.text, /process_resident_memory_bytes/);
    t.equal(
      (await call(service.url, 'GET', '/metrics', { headers: { 'x-metrics-token': metricsToken } })).status,
      200,
      'X-Metrics-Token',
    );
    t.equal((await call(service.url, 'GET', '/healthz')).status, 200, '/healthz stays open');
  });
});

t.test('public error bodies name no internal address', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const port = await closedPort();
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    daiHost: `http://127.0.0.1:${port}`,
    allowPrivateOutbound: true,
    upstreamDeadlineMs: 2000,
  });
  const res = await request(`${service.url}/dai/manifest/linear/hls/pa/event/GONE/stream/g1:LOC/master.m3u8`);
  const text = await res.body.text();
  t.equal(res.statusCode, 502);
  t.notOk(text.includes('127.0.0.1'), `no address: ${text}`);
  t.notOk(text.includes(String(port)), 'no port');
  t.notOk(/ECONNREFUSED|connect /i.test(text), 'no socket error');
  const body = JSON.parse(text) as { type: string; detail: string; request_id?: string };
  t.equal(body.type, 'urn:squeezeback:problem:upstream-failed');
  t.match(body.request_id, /\S/, 'a request id to find the reason in the log');
});
