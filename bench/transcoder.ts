/**
 * Speed of the reference transcoder (`npm run build && node dist/bench/transcoder.js`): a 6 s 720p
 * content segment composed on one core (ffmpeg under `taskset -c 0` when there is one, and
 * `TRANSCODER_THREADS=1`), wall time of the whole job (fetch, probe, compose, ID3, store).
 * `--stills <dir>` also writes docs/squeezeback-dualbox.png and docs/squeezeback-lbar.png from the same
 * realistic inputs (testsrc with a burnt-in clock). The inputs are served by the transcoder's own
 * object store, so nothing else listens.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../lib/log/index.js';
import { loadTranscoderConfig, startTranscoder } from '../lib/transcoder/index.js';

const exec = promisify(execFile);
const FFMPEG = process.env['FFMPEG_PATH'] || 'ffmpeg';
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';

const has = (bin: string, args: string[]) => {
  try {
    execFileSync(bin, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

async function ffmpeg(args: string[]): Promise<void> {
  await exec(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** A label burnt in with drawtext when the font is there (Debian's fonts-dejavu-core), else nothing. */
async function label(text: string, y: string): Promise<string> {
  const font = await readFile(FONT).then(
    () => true,
    () => false,
  );
  return font
    ? `,drawtext=fontfile=${FONT}:text='${text}':fontsize=56:fontcolor=white:box=1:boxcolor=black@0.55:boxborderw=12:x=(w-tw)/2:y=${y}`
    : '';
}

async function main(): Promise<void> {
  const stillsAt = process.argv.indexOf('--stills');
  const stills = stillsAt > 0 ? process.argv[stillsAt + 1] : undefined;
  if (!has(FFMPEG, ['-version'])) {
    process.stderr.write(`${FFMPEG} was not found: apt-get install ffmpeg (or set FFMPEG_PATH)\n`);
    process.exit(1);
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sqz-bench-transcoder-'));
  try {
    const clock = await label('%{pts\\:hms}', 'h-th-40');
    await Promise.all([
      ffmpeg([
        '-f',
        'lavfi',
        '-i',
        `testsrc=s=1280x720:r=30:d=6${clock}`,
        '-f',
        'lavfi',
        '-i',
        'sine=f=440:d=6:sample_rate=48000',
        '-ac',
        '2',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-c:a',
        'aac',
        '-output_ts_offset',
        '3600',
        '-f',
        'mpegts',
        path.join(dir, 'content.ts'),
      ]),
      ffmpeg([
        '-f',
        'lavfi',
        '-i',
        `testsrc2=s=1280x720:r=30:d=12${await label('AD', '40')}`,
        '-f',
        'lavfi',
        '-i',
        'sine=f=880:d=12:sample_rate=48000',
        '-ac',
        '2',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-c:a',
        'aac',
        '-f',
        'mp4',
        path.join(dir, 'ad.mp4'),
      ]),
      ffmpeg([
        '-f',
        'lavfi',
        '-i',
        'gradients=s=1280x720:c0=0x0b1d3a:c1=0x4a1040:x0=0:y0=0:x1=1280:y1=720:nb_colors=2',
        '-frames:v',
        '1',
        '-update',
        '1',
        path.join(dir, 'background.png'),
      ]),
    ]);
    // One core: the compositions run under taskset when it exists, with one encoder/filter thread.
    let ffmpegPath = FFMPEG;
    const pinned = has('taskset', ['-c', '0', 'true']);
    if (pinned) {
      ffmpegPath = path.join(dir, 'ffmpeg');
      await writeFile(ffmpegPath, `#!/bin/sh\nexec taskset -c 0 ${FFMPEG} "$@"\n`);
      await chmod(ffmpegPath, 0o755);
    }
    const tx = await startTranscoder(
      loadTranscoderConfig({
        TRANSCODER_PORT: '0',
        TRANSCODER_DATA_DIR: path.join(dir, 'data'),
        FFMPEG_PATH: ffmpegPath,
        FFPROBE_PATH: FFMPEG.replace(/ffmpeg$/, 'ffprobe'),
        TRANSCODER_THREADS: '1',
        TRANSCODER_CONCURRENCY: '1',
      }),
      createLogger('silent'),
    );
    try {
      for (const name of ['content.ts', 'ad.mp4', 'background.png'])
        await tx.transcoder.store.put(
          tx.transcoder.store.file(`inputs/${name}`)!,
          await readFile(path.join(dir, name)),
        );
      const input = (name: string) => `${tx.url}/objects/inputs/${name}.ts`;
      const base = {
        content_uri: input('content.ts'),
        ad_uri: input('ad.mp4'),
        background_uri: input('background.png'),
        sqz_ratios: { content_box: 0.6, ad_box: 0.34 },
        positions: { content_box: { x: 0.03, y: 0.2 }, ad_box: { x: 0.64, y: 0.35 } },
        frames: {
          content_box: { enabled: true, thickness_px: 4, color: 'white@0.8' },
          ad_box: { enabled: true, thickness_px: 4, color: 'white@0.8' },
        },
        ad_offset_sec: 2,
        duration_sec: 6,
        id3: { owner: 'com.bench.vtg', value: 'bench' },
      };
      const cases = [
        { name: 'dualbox-hold', layout: 'dualbox', phase: 'hold' },
        { name: 'dualbox-in', layout: 'dualbox', phase: 'in' },
        { name: 'lbar-hold', layout: 'lbar', phase: 'hold' },
      ];
      process.stdout.write(
        `6 s 1280x720@30 segment, one core (${pinned ? 'taskset -c 0' : 'no taskset'}, TRANSCODER_THREADS=1):\n`,
      );
      const outputs: Record<string, string> = {};
      for (const c of cases) {
        const started = performance.now();
        const res = await fetch(`${tx.url}/v3/squeeze`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            ...base,
            layout: c.layout,
            animation: { phase: c.phase, in_sec: 2, out_sec: 2 },
            output_key: `bench/${c.name}`,
          }),
        });
        const body = (await res.json()) as { output_uri?: string; detail?: string };
        const sec = (performance.now() - started) / 1000;
        if (!res.ok || !body.output_uri) throw new Error(`${c.name}: ${res.status} ${body.detail ?? ''}`);
        outputs[c.name] = tx.transcoder.store.file(`bench/${c.name}`)!;
        process.stdout.write(`  ${c.name.padEnd(14)} ${sec.toFixed(2)} s (${(6 / sec).toFixed(1)}× real time)\n`);
      }
      if (stills) {
        for (const [name, key] of [
          ['dualbox', 'dualbox-hold'],
          ['lbar', 'lbar-hold'],
        ] as const) {
          const png = path.join(stills, `squeezeback-${name}.png`);
          await ffmpeg(['-i', outputs[key]!, '-ss', '3', '-frames:v', '1', '-update', '1', png]);
          process.stdout.write(`  wrote ${png}\n`);
        }
      }
    } finally {
      await tx.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
