/**
 * DASH in real players (issue 30, item 6): Debian's chromium driven by playwright-core, Shaka Player
 * and dash.js (the npm packages' prebuilt bundles, served to a page of another origin than the
 * service), over real fMP4 media encoded here with ffmpeg's dash muxer (lib/sim/dash-origin.ts):
 * (a) live DASH through the DAI manifest proxy with `live_edge_delay_segments: 2`, in dash.js and
 * in Shaka: playback starts within 2 s and runs on; (b) a stitched DASH VOD (pre-roll and mid-roll
 * Periods), in Shaka and in dash.js: played from the start to the end across the ads.
 */
import t, { type Test } from 'tap';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { DashOriginSim } from '../../lib/sim/dash-origin.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { projectRoot } from '../../lib/paths.js';
import type { Service } from '../../lib/app.js';
import { call } from '../helpers/http.js';
import { ffmpeg, needFfmpeg } from '../helpers/ffmpeg.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../helpers/services.js';
import { launchChromium, needChromium, servePage } from '../helpers/browser.js';
import { deadlineFor, describe, openPlayer, stateOf, stopWatching, until } from '../helpers/player-page.js';

// 2 s live segments: a live-edge delay of 2 segments trims 4 s off the timeline, as much as the
// origin's whole suggestedPresentationDelay, so a player aiming at the wall-clock edge past the
// trimmed timeline (issue 30 item 1) would wait at its end on every MPD update.
const LIVE_SEG = 2;
const LIVE_SEGMENTS = 24;
const DELAY_SEGMENTS = 2;
/** How much live playback is watched after the start. */
const LIVE_WATCH_SEC = 6;
const VOD_SEG = 2;
const VOD_SEC = 12;
const AD_SEC = 4;
const MID_SEC = 6;
/** Start-up budget of the "done when": dash.js (and Shaka) start within 2 s through the proxy. */
const STARTUP_MS = 2000;
/**
 * The media's picture: a quarter of the pages' 640×360 video element. Nothing here looks at pixels
 * (the players' timing, periods and errors are checked), and four players decoding it in one
 * browser beside the other files were most of the file's CPU.
 */
const PICTURE = '320x180';

/** One continuous encode written by ffmpeg's dash muxer: its MPD and files. */
async function dashMedia(
  dir: string,
  name: string,
  src: string,
  seconds: number,
  segSec: number,
): Promise<{ mpd: string; files: Map<string, Buffer> }> {
  const out = path.join(dir, name);
  await mkdir(out, { recursive: true });
  await ffmpeg([
    ...[
      '-f',
      'lavfi',
      '-i',
      `${src}=s=${PICTURE}:r=25:d=${seconds}`,
      '-f',
      'lavfi',
      '-i',
      `sine=f=440:sample_rate=48000:d=${seconds}`,
    ],
    ...[
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-g',
      String(25 * segSec),
      '-keyint_min',
      String(25 * segSec),
      '-sc_threshold',
      '0',
      '-c:a',
      'aac',
      '-ac',
      '2',
    ],
    ...[
      '-f',
      'dash',
      '-seg_duration',
      String(segSec),
      '-use_template',
      '1',
      '-use_timeline',
      '1',
      '-adaptation_sets',
      'id=0,streams=v id=1,streams=a',
    ],
    ...[
      '-init_seg_name',
      'init-$RepresentationID$.m4s',
      '-media_seg_name',
      'seg-$RepresentationID$-$Number$.m4s',
      path.join(out, 'manifest.mpd'),
    ],
  ]);
  const files = new Map<string, Buffer>();
  for (const f of await readdir(out)) if (f.endsWith('.m4s')) files.set(f, await readFile(path.join(out, f)));
  return { mpd: await readFile(path.join(out, 'manifest.mpd'), 'utf8'), files };
}

