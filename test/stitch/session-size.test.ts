/**
 * Issue 24 item 4: a stitched session stores its splice plan, not its rendered texts. A 2-hour,
 * 6-variant HLS VOD with 21 breaks (pre-roll, 19 mid-rolls, post-roll; two ads each) from the ad
 * server simulator, real Postgres: the stored plan is measured (≤ 2 KiB), and a second service,
 * with none of the first one's caches, renders the session from the plan and the sources it reads
 * again over HTTP, byte for byte what the first one rendered.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { request } from 'undici';
import { createLogger } from '../../lib/log/index.js';
import { migrate } from '../../lib/store/db.js';
import { resolveAds } from '../../lib/ads/index.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { StaticHostSim } from '../../lib/sim/static-host.js';
import { StitchService, type StitchServiceDeps } from '../../lib/stitch/service.js';
import { StitchStore } from '../../lib/stitch/store.js';
import { fixturesDir } from '../helpers/fixtures.js';
import { freshSchemaUrl, needServices } from '../helpers/services.js';

const log = createLogger('silent');
const SEGMENT_SEC = 6;
const CONTENT_SEC = 2 * 3600;
const LADDER: Array<[number, number, number]> = [
  [416, 234, 400_000],
  [640, 360, 800_000],
  [768, 432, 1_200_000],
  [960, 540, 2_000_000],
  [1280, 720, 3_500_000],
  [1920, 1080, 6_000_000],
];

/** A 2-hour VOD: a master of six variants, each a media playlist of 1,200 six-second segments. */
function content(files: Map<string, string>, at: string): void {
  files.set(
    `${at}/master.m3u8`,
    [
      '#EXTM3U',
      ...LADDER.flatMap(([w, h, bw], i) => [
        `#EXT-X-STREAM-INF:BANDWIDTH=${bw},RESOLUTION=${w}x${h},CODECS="avc1.64001f,mp4a.40.2"`,
        `v${i}/index.m3u8`,
      ]),
    ].join('\n') + '\n',
  );
  for (let v = 0; v < LADDER.length; v++) {
    const lines = [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      `#EXT-X-TARGETDURATION:${SEGMENT_SEC}`,
      '#EXT-X-MEDIA-SEQUENCE:0',
      '#EXT-X-PLAYLIST-TYPE:VOD',
    ];
    for (let i = 0; i < CONTENT_SEC / SEGMENT_SEC; i++) lines.push(`#EXTINF:${SEGMENT_SEC}.000,`, `seg_${i}.ts`);
    lines.push('#EXT-X-ENDLIST');
    files.set(`${at}/v${v}/index.m3u8`, lines.join('\n') + '\n');
  }
}

const clock = (sec: number) => new Date(sec * 1000).toISOString().slice(11, 23);

