/**
 * The reference transcoder with the real ffmpeg: small real inputs made in the test, served by a
 * local HTTP server; outputs checked with ffprobe, our ID3 reader and pixels of decoded frames.
 */
import t, { type Test } from 'tap';
import { chmod, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { extractTags } from '../../lib/id3/index.js';
import { createLogger } from '../../lib/log/index.js';
import { loadTranscoderConfig, startTranscoder, type RunningTranscoder } from '../../lib/transcoder/index.js';
import { composeArgs } from '../../lib/transcoder/compose.js';
import { call } from '../helpers/http.js';
import { ffmpeg, ffprobe, FFMPEG, needFfmpeg, pixel, rgbFrameAt, serveDir, type Probe } from '../helpers/ffmpeg.js';

const W = 640;
const H = 360;
const FPS = 25;
const log = createLogger('silent');

async function tmpDir(t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sqz-transcoder-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function start(t: Test, env: Record<string, string> = {}): Promise<RunningTranscoder> {
  const dir = await tmpDir(t);
  const running = await startTranscoder(
    loadTranscoderConfig({
      TRANSCODER_PORT: '0',
      TRANSCODER_DATA_DIR: dir,
      FFMPEG_PATH: FFMPEG,
      TRANSCODER_CONCURRENCY: '2',
      // The fastest x264 preset: what is checked (timing, size, pixels, the tag) does not depend on
      // it, and it spends ~20 % less CPU per composition here. The de-dup test keeps the default.
      TRANSCODER_X264_PRESET: 'ultrafast',
      ...env,
    }),
    log,
  );
  t.teardown(() => running.close());
  return running;
}

/**
 * A 2 s content segment starting at PTS 1000 s, a 4 s ad, a background; realistic and solid-colour kinds.
 * Encoded with x264's fastest preset: each composition decodes them again, and faster to decode.
 */
async function makeInputs(dir: string): Promise<void> {
  const content = (src: string, name: string) =>
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      `${src}${src.includes('=') ? ':' : '='}s=${W}x${H}:r=${FPS}:d=2`,
      '-f',
      'lavfi',
      '-i',
      'sine=f=440:d=2:sample_rate=48000',
      '-ac',
      '2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-output_ts_offset',
      '1000',
      '-f',
      'mpegts',
      path.join(dir, name),
    ]);
  const ad = (src: string, name: string) =>
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      `${src}${src.includes('=') ? ':' : '='}s=1280x720:r=30:d=4`,
      '-f',
      'lavfi',
      '-i',
      'sine=f=880:d=4:sample_rate=44100',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-shortest',
      path.join(dir, name),
    ]);
  await Promise.all([
    content('testsrc', 'content.ts'),
    content('color=c=blue', 'blue.ts'),
    ad('testsrc2', 'ad.mp4'),
    ad('color=c=red', 'red.mp4'),
    ffmpeg(['-f', 'lavfi', '-i', `color=c=0x00ff00:s=${W}x${H}`, '-frames:v', '1', path.join(dir, 'green.png')]),
  ]);
}

let inputs: Promise<string> | undefined;
/** The inputs, encoded once for the file (they are only read): every subtest serves the same folder. */
function sharedInputs(): Promise<string> {
  inputs ??= tmpDir(t).then(async (dir) => (await makeInputs(dir), dir));
  return inputs;
}

const job = (base: string, over: Record<string, unknown> = {}) => ({
  content_uri: `${base}/content.ts`,
  ad_uri: `${base}/ad.mp4`,
  background_uri: `${base}/green.png`,
  layout: 'dualbox',
  sqz_ratios: { content_box: 0.5, ad_box: 0.4 },
  positions: { content_box: { x: 0.02, y: 0.05 }, ad_box: { x: 0.55, y: 0.3 } },
  animation: { phase: 'hold', in_sec: 1, out_sec: 1 },
  frames: {
    content_box: { enabled: true, thickness_px: 4, color: 'white' },
    ad_box: { enabled: false, thickness_px: 4, color: 'white@0.8' },
  },
  ad_offset_sec: 0.5,
  duration_sec: 2,
  id3: { owner: 'com.acme.vtg', value: 'brk-7' },
  output_key: 'sqz/1/hold',
  ...over,
});

