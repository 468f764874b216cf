/**
 * Issue 24 item 4 (rest): a stitched session stores its plan and nothing else per session; the
 * POST answer is kept in memory only. Before/after: the POST answer and every file a GET serves
 * for fixture VMAPs (Eyevinn's vast-info VMAP, and a VMAP of three breaks around Eyevinn's test ad
 * server VAST, in HLS and in DASH), their MP4 media files pointed at a fixture HLS or DASH ad, are compared with what the code
 * stored whole answered before the change (test/stitch/golden/*.json, recorded with
 * STITCH_GOLDEN_RECORD=1 on the commit before). Only what changes per run is normalised: the
 * session id, the origin's port and the beacon URLs' expiry (`x`) and signature.
 */
import t from 'tap';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { request } from 'undici';
import { createLogger } from '../../lib/log/index.js';
import { migrate } from '../../lib/store/db.js';
import { resolveAds } from '../../lib/ads/index.js';
import { StaticHostSim } from '../../lib/sim/static-host.js';
import { StitchService, type StitchServiceDeps } from '../../lib/stitch/service.js';
import { StitchStore } from '../../lib/stitch/store.js';
import { fixture, fixturesDir } from '../helpers/fixtures.js';
import { freshSchemaUrl, needServices } from '../helpers/services.js';

const log = createLogger('silent');
const GOLDEN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden');
const RECORD = process.env['STITCH_GOLDEN_RECORD'] === '1';
const SEGMENT_SEC = 6;
const CONTENT_SEC = 3600;

/** A 1-hour VOD of two variants. */
function content(files: Map<string, string>): void {
  files.set(
    '/vod/master.m3u8',
    [
      '#EXTM3U',
      '#EXT-X-STREAM-INF:BANDWIDTH=2497000,RESOLUTION=1024x576,CODECS="avc1.77.30,mp4a.40.2"',
      'v0/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=4497000,RESOLUTION=1280x720,CODECS="avc1.77.30,mp4a.40.2"',
      'v1/index.m3u8',
    ].join('\n') + '\n',
  );
  for (const v of [0, 1]) {
    const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${SEGMENT_SEC}`, '#EXT-X-PLAYLIST-TYPE:VOD'];
    for (let i = 0; i < CONTENT_SEC / SEGMENT_SEC; i++) lines.push(`#EXTINF:${SEGMENT_SEC}.000,`, `seg_${i}.ts`);
    lines.push('#EXT-X-ENDLIST');
    files.set(`/vod/v${v}/index.m3u8`, lines.join('\n') + '\n');
  }
}

/** A fixture VMAP made stitchable here: MP4 media files → the fixture HLS (or DASH) ad, wrapper tags → a refused address. */
function stitchable(vmap: string, adMaster: string, type = 'application/x-mpegURL'): string {
  return vmap
    .replace(
      /(<MediaFile\b[^>]*?)type="video\/mp4"([^>]*>)\s*(<!\[CDATA\[)?[^<\]]*(\]\]>)?/g,
      `$1type="${type}"$2<![CDATA[${adMaster}]]>`,
    )
    .replace(/(<VASTAdTagURI>\s*<!\[CDATA\[)[^\]]*/g, '$1http://127.0.0.1:9/refused');
}

function vmapAround(vast: string, offsets: string[]): string {
  const body = vast.replace(/^<\?xml[^>]*>\s*/, '');
  return (
    '<vmap:VMAP xmlns:vmap="http://www.iab.net/vmap-1.0" version="1.0">' +
    offsets
      .map(
        (o, i) =>
          `<vmap:AdBreak timeOffset="${o}" breakType="linear" breakId="b${i}"><vmap:AdSource id="s${i}"><vmap:VASTAdData>${body}</vmap:VASTAdData></vmap:AdSource></vmap:AdBreak>`,
      )
      .join('') +
    '</vmap:VMAP>'
  );
}

const CASES: Array<{ name: string; protocol?: 'dash'; vmap: (ad: string) => string }> = [
  { name: 'eyevinn-vast-info-vmap', vmap: (ad) => stitchable(fixture('vmap/eyevinn-vast-info/vmap.xml'), ad) },
  {
    name: 'eyevinn-test-adserver-3-breaks',
    vmap: (ad) =>
      stitchable(vmapAround(fixture('vast/eyevinn-test-adserver/test_vast.xml'), ['start', '00:30:00', 'end']), ad),
  },
  {
    // DASH: Eyevinn's go-dash segment timeline VOD (65 s) and a DASH-IF ad-insertion test ad.
    name: 'dash-eyevinn-test-adserver-3-breaks',
    protocol: 'dash',
    vmap: (ad) =>
      stitchable(
        vmapAround(fixture('vast/eyevinn-test-adserver/test_vast.xml'), ['start', '00:00:30', 'end']),
        ad,
        'application/dash+xml',
      ),
  },
];