t.test(
  'a stitched session is its plan: ≤ 2 KiB for a 2-hour VOD with 21 breaks, rendered again byte for byte',
  async (t) => {
    if (!(await needServices(t, ['postgres']))) return;
    const files = new Map<string, string>();
    content(files, '/vod/long');
    for (const f of readdirSync(path.join(fixturesDir, 'hls/eyevinn-hls-splice/ad1')))
      files.set(`/ads/ad1/${f}`, readFileSync(path.join(fixturesDir, 'hls/eyevinn-hls-splice/ad1', f), 'utf8'));
    const origin = await new StaticHostSim(files).start();
    t.teardown(() => origin.stop());
    const breaks = ['start', ...Array.from({ length: 19 }, (_, i) => clock((i + 1) * 360)), 'end'];
    const adServer = await new AdServerSim({
      breaks,
      ads: [
        { id: 'ad-1', durationSec: 43, hls: `${origin.url}/ads/ad1/master.m3u8` },
        { id: 'ad-2', durationSec: 43, hls: `${origin.url}/ads/ad1/master.m3u8` },
      ],
    }).start();
    t.teardown(() => adServer.stop());

    const sql = postgres(await freshSchemaUrl(t), { max: 2, onnotice: () => undefined });
    t.teardown(() => sql.end());
    await migrate(sql, log);
    const fetchText = async (url: string, signal: AbortSignal): Promise<string> => {
      const res = await request(url, { signal });
      const text = await res.body.text();
      if (res.statusCode >= 400) throw new Error(`HTTP ${res.statusCode}`);
      return text;
    };
    const deps = (store: StitchStore): StitchServiceDeps => ({
      findAsset: async () =>
        ({
          guid: 'long-1',
          content_id: null,
          title: 'Long',
          duration: CONTENT_SEC,
          renditions: [{ kind: 'hls', url: `${origin.url}/vod/long/master.m3u8` }],
          cue_points: [],
        }) as never,
      adTag: async () => ({ params: {} }),
      resolve: (url) => resolveAds({ url }, fetchText, { log, streaming: true }),
      fetchText,
      store,
      adServerUrl: `${adServer.url}/ad`,
      publicBaseUrl: () => 'https://edge.example.com',
      stitchPath: 'stitch',
      ttlSec: 600,
      beaconSecret: 'stitch-beacon-secret-0123456789',
      log,
    });

    const aStore = new StitchStore(sql);
    const a = new StitchService(deps(aStore));
    const answer = await a.stitch({
      protocol: 'hls',
      brand: 'acme',
      streamId: 'viewer-1',
      assetId: 'long-1',
      targeting: {},
    });
    t.equal(answer.breaks.length, 21, 'pre-roll, 19 mid-rolls and the post-roll');
    t.ok(
      answer.breaks.every((b) => b.ads.length === 2),
      'two ads in every break',
    );
    const id = /\/cache\/([^/]+)\/master\.m3u8$/.exec(answer.cache_url)![1]!;

    const [row] = await sql<
      Array<{ plan_chars: number; plan_bytes: number; row_bytes: number; response: unknown; files: unknown }>
    >`
    select length(plan::text) as plan_chars, pg_column_size(plan) as plan_bytes, pg_column_size(s.*) as row_bytes, response, files
    from stitch_session s where id = ${id}`;
    t.equal(row!.files, null, 'no rendered text is stored');
    t.equal(row!.response, null, 'nor the POST answer (held in memory by the instance that stitched)');
    t.ok(row!.row_bytes <= 2048, `the whole row is ${row!.row_bytes} bytes in Postgres, within 2 KiB`);
    t.ok(
      row!.plan_chars <= 2048,
      `the stored plan is ${row!.plan_chars} characters (${row!.plan_bytes} bytes in Postgres), within 2 KiB`,
    );
    const [before] = await sql<
      Array<{ bytes: number }>
    >`select pg_column_size(${sql.json(answer as never)}::jsonb) as bytes`;
    t.comment(
      `the POST answer, no longer stored: ${JSON.stringify(answer).length} characters, ${before!.bytes} bytes as the jsonb it was stored as (21 breaks × 2 ads × 6 signed tracking URLs)`,
    );

    // Another instance: nothing cached, the plan from Postgres, the sources read again over HTTP.
    const bStore = new StitchStore(sql);
    const b = new StitchService(deps(bStore));
    const session = (await bStore.get(id))!;
    t.ok(session.plan, 'the session read back carries its plan');
    t.equal(b.cachedFiles(session), undefined, 'not rendered on this instance yet');
    const hitsBefore = origin.hits.length;
    const rendered = await b.files(session);
    t.ok(origin.hits.length > hitsBefore, 'the sources were read again from the origin');
    const first = a.cachedFiles((await aStore.get(id))!);
    t.same(Object.keys(rendered).sort(), Object.keys(first!).sort(), 'the same files');
    for (const name of Object.keys(first!))
      t.equal(rendered[name], first![name], `${name}: byte for byte the first rendering`);
    t.ok(first!['v0.m3u8']!.length > 50_000, 'what is no longer stored: each variant alone is tens of KiB');
    t.equal(b.cachedFiles(session), rendered, 'kept once rendered: the next request renders nothing');

    // A third instance while the content origin fails: no rendering (the cache URL answers 503), never a partial text.
    origin.mode = 'error';
    const c = new StitchService(deps(new StitchStore(sql)));
    await t.rejects(c.files(session), /HTTP 500|origin/, 'the sources cannot be read: the rendering fails');
    t.equal(c.cachedFiles(session), undefined, 'and nothing is kept');
    origin.mode = 'ok';
    const [x, y] = await Promise.all([c.files(session), c.files(session)]);
    t.equal(x, y, 'two requests at once share one rendering');
    t.equal(x['master.m3u8'], first!['master.m3u8']);
  },
);