async function fetchOutput(t: Test, uri: string, dir: string, name: string): Promise<string> {
  const res = await request(uri, { headers: { origin: 'https://player.example' } });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  t.equal(res.statusCode, 200, `${name}: GET output`);
  t.equal(res.headers['content-type'], 'video/mp2t');
  t.match(res.headers['cache-control'], /^public, max-age=\d+, immutable$/);
  t.equal(Number(res.headers['content-length']), bytes.length);
  t.equal(res.headers['access-control-allow-origin'], '*');
  const file = path.join(dir, `${name}.ts`);
  await writeFile(file, bytes);
  return file;
}

const videoOf = (p: Probe) => p.streams.find((s) => s.codec_type === 'video')!;

// The file's budget from its work (one set of inputs encoded, ten compositions, a 6 s job
// deadline): the runner's 120 s default is too short when the machine is shared.
t.setTimeout(60_000 + 10_000 + 10 * 15_000 + 15_000);

if (needFfmpeg(t)) {
  t.test('compose: dualbox in/hold/out and L-bar keep the content timing, carry the ID3 tag', async (t) => {
    const dir = await tmpDir(t);
    const files = await serveDir(await sharedInputs());
    t.teardown(files.stop);
    const tx = await start(t);
    const content = videoOf(await ffprobe(path.join(await sharedInputs(), 'content.ts')));
    t.ok(content.start_pts! > 90000 * 1000, 'the content starts at a non-zero PTS');
    const cases = [
      { name: 'in', over: { animation: { phase: 'in', in_sec: 1, out_sec: 1 } } },
      { name: 'hold', over: {} },
      { name: 'out', over: { animation: { phase: 'out', in_sec: 1, out_sec: 1 }, audio: 'content' } },
      { name: 'lbar', over: { layout: 'lbar', background_uri: undefined } },
    ];
    let checked = 0;
    for (const c of cases) {
      const r = await call(tx.url, 'POST', '/v3/squeeze', {
        json: job(files.url, { ...c.over, output_key: `sqz/1/${c.name}` }),
      });
      t.equal(r.status, 200, `${c.name}: composed`);
      t.equal(r.body.output_uri, `${tx.url}/objects/sqz/1/${c.name}.ts`);
      const file = await fetchOutput(t, r.body.output_uri, dir, c.name);
      const p = await ffprobe(file);
      const v = videoOf(p);
      const a = p.streams.find((s) => s.codec_type === 'audio');
      t.equal(v.codec_name, 'h264');
      t.equal(a?.codec_name, 'aac');
      t.same([v.width, v.height], [W, H], 'the content size');
      t.equal(v.start_pts, content.start_pts, `${c.name}: video starts at the content's PTS`);
      t.ok(
        Math.abs(Number(v.duration) - Number(content.duration)) <= 1 / FPS + 1e-6,
        `${c.name}: duration ${v.duration} within a frame of ${content.duration}`,
      );
      const tags = extractTags(await readFile(file)).tags;
      t.match(
        tags,
        [
          {
            frame: 'TXXX',
            description: 'com.acme.vtg',
            value: 'brk-7',
            metadata: { timescale: 90000, presentation_time: content.start_pts },
          },
          { frame: 'PRIV', description: 'com.acme.vtg', value: 'brk-7' },
        ],
        `${c.name}: the ID3 tag at the segment start`,
      );
      checked++;
    }
    t.equal(checked, cases.length);
    t.equal(tx.transcoder.composed, cases.length);
  });

  t.test('layout: pixels of solid-colour inputs show the boxes where they belong', async (t) => {
    const dir = await tmpDir(t);
    const files = await serveDir(await sharedInputs());
    t.teardown(files.stop);
    const tx = await start(t);
    const solid = (over: Record<string, unknown>) =>
      job(files.url, { content_uri: `${files.url}/blue.ts`, ad_uri: `${files.url}/red.mp4`, ...over });
    const isRed = ([r, g, b]: number[]) => r! > 200 && g! < 70 && b! < 70;
    const isBlue = ([r, g, b]: number[]) => b! > 200 && r! < 70 && g! < 70;
    const isGreen = ([r, g, b]: number[]) => g! > 200 && r! < 70 && b! < 70;
    const isWhite = ([r, g, b]: number[]) => r! > 200 && g! > 200 && b! > 200;
    const frameAt = async (over: Record<string, unknown>, key: string, sec: number) => {
      const r = await call(tx.url, 'POST', '/v3/squeeze', { json: solid({ ...over, output_key: key }) });
      t.equal(r.status, 200, key);
      return rgbFrameAt(await fetchOutput(t, r.body.output_uri, dir, key.replaceAll('/', '_')), sec);
    };
    // dualbox hold: content (0.5 of the frame at 0.02, 0.05) → x 13–333, y 18–198; ad 0.4 at (0.55, 0.3) → x 352–608, y 108–252.
    const hold = await frameAt({}, 'px/hold', 1);
    t.ok(isBlue(pixel(hold, W, 173, 108)), `content box centre is the content: ${pixel(hold, W, 173, 108)}`);
    t.ok(isRed(pixel(hold, W, 480, 180)), `ad box centre is the ad: ${pixel(hold, W, 480, 180)}`);
    t.ok(isGreen(pixel(hold, W, 620, 340)), `outside both boxes is the background: ${pixel(hold, W, 620, 340)}`);
    t.ok(isWhite(pixel(hold, W, 11, 108)), `the content frame is drawn around the box: ${pixel(hold, W, 11, 108)}`);
    // in: full frame at the start, squeezed after in_sec; out: the reverse.
    const inStart = await frameAt({ animation: { phase: 'in', in_sec: 1, out_sec: 1 } }, 'px/in', 0);
    t.ok(isBlue(pixel(inStart, W, 480, 180)), `in, t=0: the content covers the frame: ${pixel(inStart, W, 480, 180)}`);
    const inEnd = await rgbFrameAt(path.join(dir, 'px_in.ts'), 1.5);
    t.ok(isRed(pixel(inEnd, W, 480, 180)), `in, t=1.5: the ad shows: ${pixel(inEnd, W, 480, 180)}`);
    const outMid = await frameAt({ animation: { phase: 'out', in_sec: 1, out_sec: 1 } }, 'px/out', 0.5);
    t.ok(isRed(pixel(outMid, W, 480, 180)), `out, t=0.5: still squeezed: ${pixel(outMid, W, 480, 180)}`);
    const outEnd = await rgbFrameAt(path.join(dir, 'px_out.ts'), 1.96);
    t.ok(isBlue(pixel(outEnd, W, 480, 180)), `out, last frame: back to full frame: ${pixel(outEnd, W, 480, 180)}`);
    // L-bar: content 0.6 in the top-left corner (384×216), the ad fills the L around it.
    const lbar = await frameAt({ layout: 'lbar', frames: {} }, 'px/lbar', 1);
    t.ok(isBlue(pixel(lbar, W, 190, 100)), `L-bar: content in the corner: ${pixel(lbar, W, 190, 100)}`);
    for (const [x, y] of [
      [600, 50],
      [600, 300],
      [50, 300],
    ] as const)
      t.ok(isRed(pixel(lbar, W, x, y)), `L-bar: the ad at (${x}, ${y}): ${pixel(lbar, W, x, y)}`);
  });

  t.test('de-dup: two concurrent identical jobs run ffmpeg once; a stored key answers at once', async (t) => {
    const files = await serveDir(await sharedInputs());
    t.teardown(files.stop);
    const bin = await tmpDir(t);
    const count = path.join(bin, 'runs');
    await writeFile(
      path.join(bin, 'ffmpeg'),
      `#!/bin/sh\ncase "$*" in *-filter_complex*) echo run >> ${count};; esac\nexec ${FFMPEG} "$@"\n`,
    );
    await writeFile(path.join(bin, 'ffprobe'), `#!/bin/sh\nexec ${FFMPEG.replace(/ffmpeg$/, 'ffprobe')} "$@"\n`);
    await chmod(path.join(bin, 'ffmpeg'), 0o755);
    await chmod(path.join(bin, 'ffprobe'), 0o755);
    // The default preset (veryfast), composed once with the real ffmpeg here.
    const tx = await start(t, { FFMPEG_PATH: path.join(bin, 'ffmpeg'), TRANSCODER_X264_PRESET: '' });
    const body = job(files.url, { output_key: 'dedup/1' });
    const [a, b] = await Promise.all([
      call(tx.url, 'POST', '/v3/squeeze', { json: body }),
      call(tx.url, 'POST', '/v3/squeeze', { json: body }),
    ]);
    t.equal(a.status, 200);
    t.equal(b.status, 200);
    t.equal(a.body.output_uri, b.body.output_uri);
    const runs = async () => (existsSync(count) ? (await readFile(count, 'utf8')).trim().split('\n').length : 0);
    t.equal(await runs(), 1, 'one ffmpeg composition');
    const started = Date.now();
    const again = await call(tx.url, 'POST', '/v3/squeeze', { json: body });
    t.equal(again.status, 200);
    t.equal(again.body.output_uri, a.body.output_uri);
    t.equal(await runs(), 1, 'a stored output is not composed again');
    t.ok(Date.now() - started < 1000, 'answered from the store');
    // Retention: an expired output is swept, then 404.
    const file = tx.transcoder.store.file('dedup/1')!;
    const old = new Date(Date.now() - 2 * 3600 * 1000);
    await utimes(file, old, old);
    t.equal(await tx.transcoder.sweep(), 1, 'the sweep removes the expired output');
    const gone = await request(a.body.output_uri);
    await gone.body.dump();
    t.equal(gone.statusCode, 404);
  });

  t.test('timeout: a job over its deadline answers 504 and ffmpeg is killed', async (t) => {
    const files = await serveDir(await sharedInputs());
    t.teardown(files.stop);
    const bin = await tmpDir(t);
    const pidFile = path.join(bin, 'pid');
    await writeFile(
      path.join(bin, 'ffmpeg'),
      `#!/bin/sh\ncase "$*" in *-filter_complex*) echo $$ > ${pidFile}; exec sleep 60;; esac\nexec ${FFMPEG} "$@"\n`,
    );
    await writeFile(path.join(bin, 'ffprobe'), `#!/bin/sh\nexec ${FFMPEG.replace(/ffmpeg$/, 'ffprobe')} "$@"\n`);
    await chmod(path.join(bin, 'ffmpeg'), 0o755);
    await chmod(path.join(bin, 'ffprobe'), 0o755);
    // The deadline also covers fetching and probing the inputs, which took over 3 s on a loaded
    // half-speed machine: the composition never started and no ffmpeg was there to be killed.
    const tx = await start(t, { FFMPEG_PATH: path.join(bin, 'ffmpeg'), TRANSCODER_JOB_TIMEOUT_MS: '6000' });
    const started = Date.now();
    const r = await call(tx.url, 'POST', '/v3/squeeze', { json: job(files.url, { output_key: 'slow/1' }) });
    t.equal(r.status, 504);
    t.match(r.headers['content-type'], /application\/problem\+json/);
    t.match(r.body, { status: 504, type: 'urn:squeezeback:problem:upstream-timeout' });
    t.ok(Date.now() - started < 18_000, 'answered near the deadline');
    const pid = Number(await readFile(pidFile, 'utf8'));
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      try {
        process.kill(pid, 0);
        await new Promise((res) => setTimeout(res, 100));
      } catch {
        alive = false;
      }
    }
    t.notOk(alive, 'the ffmpeg process is gone');
    const out = await request(`${tx.url}/objects/slow/1.ts`);
    await out.body.dump();
    t.equal(out.statusCode, 404, 'nothing stored');
  });
}