/** Plays live DASH through the proxy (its origin restarted by the caller); checks start-up, then that playback runs on. */
async function playLive(
  t: Test,
  browser: BrowserContext,
  pageUrl: string,
  player: 'shaka' | 'dashjs',
  src: string,
  origin: DashOriginSim,
): Promise<void> {
  const page = await openPlayer(browser, pageUrl, player, src);
  // The deadline for starting at all is generous (a busy machine); the 2 s budget is asserted on the measured start-up.
  const started = await until(
    'playback started',
    async () => (await stateOf(page)).started,
    deadlineFor(DELAY_SEGMENTS * LIVE_SEG),
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${describe(await stateOf(page))}`);
  });
  t.ok(started);
  const first = await stateOf(page);
  // Issue 30's "done when": through the proxy with a live-edge delay of 2 segments, playback starts within 2 s.
  t.ok(
    first.startupMs! <= STARTUP_MS,
    `${first.player}: playback started ${Math.round(first.startupMs!)} ms after load (budget ${STARTUP_MS} ms; ${JSON.stringify(first.marks)})`,
  );
  const at = first.currentTime;
  const s = await until(
    `${LIVE_WATCH_SEC} s of live playback`,
    async () => {
      const st = await stateOf(page);
      return st.currentTime >= at + LIVE_WATCH_SEC && st;
    },
    deadlineFor(LIVE_WATCH_SEC),
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${describe(await stateOf(page))}`);
  });
  await stopWatching(page);
  t.equal(s.fatal, null, `${s.player}: no fatal error (errors: ${s.errors.join(', ') || 'none'})`);
  t.ok(
    s.maxStallMs <= 1000,
    `${s.player}: no stall over 1 s once playing (longest ${Math.round(s.maxStallMs)} ms at ${s.stallAt ?? '-'})`,
  );
  t.ok(
    s.frags.length > 0 && s.frags.every((f) => f.url.startsWith(`${origin.url}/`)),
    `${s.player}: ${s.frags.length} segments, all from the origin (the proxy's BaseURL)`,
  );
  const liveEdgeSec = (origin.available() - DELAY_SEGMENTS) * LIVE_SEG;
  t.ok(
    s.currentTime > liveEdgeSec - 6 * LIVE_SEG,
    `${s.player}: playing near the delayed live edge (${s.currentTime.toFixed(1)} s of ${liveEdgeSec} s)`,
  );
  await page.close();
}

