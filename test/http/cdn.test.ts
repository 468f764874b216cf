/**
 * Issue 27 on the DAI manifest proxy, over HTTP against the simulated DAI host: strong ETags and
 * 304s, gzip that decompresses to exactly the identity answer, Vary merged with CORS, the cache
 * headers per answer kind, and no 304 for a body that changed (an upstream update, a trim change).
 */
import t from 'tap';
import zlib from 'node:zlib';
import { request } from 'undici';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';

const STREAM = 'cdn0c3b-aaaa-bbbb-cccc-1234567890ab:LOC';
const base = `/linear/hls/pa/event/EVKEY/stream/${STREAM}`;
const PLAYER = 'https://player.example.com';

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

/**
 * An identity and a gzip answer of one rendering: pulled until both carry the same ETag (the live
 * playlist moves on at segment boundaries, so two pulls may straddle one). Bounded by the number
 * of boundaries a few pulls can cross.
 */
async function pair(url: string, extra: Record<string, string> = {}): Promise<{ plain: Pulled; gz: Pulled }> {
  for (let i = 0; i < 5; i++) {
    const plain = await pull(url, extra);
    const gz = await pull(url, { ...extra, 'accept-encoding': 'gzip, deflate, br' });
    const tag = header(plain, 'etag');
    // The gzip form's tag is the identity's with -gz; a body too small to compress keeps it.
    if (`${tag.slice(0, -1)}-gz"` === header(gz, 'etag') || (tag !== '' && tag === header(gz, 'etag')))
      return { plain, gz };
  }
  throw new Error(`no two pulls of ${url} saw one rendering`);
}

t.test('DAI manifest proxy as a CDN origin', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  let windowSegs = 0;
  const events = {
    generation: 0,
    forAssetKey: (k: string | undefined) =>
      k === 'TRIM' ? { eventId: 9, windowSegs, liveEdgeDelaySegments: 0 } : { windowSegs: 0, liveEdgeDelaySegments: 0 },
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

  for (const [kind, path] of Object.entries(kinds)) {
    t.test(`${kind}: gzip decompresses to the identity answer, Vary on both, ETag → 304, stale → 200`, async (t) => {
      const { plain, gz } = await pair(url(path), { origin: PLAYER });
      t.equal(plain.status, 200);
      t.equal(header(plain, 'content-encoding'), '', 'identity without Accept-Encoding');
      t.match(header(plain, 'etag'), /^"[A-Za-z0-9_-]{22}"$/, 'a strong ETag');
      t.equal(header(plain, 'vary'), 'Origin, Accept-Encoding', 'one Vary, merged with the CORS one');
      t.equal(header(gz, 'vary'), 'Origin, Accept-Encoding');
      t.equal(header(gz, 'access-control-allow-origin'), PLAYER, 'CORS still echoed');
      if (plain.raw.byteLength < 1024) {
        // Below COMPRESS_MIN_BYTES (the simulator's master): identity for every client, still Vary.
        t.equal(header(gz, 'content-encoding'), '', 'a small master goes out as it is');
      } else {
        t.equal(header(gz, 'content-encoding'), 'gzip');
        t.ok(gz.raw.byteLength < plain.raw.byteLength, `${gz.raw.byteLength} < ${plain.raw.byteLength} bytes`);
        t.ok(zlib.gunzipSync(gz.raw).equals(plain.raw), 'gunzip(body) is exactly the identity body');
        t.equal(Number(header(gz, 'content-length')), gz.raw.byteLength);
      }
      const head = await pull(url(path), { 'accept-encoding': 'gzip' }, 'HEAD');
      t.equal(head.raw.byteLength, 0, 'HEAD: no body');
      t.equal(header(head, 'content-encoding'), header(gz, 'content-encoding'), 'HEAD: the same encoding');
      t.equal(header(head, 'vary'), 'Origin, Accept-Encoding');

      // Revalidation: the current tag (either form's) → 304 without a body; a stale one → 200 and the body.
      for (let i = 0; ; i++) {
        const cur = await pull(url(path), { 'accept-encoding': 'gzip' });
        const nm = await pull(url(path), { 'if-none-match': header(cur, 'etag'), 'accept-encoding': 'gzip' });
        if (nm.status === 200) {
          // The playlist moved on between the two pulls: a new body, so a new tag.
          t.not(header(nm, 'etag'), header(cur, 'etag'), 'a 200 on revalidation carries a new tag');
          if (i < 4) continue;
        }
        t.equal(nm.status, 304, 'If-None-Match with the current ETag → 304');
        t.equal(nm.raw.byteLength, 0, '304: no body');
        t.equal(header(nm, 'content-length'), '', '304: no Content-Length');
        t.equal(header(nm, 'etag'), header(cur, 'etag'));
        t.equal(header(nm, 'cache-control'), header(cur, 'cache-control'), '304: Cache-Control');
        t.equal(header(nm, 'vary'), 'Origin, Accept-Encoding', '304: Vary');
        break;
      }
      const stale = await pull(url(path), { 'if-none-match': '"AAAAAAAAAAAAAAAAAAAAAA"' });
      t.equal(stale.status, 200, 'a stale tag → 200');
      t.ok(stale.raw.byteLength > 0, 'with the body');
      const star = await pull(url(path), { 'if-none-match': '*' });
      t.equal(star.status, 304, 'If-None-Match: * → 304');
    });
  }

  t.test('Accept-Encoding q-values: gzip;q=0 and identity-only get identity', async (t) => {
    for (const ae of ['gzip;q=0', 'identity', 'br', '*;q=0', 'gzip;q=0, *;q=1', 'deflate;q=0.5, gzip;q=0.000']) {
      const r = await pull(url(kinds.variant), { 'accept-encoding': ae });
      t.equal(header(r, 'content-encoding'), '', `${ae}: identity`);
      t.equal(header(r, 'vary'), 'Origin, Accept-Encoding');
    }
    for (const ae of ['GZIP', 'x-gzip', '*', 'identity;q=0, gzip;q=0.1', 'br;q=1, gzip;q=0.5']) {
      t.equal(
        header(await pull(url(kinds.variant), { 'accept-encoding': ae }), 'content-encoding'),
        'gzip',
        `${ae}: gzip`,
      );
    }
  });

  t.test('cache headers per answer kind', async (t) => {
    const variant = await pull(url(kinds.variant));
    // The simulator's target duration is 6 s: fresh for 3, stale while revalidating for 6, through errors for 12.
    t.equal(header(variant, 'cache-control'), 'public, max-age=3, stale-while-revalidate=6, stale-if-error=12');
    t.equal(header(await pull(url(kinds.master)), 'cache-control'), 'public, max-age=2, stale-if-error=30');
    t.match(
      header(await pull(url(kinds.mpd)), 'cache-control'),
      /^public, max-age=1, stale-while-revalidate=\d+, stale-if-error=\d+$/,
    );
    t.equal(header(variant, 'last-modified'), '', 'a live playlist has no Last-Modified');
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