t.test('bad jobs and paths: problems, never a crash (no ffmpeg needed)', async (t) => {
  const tx = await start(t, { FFMPEG_PATH: '/nonexistent/ffmpeg' });
  const bad = await call(tx.url, 'POST', '/v3/squeeze', {
    json: { content_uri: 'file:///etc/passwd', layout: 'pip', output_key: '../x' },
  });
  t.equal(bad.status, 400);
  t.match(bad.headers['content-type'], /application\/problem\+json/);
  t.match(bad.body, { status: 400, type: 'urn:squeezeback:problem:validation' });
  for (const field of ['content_uri', 'ad_uri', 'layout', 'output_key'])
    t.ok(
      bad.body.errors.some((e: { path: string }) => e.path === field),
      field,
    );
  t.equal(
    (await call(tx.url, 'POST', '/v3/squeeze', { body: '{', headers: { 'content-type': 'application/json' } })).status,
    400,
    'not JSON',
  );
  t.equal(
    (await call(tx.url, 'POST', '/v3/squeeze', { body: '{}', headers: { 'content-type': 'text/plain' } })).status,
    415,
  );
  t.equal(
    (
      await call(tx.url, 'POST', '/v3/squeeze', {
        body: JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 10) }),
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    413,
  );
  t.equal((await call(tx.url, 'GET', '/v3/squeeze')).status, 405);
  t.equal((await call(tx.url, 'GET', '/objects/none.ts')).status, 404);
  t.equal((await call(tx.url, 'GET', '/objects/%2e%2e/%2e%2e/etc/passwd.ts')).status, 404, 'no way out of the store');
  t.equal((await call(tx.url, 'GET', '/objects/a/%zz.ts')).status, 404, 'bad escapes');
  t.equal((await call(tx.url, 'DELETE', '/objects/a.ts')).status, 405);
  const pre = await call(tx.url, 'OPTIONS', '/objects/a.ts', {
    headers: { origin: 'https://player.example', 'access-control-request-method': 'GET' },
  });
  t.equal(pre.status, 204);
  t.equal(pre.headers['access-control-allow-origin'], '*');
  t.match(pre.headers['access-control-allow-methods'], /GET/);
  // Missing ffmpeg: a clear 503 naming the package.
  const r = await call(tx.url, 'POST', '/v3/squeeze', {
    json: {
      content_uri: 'http://127.0.0.1:9/c.ts',
      ad_uri: 'http://127.0.0.1:9/a.mp4',
      layout: 'dualbox',
      output_key: 'k',
    },
  });
  t.equal(r.status, 503);
  t.match(r.body, { type: 'urn:squeezeback:problem:unavailable', detail: /apt-get install ffmpeg/ });
  t.equal((await call(tx.url, 'GET', '/health')).status, 503, 'health says so too');
});