/** Plays a stitched VOD from the start to its end. */
async function playStitched(
  t: Test,
  browser: BrowserContext,
  pageUrl: string,
  player: 'shaka' | 'dashjs',
  src: string,
  total: number,
  ads: DashOriginSim,
  content: DashOriginSim,
): Promise<void> {
  const page = await openPlayer(browser, pageUrl, player, src);
  // The end: the ended event, or currentTime at the end (dash.js does not always fire ended after
  // the last of several Periods).
  const s = await until(
    'the end of the stitched VOD',
    async () => {
      const st = await stateOf(page);
      return (st.ended || st.fatal !== null || st.currentTime >= total - 0.5) && st;
    },
    deadlineFor(total),
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${describe(await stateOf(page))}`);
  });
  await stopWatching(page);
  t.equal(s.fatal, null, `${s.player}: no fatal error (errors: ${s.errors.join(', ') || 'none'})`);
  if (!s.ended) t.comment(`${s.player}: at the end without an ended event`);
  t.ok(
    Math.abs(s.duration - total) < 0.5,
    `${s.player}: the stitched duration ${s.duration.toFixed(3)} s is content + ads (${total} s)`,
  );
  t.ok(s.currentTime >= total - 0.5, `${s.player}: currentTime reached ${s.currentTime.toFixed(2)} s`);
  t.ok(
    s.maxStallMs <= 1000,
    `${s.player}: no stall over 1 s (longest ${Math.round(s.maxStallMs)} ms at ${s.stallAt ?? '-'})`,
  );
  const adFrags = s.frags.filter((f) => f.url.startsWith(`${ads.url}/`));
  const contentFrags = s.frags.filter((f) => f.url.startsWith(`${content.url}/`));
  // Two ad Periods (pre and mid) of AD_SEC, video and audio: AD_SEC / VOD_SEG segments each per track.
  t.ok(
    adFrags.length >= 2 * 2 * (AD_SEC / VOD_SEG),
    `${s.player}: ${adFrags.length} ad segments fetched (pre-roll and mid-roll)`,
  );
  t.ok(
    contentFrags.length >= 2 * (VOD_SEC / VOD_SEG),
    `${s.player}: ${contentFrags.length} content segments fetched (all of it)`,
  );
  const firstContent = s.frags.findIndex((f) => f.url.startsWith(`${content.url}/`));
  const firstAd = s.frags.findIndex((f) => f.url.startsWith(`${ads.url}/`));
  t.ok(firstAd >= 0 && firstAd < firstContent, `${s.player}: the pre-roll came first`);
  await page.close();
}

// The file's budget, from the media it plays (the runner's default is too short on a busy machine):
// set-up, two live plays one after the other, two stitched VODs played to the end (budgeted one
// after the other, though they run at once).
t.setTimeout(
  90_000 +
    2 * (deadlineFor(DELAY_SEGMENTS * LIVE_SEG) + deadlineFor(LIVE_WATCH_SEC)) +
    2 * deadlineFor(VOD_SEC + 2 * AD_SEC),
);

t.test('Shaka Player and dash.js in chromium: live DASH through the DAI proxy, stitched DASH VOD', async (t) => {
  if (!needChromium(t) || !needFfmpeg(t) || !(await needServices(t))) return;
  const began = Date.now();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sqz-browser-dash-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const [live, vod, ad] = await Promise.all([
    dashMedia(dir, 'live', 'testsrc', LIVE_SEGMENTS * LIVE_SEG, LIVE_SEG),
    dashMedia(dir, 'vod', 'testsrc2', VOD_SEC, VOD_SEG),
    dashMedia(dir, 'ad', 'smptebars', AD_SEC, VOD_SEG),
  ]);
  const liveOrigin = await new DashOriginSim({
    ...live,
    segmentSec: LIVE_SEG,
    live: true,
    windowSegments: 10,
    published: 8,
    // What a client refreshing every minimumUpdatePeriod (one segment) needs: a segment is listed
    // once complete, so the timeline trails the wall clock by up to one segment plus one update.
    // One segment (as before) left dash.js, whose edge is the wall clock, waiting at the end of the
    // upstream's own timeline; a clock taken from the Date header (1.95 s slow when traced) hid that.
    suggestedDelaySec: 2 * LIVE_SEG,
    // The wall clock from the origin (UTCTiming), as packagers publish it and as dash.js has it in
    // production (its default time server): not the response Date header, which is whole seconds.
    utcTiming: true,
  }).start();
  const vodOrigin = await new DashOriginSim({ ...vod, segmentSec: VOD_SEG }).start();
  const adOrigin = await new DashOriginSim({ ...ad, segmentSec: VOD_SEG }).start();
  const ads = await new AdServerSim({
    breaks: ['start', `00:00:0${MID_SEC}.000`],
    ads: [{ id: 'ad-1', durationSec: AD_SEC, dash: `${adOrigin.url}/ads/ad-1/manifest.mpd` }],
  }).start();
  t.teardown(async () => {
    await Promise.all([liveOrigin.stop(), vodOrigin.stop(), adOrigin.stop(), ads.stop()]);
  });
  const service: Service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    daiHost: liveOrigin.url,
    adServerUrl: `${ads.url}/ad`,
    beaconSecret: 'beacon-secret-for-browser-tests-0123',
    allowPrivateOutbound: true,
  });
  const tok = await token(service);
  const api = async (method: string, p: string, json: unknown) => {
    const r = await call(service.url, method, `/api/v1/${p}`, { token: tok, json });
    t.ok(r.status < 300, `${method} ${p}: ${r.status}`);
    return r.body as Record<string, unknown>;
  };
  await api('PUT', 'squeeze-brand-config', { brand_id: 'acme' });
  await api('PUT', 'squeeze-event-config', {
    asset_id: 'DLIVE',
    source_uri: `${liveOrigin.url}/live/manifest.mpd`,
    brand_config_id: 'acme',
    live_edge_delay_segments: DELAY_SEGMENTS,
  });
  // The catalog for stitching: a brand rule, its MRSS token, one DASH item.
  await api('POST', 'brand-recognition', {
    brand_name: 'acme',
    match_type: 'header',
    match_name: 'X-Brand',
    match_value: 'acme',
  });
  const mrssToken = 'push-token-0123456789abcdefghij';
  t.equal(
    (await call(service.url, 'PUT', '/api/v1/brand-tokens/acme', { token: tok, json: { mrss_token: mrssToken } }))
      .status,
    204,
  );
  const mrss = `<?xml version="1.0"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dfpvideo="http://api.google.com/dfpvideo"><channel>
<item><guid>vod-dash</guid><dfpvideo:contentId>cid-dash</dfpvideo:contentId><title>Dash</title><dfpvideo:cuepoints>${MID_SEC}</dfpvideo:cuepoints>
<media:content url="${vodOrigin.url}/vod/c1/manifest.mpd" type="application/dash+xml" duration="${VOD_SEC}"/></item>
</channel></rss>`;
  const pushed = await call(service.url, 'POST', '/mrssfeed/acme', {
    body: mrss,
    headers: { 'content-type': 'application/xml', 'x-service-mrss-token': mrssToken },
  });
  t.match(pushed.body, { inserted: 1 }, 'the catalog item');
  await until('the brand rule loaded', async () => service.brands.current.size === 1, 10_000);

  const pageUrl = await servePage(
    t,
    await readFile(path.join(projectRoot, 'test', 'browser', 'shaka-dashjs.html'), 'utf8'),
  );
  t.not(new URL(pageUrl).origin, new URL(service.url).origin, 'the page has an origin of its own');
  const browser = await launchChromium(t);
  t.comment(`set-up took ${Date.now() - began} ms`);

  const liveSrc = (id: string) => `${service.url}/dai/manifest/linear/dash/event/DLIVE/stream/${id}/manifest.mpd`;
  const stitched = await call(service.url, 'POST', '/stitch/dash/stream/browser-d/asset/cid-dash', {
    headers: { 'x-brand': 'acme' },
  });
  t.equal(stitched.status, 200, `stitched: ${JSON.stringify(stitched.body).slice(0, 300)}`);
  const breaks = stitched.body.breaks as Array<{ type: string; duration: number }>;
  t.same(
    breaks.map((b) => [b.type, b.duration]),
    [
      ['pre', AD_SEC],
      ['mid', AD_SEC],
    ],
    'a pre-roll and a mid-roll of one ad each',
  );
  const total = VOD_SEC + breaks.reduce((n, b) => n + b.duration, 0);

  // The plays wait on the media's real time (the live edge, a VOD played to its end), each on a
  // page and a stream of its own: the two live plays one after the other, each on a fresh restart
  // of the live origin, then the two VOD plays at once. The live plays are not run at once: their
  // start-up is held to the 2 s budget and their stalls to 1 s with a buffer of two
  // segments, and on a half-speed machine with the rest of the suite beside it two players starting
  // in the same browser missed both (2.5 s start-up, 1.3 s stall; four at once: 2.5 s stalls, 16 s
  // behind the edge). A VOD play has no such budget at its start.
  await t.test('the two live plays, one after the other', async (t) => {
    liveOrigin.restart();
    await t.test('(a) dash.js: live DASH through the DAI proxy, live-edge delay 2 segments', (t) =>
      playLive(t, browser, pageUrl, 'dashjs', liveSrc('dashjs-1'), liveOrigin),
    );
    liveOrigin.restart();
    await t.test('(a) Shaka: live DASH through the DAI proxy, live-edge delay 2 segments', (t) =>
      playLive(t, browser, pageUrl, 'shaka', liveSrc('shaka-1'), liveOrigin),
    );
  });
  await t.test('the two VOD plays at once', { jobs: 2 }, async (t) => {
    t.test('(b) Shaka: a stitched DASH VOD from the start across the ads to the end', (t) =>
      playStitched(t, browser, pageUrl, 'shaka', stitched.body.cache_url as string, total, adOrigin, vodOrigin),
    );
    t.test('(b) dash.js: a stitched DASH VOD from the start across the ads to the end', (t) =>
      playStitched(t, browser, pageUrl, 'dashjs', stitched.body.cache_url as string, total, adOrigin, vodOrigin),
    );
  });
  t.comment(`DASH browser tests took ${Date.now() - began} ms in all`);
});
