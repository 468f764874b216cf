/**
 * Issue 26's browser "done when": a VMAP whose VASTs carry only an MP4 creative (H.264/AAC at
 * 426x240, 30 fps, 44.1 kHz mono: lib/sim/ad-server.ts serving test/helpers/conditioning.ts's
 * ffmpeg-made file) stitched, once conditioned, into (a) an HLS TS VOD with a 3-rung ladder played
 * in hls.js and (b) a DASH VOD (2 rungs, demuxed audio) played in Shaka Player, both 25 fps 48 kHz
 * stereo, made here with ffmpeg. The first POSTs answer without the ad and name the jobs; the test
 * polls `GET /api/v1/ad-creatives` until they are ready (a deadline from the work), then POSTs for
 * other streams and plays those from the start across the pre-roll and the mid-roll to the end:
 * no fatal error, no stall over 1 s, every conditioned ad segment played (hls.js) or fetched
 * (Shaka), the end reached. Deadlines follow the media's duration (test/helpers/player-page.ts).
 */
import t, { type Test } from 'tap';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { StaticHostSim } from '../../lib/sim/static-host.js';
import { projectRoot } from '../../lib/paths.js';
import { call } from '../helpers/http.js';
import { FFMPEG, ffmpeg, needFfmpeg } from '../helpers/ffmpeg.js';
import { REDIS_URL, freshSchemaUrl, needServices, startTestService, tempDir, token } from '../helpers/services.js';
import { launchChromium, needChromium, servePage } from '../helpers/browser.js';
import { makeCreative, RUNGS, DASH_RUNGS, type CreativeView } from '../helpers/conditioning.js';
import {
  deadlineFor,
  describe,
  openPlayer,
  stateOf,
  stopWatching,
  until,
  type PlayerState,
} from '../helpers/player-page.js';

const SEG = 2;
const CONTENT_SEC = 6;
/** The creative: 3 s, so its renditions end on a short (1 s) segment. */
const AD_SEC = 3;
const MID_SEC = 4;
/** Content and two breaks (pre-roll and mid-roll) of the one ad. */
const TOTAL_SEC = CONTENT_SEC + 2 * AD_SEC;
/** Rung-seconds ffmpeg encodes to condition the creative (HLS: a run per rung; DASH: one run). */
const WORK_SEC = AD_SEC * (RUNGS.length + DASH_RUNGS.length);
const CONDITION_DEADLINE_MS = 30_000 + WORK_SEC * 8_000;
const TOKEN = 'push-token-0123456789abcdefghij';

// Set-up (media, service), conditioning, and two stitched VODs played to the end.
t.setTimeout(90_000 + CONDITION_DEADLINE_MS + 2 * deadlineFor(TOTAL_SEC));

const profileOf = (codecs: string) => (/avc1\.64/.test(codecs) ? 'high' : 'main');

/** The HLS content: one ffmpeg run per rung (key frames every segment, so the rungs align), a master written here. */
async function hlsContent(dir: string): Promise<Map<string, string | Buffer>> {
  const out = path.join(dir, 'hls');
  await mkdir(out, { recursive: true });
  for (const [i, r] of RUNGS.entries())
    await ffmpeg([
      ...['-f', 'lavfi', '-i', `testsrc2=s=${r.w}x${r.h}:r=25:d=${CONTENT_SEC}`],
      ...['-f', 'lavfi', '-i', `sine=f=440:sample_rate=48000:d=${CONTENT_SEC}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-profile:v', profileOf(r.codecs), '-pix_fmt', 'yuv420p'],
      ...['-b:v', String(Math.floor(r.bw * 0.7)), '-g', String(25 * SEG), '-keyint_min', String(25 * SEG)],
      ...['-sc_threshold', '0', '-c:a', 'aac', '-ac', '2', '-ar', '48000'],
      ...['-f', 'hls', '-hls_time', String(SEG), '-hls_playlist_type', 'vod'],
      ...['-hls_segment_filename', path.join(out, `v${i}_%03d.ts`), path.join(out, `v${i}.m3u8`)],
    ]);
  const files = new Map<string, string | Buffer>();
  for (const f of await readdir(out)) files.set(`/vod/hls/${f}`, await readFile(path.join(out, f)));
  const master = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    ...RUNGS.flatMap((r, i) => [
      `#EXT-X-STREAM-INF:BANDWIDTH=${r.bw},RESOLUTION=${r.w}x${r.h},CODECS="${r.codecs}",FRAME-RATE=25.000`,
      `v${i}.m3u8`,
    ]),
  ];
  files.set('/vod/hls/master.m3u8', master.join('\n') + '\n');
  return files;
}