t.test("TRANSCODER_X264_PRESET: veryfast by default, one of x264's presets, passed to ffmpeg", async (t) => {
  t.equal(loadTranscoderConfig({}).preset, 'veryfast');
  t.equal(loadTranscoderConfig({ TRANSCODER_X264_PRESET: 'ultrafast' }).preset, 'ultrafast');
  t.throws(() => loadTranscoderConfig({ TRANSCODER_X264_PRESET: 'turbo' }), /TRANSCODER_X264_PRESET must be one of/);
  const args = (preset?: 'ultrafast') =>
    composeArgs({
      comp: {
        contentUri: 'http://127.0.0.1/c.ts',
        adUri: 'http://127.0.0.1/a.mp4',
        backgroundUri: undefined,
        layout: 'lbar',
        ratios: { content: 0.6, ad: 0.4 },
        positions: { content: { x: 0, y: 0 }, ad: { x: 0, y: 0 } },
        frames: {
          content: { enabled: false, thickness_px: 0, color: 'white' },
          ad: { enabled: false, thickness_px: 0, color: 'white' },
        },
        phase: 'hold',
        inSec: 1,
        outSec: 1,
        adOffsetSec: 0,
        durationSec: 2,
        audio: 'ad',
        id3: undefined,
        outputKey: 'k',
      },
      content: { video: { width: W, height: H, fps: '25/1', duration: 2 } },
      ad: { video: { width: W, height: H, fps: '25/1' } },
      files: { content: 'c.ts', ad: 'a.mp4' },
      output: 'o.ts',
      ...(preset ? { preset } : {}),
    });
  const presetOf = (a: string[]) => a[a.indexOf('-preset') + 1];
  t.equal(presetOf(args()), 'veryfast');
  t.equal(presetOf(args('ultrafast')), 'ultrafast');
});
