/**
 * Squeezed segments' audio fits the content segment's slot (issue 30, item 4), with the real ffmpeg
 * and ffprobe: content cut as a live origin has it, composed by the reference transcoder, measured
 * from ffprobe's packets (test/helpers/ffmpeg.ts `packetSpans`).
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { createLogger } from '../../lib/log/index.js';
import { loadTranscoderConfig, startTranscoder } from '../../lib/transcoder/index.js';
import { call } from '../helpers/http.js';
import { ffmpeg, FFMPEG, needFfmpeg, packetSpans, serveDir } from '../helpers/ffmpeg.js';

const FPS = 25;
const SIZE = '320x180'; // small frames: the audio is what is measured
const RATES = [48000, 44100];
const DURATIONS = [2, 4, 6];
const TOLERANCE = 0.025; // within one AAC frame (21.3 ms at 48 kHz, 23.2 ms at 44.1 kHz)

async function tmpDir(t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sqz-audio-slot-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Content as a live origin has it: one continuous 18 s encode per sample rate, cut into HLS segments
 * of 2, 4 and 6 s (audio frames run across the cuts, so a segment's audio does not start exactly at
 * its video). The stream's first segment is left out: it alone carries the encoder's priming frame,
 * which a live origin's segments (cut from a long-running encode) do not. Answers two consecutive
 * segments' file names.
 */
async function segments(dir: string, rate: number, seconds: number): Promise<[string, string]> {
  const src = path.join(dir, `src-${rate}.ts`);
  const pattern = path.join(dir, `seg-${rate}-${seconds}-%d.ts`);
  await ffmpeg([
    '-i',
    src,
    '-c',
    'copy',
    '-f',
    'hls',
    '-hls_time',
    String(seconds),
    '-hls_list_size',
    '0',
    '-hls_segment_filename',
    pattern,
    path.join(dir, `seg-${rate}-${seconds}.m3u8`),
  ]);
  return [`seg-${rate}-${seconds}-1.ts`, `seg-${rate}-${seconds}-2.ts`];
}

// The file's budget from its work (13 compositions and 19 small encodes): the runner's default is
// too short when the machine is shared.
t.setTimeout(60_000 + 13 * 15_000);

if (needFfmpeg(t))
  t.test(
    'squeezed segments of 2, 4 and 6 s, AAC 48 and 44.1 kHz: audio fits the slot, consecutive ones meet without overlap or gap',
    async (t) => {
      const dir = await tmpDir(t);
      const lavfi = (src: string, sec: number, rate: number) => [
        '-f',
        'lavfi',
        '-i',
        `${src}=s=${SIZE}:r=${FPS}:d=${sec}`,
        '-f',
        'lavfi',
        '-i',
        `sine=f=440:d=${sec}:sample_rate=${rate}`,
        '-ac',
        '2',
      ];
      await Promise.all([
        ...RATES.map((rate) =>
          ffmpeg([
            ...lavfi('testsrc', 18, rate),
            '-c:v',
            'libx264',
            '-preset',
            'ultrafast',
            '-force_key_frames',
            'expr:gte(t,n_forced*2)',
            '-c:a',
            'aac',
            '-ar',
            String(rate),
            '-f',
            'mpegts',
            path.join(dir, `src-${rate}.ts`),
          ]),
        ),
        // A 4 s ad (44.1 kHz): shorter than a 6 s slot, so padding is exercised too.
        ffmpeg([
          ...lavfi('testsrc2', 4, 44100),
          '-c:v',
          'libx264',
          '-preset',
          'ultrafast',
          '-c:a',
          'aac',
          '-shortest',
          path.join(dir, 'ad.mp4'),
        ]),
      ]);
      const files = await serveDir(dir);
      t.teardown(files.stop);
      const txDir = await tmpDir(t);
      const tx = await startTranscoder(
        loadTranscoderConfig({
          TRANSCODER_PORT: '0',
          TRANSCODER_DATA_DIR: txDir,
          FFMPEG_PATH: FFMPEG,
          TRANSCODER_CONCURRENCY: '2',
          // The audio is what is measured: the fastest x264 preset leaves it as it is.
          TRANSCODER_X264_PRESET: 'ultrafast',
        }),
        createLogger('silent'),
      );
      t.teardown(() => tx.close());
      const compose = async (name: string, seconds: number, i: number, audio?: 'content') => {
        const key = `av/${name.replace('.ts', '')}${audio ? '-content' : ''}`;
        const job = {
          content_uri: `${files.url}/${name}`,
          ad_uri: `${files.url}/ad.mp4`,
          layout: 'dualbox',
          animation: { phase: 'hold', in_sec: 1, out_sec: 1 },
          ad_offset_sec: i,
          duration_sec: seconds,
          output_key: key,
          ...(audio ? { audio } : {}),
        };
        const r = await call(tx.url, 'POST', '/v3/squeeze', { json: job });
        t.equal(r.status, 200, `${key}: composed`);
        const res = await request(r.body.output_uri as string);
        const file = path.join(dir, `${key.replaceAll('/', '_')}.ts`);
        await writeFile(file, Buffer.from(await res.body.arrayBuffer()));
        return packetSpans(file);
      };
      let joins = 0;
      for (const rate of RATES)
        for (const seconds of DURATIONS) {
          const names = await segments(dir, rate, seconds);
          // Two consecutive segments of the break: one join between squeezed segments.
          const outs = await Promise.all(names.map((name, i) => compose(name, seconds, i)));
          for (const [i, name] of names.entries()) {
            const label = `${rate} Hz, ${seconds} s, segment ${i + 1}`;
            const content = await packetSpans(path.join(dir, name));
            const [v, a, cv, ca] = [outs[i]!.video!, outs[i]!.audio!, content.video!, content.audio!];
            t.ok(
              Math.abs(a.span - v.span) <= TOLERANCE,
              `${label}: audio ${a.span.toFixed(4)} s within 25 ms of its video ${v.span.toFixed(4)} s`,
            );
            t.ok(
              Math.abs(a.span - cv.span) <= TOLERANCE,
              `${label}: audio ${a.span.toFixed(4)} s within 25 ms of the content segment's ${cv.span.toFixed(4)} s`,
            );
            t.ok(
              Math.abs(a.span - ca.span) < 0.001,
              `${label}: audio covers what the content's audio covers (${ca.span.toFixed(4)} s)`,
            );
            t.ok(
              Math.abs(a.start - ca.start) < 0.001,
              `${label}: audio starts where the content's audio starts (${a.start} vs ${ca.start})`,
            );
            t.ok(Math.abs(v.start - cv.start) < 0.001, `${label}: video starts at the content's video`);
          }
          const [first, second] = outs.map((o) => o.audio!);
          t.ok(
            Math.abs(second!.start - first!.end) < 0.001,
            `${rate} Hz, ${seconds} s: the next squeezed segment's audio starts where this one's ends (${first!.end.toFixed(4)} → ${second!.start.toFixed(4)})`,
          );
          joins++;
        }
      t.equal(joins, RATES.length * DURATIONS.length);
      // The content's own audio (audio: 'content') is cut the same way.
      const [name] = await segments(dir, 44100, 4);
      const own = (await compose(name, 4, 0, 'content')).audio!;
      const content = (await packetSpans(path.join(dir, name))).audio!;
      t.ok(
        Math.abs(own.span - content.span) < 0.001 && Math.abs(own.start - content.start) < 0.001,
        `audio: 'content' covers the content's audio slot (${own.span.toFixed(4)} s)`,
      );
    },
  );