/** The DASH content: ffmpeg's dash muxer, two video rungs and an audio AdaptationSet. */
async function dashContent(dir: string): Promise<Map<string, string | Buffer>> {
  const out = path.join(dir, 'dash');
  await mkdir(out, { recursive: true });
  const scales = DASH_RUNGS.map((r, i) => `[s${i}]scale=${r.w}:${r.h},setsar=1[v${i}]`);
  await ffmpeg([
    ...['-f', 'lavfi', '-i', `testsrc2=s=640x360:r=25:d=${CONTENT_SEC}`],
    ...['-f', 'lavfi', '-i', `sine=f=440:sample_rate=48000:d=${CONTENT_SEC}`],
    ...[
      '-filter_complex',
      [`[0:v]split=${DASH_RUNGS.length}${DASH_RUNGS.map((_, i) => `[s${i}]`).join('')}`, ...scales].join(';'),
    ],
    ...DASH_RUNGS.flatMap((r, i) => ['-map', `[v${i}]`, `-b:v:${i}`, String(Math.floor(r.bw * 0.7))]),
    ...['-map', '1:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
    ...['-g', String(25 * SEG), '-keyint_min', String(25 * SEG), '-sc_threshold', '0'],
    ...['-c:a', 'aac', '-ac', '2', '-ar', '48000'],
    ...['-f', 'dash', '-seg_duration', String(SEG), '-use_template', '1', '-use_timeline', '1'],
    ...['-adaptation_sets', 'id=0,streams=v id=1,streams=a'],
    ...['-init_seg_name', 'init-$RepresentationID$.m4s', '-media_seg_name', 'seg-$RepresentationID$-$Number$.m4s'],
    path.join(out, 'manifest.mpd'),
  ]);
  const files = new Map<string, string | Buffer>();
  for (const f of await readdir(out))
    files.set(
      `/vod/dash/${f}`,
      f.endsWith('.mpd') ? await readFile(path.join(out, f), 'utf8') : await readFile(path.join(out, f)),
    );
  return files;
}

/** Waits for the end of a stitched VOD (the media element's ended), a fatal error, or the deadline. */
async function playToEnd<S extends PlayerState>(page: Page, total: number): Promise<S> {
  const s = await until(
    'the end of the stitched VOD',
    async () => {
      const st = await stateOf<S>(page);
      return (st.ended || st.fatal !== null) && st;
    },
    deadlineFor(total),
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${describe(await stateOf(page))}`);
  });
  await stopWatching(page);
  return s;
}

/** What every play must show: no fatal error, the stitched duration, the end, no stall over 1 s. */
function checkPlayed(t: Test, s: PlayerState, player: string, total: number): void {
  t.equal(s.fatal, null, `${player}: no fatal error (errors: ${s.errors.join(', ') || 'none'})`);
  t.ok(
    Math.abs(s.duration - total) < 0.5,
    `${player}: duration ${s.duration.toFixed(3)} s is content + ads (${total} s)`,
  );
  t.ok(s.ended, `${player}: ended`);
  t.ok(s.currentTime >= total - 0.5, `${player}: currentTime reached ${s.currentTime.toFixed(2)} s of ${total} s`);
  t.ok(
    s.maxStallMs <= 1000,
    `${player}: no stall over 1 s (longest ${Math.round(s.maxStallMs)} ms at ${s.stallAt ?? '-'})`,
  );
}

t.test('conditioned MP4-only ads stitched and played: HLS TS 3 rungs in hls.js, DASH in Shaka', async (t) => {
  if (!needChromium(t) || !needFfmpeg(t) || !(await needServices(t, ['postgres', 'redis']))) return;
  const began = Date.now();
  const work = tempDir(t);
  const [hls, dash, creative] = await Promise.all([
    hlsContent(work),
    dashContent(work),
    makeCreative(work, 'ad-1', AD_SEC),
  ]);
  const origin = await new StaticHostSim(new Map([...hls, ...dash])).start();
  const ads = await new AdServerSim({
    breaks: ['start', `00:00:0${MID_SEC}.000`],
    ads: [{ id: 'ad-1', durationSec: AD_SEC }],
    creatives: new Map([['ad-1', creative]]),
  }).start();
  t.teardown(async () => {
    await Promise.all([origin.stop(), ads.stop()]);
  });
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    adServerUrl: `${ads.url}/ad`,
    allowPrivateOutbound: true,
    dataDir: tempDir(t),
    ffmpegPath: FFMPEG,
    beaconSecret: 'beacon-secret-for-browser-tests-0123',
  });
  const jwt = await token(service);
  t.equal(
    (
      await call(service.url, 'POST', '/api/v1/brand-recognition', {
        token: jwt,
        json: { brand_name: 'acme', match_type: 'header', match_name: 'X-Brand', match_value: 'acme' },
      })
    ).status,
    201,
  );
  t.equal(
    (await call(service.url, 'PUT', '/api/v1/brand-tokens/acme', { token: jwt, json: { mrss_token: TOKEN } })).status,
    204,
  );
  const mrss = `<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dfpvideo="http://api.google.com/dfpvideo"><channel>
<item><guid>vod-hls</guid><title>HLS</title><dfpvideo:cuepoints>${MID_SEC}</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/hls/master.m3u8" type="application/x-mpegURL" duration="${CONTENT_SEC}"/></item>
<item><guid>vod-dash</guid><title>DASH</title><dfpvideo:cuepoints>${MID_SEC}</dfpvideo:cuepoints>
<media:content url="${origin.url}/vod/dash/manifest.mpd" type="application/dash+xml" duration="${CONTENT_SEC}"/></item>
</channel></rss>`;
  const pushed = await call(service.url, 'POST', '/mrssfeed/acme', {
    body: mrss,
    headers: { 'content-type': 'application/xml', 'x-service-mrss-token': TOKEN },
  });
  t.match(pushed.body, { inserted: 2 }, 'the catalog items');
  await until('the brand rule loaded', async () => service.brands.current.size === 1, 10_000);
  const stitch = (protocol: 'hls' | 'dash', stream: string) =>
    call(service.url, 'POST', `/stitch/${protocol}/stream/${stream}/asset/vod-${protocol}`, {
      headers: { 'x-brand': 'acme' },
    });
  const adsOf = (body: { breaks: Array<{ ads: unknown[] }> }) => body.breaks.flatMap((b) => b.ads);
  const jobsOf = (body: { warnings?: string[] }) =>
    new Set(
      (body.warnings ?? []).flatMap((w) => [...w.matchAll(/conditioning job ([0-9a-f-]{36})/g)].map((m) => m[1])),
    );
  t.comment(`set-up took ${Date.now() - began} ms`);

  // First POSTs: the MP4-only ad is not ready, left out, its jobs named.
  const queuedAt = Date.now();
  const [h1, d1] = await Promise.all([stitch('hls', 'hls-first'), stitch('dash', 'dash-first')]);
  for (const r of [h1, d1]) {
    t.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    t.same(adsOf(r.body), [], 'no ad on the first POST');
  }
  const rows = (await call(service.url, 'GET', '/api/v1/ad-creatives', { token: jwt })).body.results as CreativeView[];
  t.equal(rows.length, 2, 'one job per ladder profile (HLS, DASH)');
  t.same(
    jobsOf(h1.body),
    new Set(rows.filter((r) => r.protocol === 'hls').map((r) => r.job_id)),
    'HLS warnings name the job',
  );
  t.same(
    jobsOf(d1.body),
    new Set(rows.filter((r) => r.protocol === 'dash').map((r) => r.job_id)),
    'DASH warnings name the job',
  );

  // The jobs, watched through the API until none is pending (deadline from the work, not a sleep).
  const done = await until(
    'the conditioning jobs',
    async () => {
      const items = (await call(service.url, 'GET', '/api/v1/ad-creatives', { token: jwt })).body
        .results as CreativeView[];
      return items.every((c) => c.state !== 'pending') && items;
    },
    CONDITION_DEADLINE_MS,
  );
  for (const c of done) {
    t.equal(c.state, 'ready', `${c.protocol}: ready${c.error ? ` (${c.error})` : ''}`);
    t.comment(`${c.protocol}: ${AD_SEC} s creative ready ${c.renditions?.seconds_to_ready} s after queuing`);
  }
  t.comment(`both jobs done ${Date.now() - queuedAt} ms after the first POSTs`);

  // Other streams now get the ad: a pre-roll and a mid-roll.
  const [h2, d2] = await Promise.all([stitch('hls', 'hls-second'), stitch('dash', 'dash-second')]);
  for (const r of [h2, d2]) {
    t.equal(r.status, 200);
    t.same(
      (r.body.breaks as Array<{ type: string; duration: number; ads: unknown[] }>).map((b) => [b.type, b.ads.length]),
      [
        ['pre', 1],
        ['mid', 1],
      ],
      'the conditioned ad in a pre-roll and a mid-roll',
    );
  }
  const totalOf = (body: { breaks: Array<{ duration: number }> }) =>
    CONTENT_SEC + body.breaks.reduce((n, b) => n + b.duration, 0);

  const pageUrl = await servePage(t, {
    '/': await readFile(path.join(projectRoot, 'test', 'browser', 'player.html'), 'utf8'),
    '/shaka': await readFile(path.join(projectRoot, 'test', 'browser', 'shaka-dashjs.html'), 'utf8'),
  });
  const browser: BrowserContext = await launchChromium(t);
  const creatives = `${service.url}/stitch/creatives/`;

  // The two plays wait on the media's real time (each VOD played to its end), each on a page and a
  // stream of its own: they run at once, each a buffered subtest.
  await t.test('both plays at once', { jobs: 2 }, async (t) => {
    t.test('(a) hls.js: the stitched HLS TS VOD from the start across both ads to the end', async (t) => {
      const total = totalOf(h2.body);
      t.equal(total, TOTAL_SEC);
      const page = await browser.newPage();
      await page.goto(pageUrl);
      await page.evaluate(
        (src) => (globalThis as unknown as { play: (s: string, o: object) => void }).play(src, {}),
        h2.body.cache_url as string,
      );
      const s = await playToEnd<PlayerState & { frags: Array<{ url: string; start: number }> }>(page, total);
      checkPlayed(t, s, 'hls.js', total);
      // FRAG_CHANGED: the fragments playback went through, in order. They must run pre-roll, content,
      // mid-roll, content, each break every segment of the conditioned creative (by its number, so a
      // level switch replaying a position is not counted twice).
      const runs: Array<{ ad: boolean; frags: typeof s.frags }> = [];
      for (const f of s.frags) {
        const ad = f.url.startsWith(creatives);
        if (runs.at(-1)?.ad !== ad) runs.push({ ad, frags: [] });
        runs.at(-1)!.frags.push(f);
      }
      t.same(
        runs.map((r) => r.ad),
        [true, false, true, false],
        'played: pre-roll, content, mid-roll, content',
      );
      const perAd = Math.ceil(AD_SEC / SEG);
      const numbers = (frags: typeof s.frags) => new Set(frags.map((f) => /_(\d+)\.ts$/.exec(f.url)?.[1])).size;
      for (const [i, name] of [
        [0, 'pre-roll'],
        [2, 'mid-roll'],
      ] as const) {
        const run = runs[i]?.frags ?? [];
        t.equal(
          numbers(run),
          perAd,
          `${name}: played its ${perAd} conditioned segments (from ${run.map((f) => f.start.toFixed(2)).join(', ')} s)`,
        );
      }
      const midStart = runs[2]?.frags[0]?.start ?? -1;
      t.ok(
        Math.abs(midStart - (AD_SEC + MID_SEC)) < 0.5,
        `the mid-roll began at ${midStart.toFixed(2)} s of the stitched timeline (${AD_SEC + MID_SEC} s planned)`,
      );
      t.ok(
        s.frags.filter((f) => f.url.startsWith(`${origin.url}/`)).length >= CONTENT_SEC / SEG,
        'and the content around them',
      );
      await page.close();
    });

    t.test('(b) Shaka Player: the stitched DASH VOD from the start across both ads to the end', async (t) => {
      const total = totalOf(d2.body);
      t.equal(total, TOTAL_SEC);
      const page = await openPlayer(browser, `${pageUrl}/shaka`, 'shaka', d2.body.cache_url as string);
      const s = await playToEnd(page, total);
      checkPlayed(t, s, s.player ?? 'shaka', total);
      // Shaka records segments as fetched; both ad Periods, video and audio, each segment of the creative.
      const adFrags = s.frags.filter((f) => f.url.startsWith(creatives) && !/init-/.test(f.url));
      const perAd = Math.ceil(AD_SEC / SEG);
      t.ok(
        adFrags.length >= 2 * 2 * perAd,
        `${adFrags.length} conditioned ad segments fetched (2 Periods × video, audio × ${perAd})`,
      );
      t.ok(
        s.frags.filter((f) => f.url.startsWith(`${origin.url}/`)).length >= 2 * (CONTENT_SEC / SEG),
        'and the content around them',
      );
      await page.close();
    });
  });
  t.comment(`conditioned-ad browser test took ${Date.now() - began} ms`);
});