t.test('the POST answer and the GET answers are those of before; only the plan is stored', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const files = new Map<string, string>();
  content(files);
  files.set('/vod/dash/manifest.mpd', fixture('dash/eyevinn-dash-mpd/go-dash-fixtures/segment_timeline.mpd'));
  files.set('/ads/dash/ad1.mpd', fixture('dash/dash-mpd-rs/ad-insertion-testcase6-av1.mpd'));
  for (const f of readdirSync(path.join(fixturesDir, 'hls/eyevinn-hls-splice/ad1')))
    files.set(`/ads/ad1/${f}`, readFileSync(path.join(fixturesDir, 'hls/eyevinn-hls-splice/ad1', f), 'utf8'));
  const origin = await new StaticHostSim(files).start();
  t.teardown(() => origin.stop());
  const sql = postgres(await freshSchemaUrl(t), { max: 2, onnotice: () => undefined });
  t.teardown(() => sql.end());
  await migrate(sql, log);
  const fetchText = async (url: string, signal: AbortSignal): Promise<string> => {
    const res = await request(url, { signal });
    const text = await res.body.text();
    if (res.statusCode >= 400) throw new Error(`HTTP ${res.statusCode}`);
    return text;
  };
  const deps = (store: StitchStore, vmapPath: string): StitchServiceDeps => ({
    findAsset: async () =>
      ({
        guid: 'vod-1',
        content_id: null,
        title: 'VOD',
        duration: CONTENT_SEC,
        renditions: [
          { kind: 'hls', url: `${origin.url}/vod/master.m3u8` },
          { kind: 'dash', url: `${origin.url}/vod/dash/manifest.mpd` },
        ],
        cue_points: [],
      }) as never,
    adTag: async () => ({ params: {} }),
    resolve: (url) => resolveAds({ url }, fetchText, { log, streaming: true }),
    fetchText,
    store,
    adServerUrl: `${origin.url}${vmapPath}`,
    publicBaseUrl: () => 'https://edge.example.com',
    stitchPath: 'stitch',
    ttlSec: 600,
    beaconSecret: 'stitch-beacon-secret-0123456789',
    log,
  });

  for (const c of CASES) {
    const vmapPath = `/ads/${c.name}.xml`;
    files.set(vmapPath, c.vmap(c.protocol ? `${origin.url}/ads/dash/ad1.mpd` : `${origin.url}/ads/ad1/master.m3u8`));
    const main = c.protocol ? 'manifest.mpd' : 'master.m3u8';
    const a = new StitchService(deps(new StitchStore(sql), vmapPath));
    const req = {
      protocol: c.protocol ?? ('hls' as const),
      brand: 'acme',
      streamId: `viewer-${c.name}`,
      assetId: 'vod-1',
      targeting: {},
    };
    const answer = await a.stitch(req);
    const id = /\/cache\/([^/]+)\/(master\.m3u8|manifest\.mpd)$/.exec(answer.cache_url)![1]!;
    const normalise = (s: string) =>
      s
        .replaceAll(id, '{id}')
        .replaceAll(origin.url, '{origin}')
        .replaceAll(encodeURIComponent(origin.url), '{origin}')
        .replace(/([?&]x=)[0-9]+/g, '$1{expires}')
        .replace(/([?&]sig=)[A-Za-z0-9_-]+/g, '$1{sig}');

    // Another instance with none of the first one's memory renders the files from the plan in Postgres.
    const bStore = new StitchStore(sql);
    const b = new StitchService(deps(bStore, vmapPath));
    const rendered = await b.files((await bStore.get(id))!);
    const got = {
      answer: JSON.parse(normalise(JSON.stringify(answer))) as unknown,
      files: Object.fromEntries(
        Object.keys(rendered)
          .sort()
          .map((k) => [k, normalise(rendered[k]!)]),
      ),
    };
    const goldenFile = path.join(GOLDEN, `${c.name}.json`);
    if (RECORD) {
      mkdirSync(GOLDEN, { recursive: true });
      writeFileSync(goldenFile, JSON.stringify(got, null, 1) + '\n');
    }
    const golden = JSON.parse(readFileSync(goldenFile, 'utf8')) as typeof got;
    t.ok((got.answer as { breaks: unknown[] }).breaks.length > 0, `${c.name}: breaks with ads`);
    t.same(got.answer, golden.answer, `${c.name}: the POST answer is the one of before`);
    t.same(Object.keys(got.files), Object.keys(golden.files), `${c.name}: the same files`);
    for (const k of Object.keys(golden.files))
      t.equal(got.files[k], golden.files[k], `${c.name}: ${k} byte for byte the one of before`);

    // Asked again on the instance that answered: the same answer, from memory.
    t.same(await a.stitch(req), answer, `${c.name}: asked again here, the same answer`);
    const [row] = await sql<Array<Record<string, unknown>>>`select * from stitch_session where id = ${id}`;
    const stored = Object.entries(row!)
      .filter(([k, v]) => v !== null && !['id', 'key', 'protocol', 'created_at', 'expires_at'].includes(k))
      .map(([k]) => k);
    t.same(stored, ['plan'], `${c.name}: the row stores the plan and nothing else of the session`);

    // Asked again on an instance that does not hold the answer: stitched anew (a new decision and
    // cache_url); the first session keeps playing under its own id until it expires.
    const again = await b.stitch(req);
    t.not(again.cache_url, answer.cache_url, `${c.name}: another instance stitches anew`);
    t.same(await b.stitch(req), again, `${c.name}: and then answers its own answer`);
    const old = await new StitchStore(sql).get(id);
    t.ok(old?.plan, `${c.name}: the first session is still there`);
    t.equal((await b.files(old!))[main], rendered[main], `${c.name}: and still renders`);
    const c2 = new StitchService(deps(new StitchStore(sql), vmapPath));
    const third = await c2.stitch(req);
    t.not(third.cache_url, again.cache_url, `${c.name}: a third instance stitches anew too`);
  }
});
