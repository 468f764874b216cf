/**
 * The real media of `npm run demo`, made once with ffmpeg into a cache folder: a loop of live
 * content segments (testsrc2 + sine, a burnt-in clock and segment counter), two MP4 ads and the
 * brand's background PNG. A later start finds them there and starts at once.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { run } from '../transcoder/ffmpeg.js';

export const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';

export interface DemoMediaOptions {
  ffmpeg: string;
  /** Default: <tmpdir>/squeezeback-demo-<version>. */
  cacheDir?: string;
  width?: number;
  height?: number;
  fps?: number;
  segmentSec?: number;
  /** Length of the content loop, seconds (a multiple of segmentSec). */
  loopSec?: number;
  /** Aborting kills a running ffmpeg (the demo stopped while generating). */
  signal?: AbortSignal;
}

export interface DemoAd {
  id: string;
  durationSec: number;
  mp4: Buffer;
}

export interface DemoMedia {
  dir: string;
  segmentSec: number;
  /** The content loop, in order: segment i plays at media sequence i (mod length). */
  segments: Buffer[];
  ads: DemoAd[];
  background: Buffer;
}

/** Bump when what is generated changes, so an old cache is not reused. */
const VERSION = 1;
const JOB_MS = 10 * 60_000;
const ADS = [
  { id: 'ad-cola', durationSec: 15, color: '0xd62828', text: 'ACME COLA', tone: 660 },
  { id: 'ad-cars', durationSec: 15, color: '0x1d6fa3', text: 'ACME CARS', tone: 880 },
];

/** Fails with a message naming the Debian package when ffmpeg (FfmpegError "missing") or the font is missing. */
export async function checkDemoTools(ffmpeg: string): Promise<void> {
  await run(ffmpeg, ['-hide_banner', '-version'], 10_000);
  if (!existsSync(FONT))
    throw new Error(
      `${FONT} was not found (the burnt-in clock's font): install Debian's fonts-dejavu-core package (apt-get install fonts-dejavu-core)`,
    );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** drawtext's text needs ':' and '\'' escaped (and '%' outside expansions). */
const text = (s: string) => s.replace(/\\/g, '\\\\').replace(/:/g, '\\:').replace(/'/g, "\\'");

export async function demoMedia(
  opts: DemoMediaOptions,
  progress: (msg: string) => void = () => undefined,
): Promise<DemoMedia> {
  const w = opts.width ?? 640;
  const h = opts.height ?? 360;
  const fps = opts.fps ?? 25;
  const seg = opts.segmentSec ?? 4;
  const loop = opts.loopSec ?? 120;
  const dir = opts.cacheDir ?? path.join(os.tmpdir(), `squeezeback-demo-v${VERSION}-${w}x${h}-${fps}-${seg}-${loop}`);
  if (!existsSync(path.join(dir, 'complete'))) {
    progress(`generating the demo video once into ${dir} (ffmpeg; about a minute)…`);
    const work = `${dir}.partial-${process.pid}`;
    // What an interrupted run left (its process exited before it could clean up); not a running one's.
    const prefix = `${path.basename(dir)}.partial-`;
    const stale = (await readdir(path.dirname(dir)).catch(() => [])).filter(
      (n) => n.startsWith(prefix) && !alive(Number(n.slice(prefix.length))),
    );
    for (const name of stale) await rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    try {
      await generate(opts.ffmpeg, work, { w, h, fps, seg, loop }, opts.signal);
      await rm(dir, { recursive: true, force: true });
      await rename(work, dir);
    } catch (err) {
      await rm(work, { recursive: true, force: true });
      throw err;
    }
  }
  const names = (await readdir(dir)).filter((n) => /^seg_\d+\.ts$/.test(n)).sort();
  return {
    dir,
    segmentSec: seg,
    segments: await Promise.all(names.map((n) => readFile(path.join(dir, n)))),
    ads: await Promise.all(
      ADS.map(async (a) => ({
        id: a.id,
        durationSec: a.durationSec,
        mp4: await readFile(path.join(dir, `${a.id}.mp4`)),
      })),
    ),
    background: await readFile(path.join(dir, 'background.png')),
  };
}

async function generate(
  ffmpeg: string,
  dir: string,
  p: { w: number; h: number; fps: number; seg: number; loop: number },
  signal?: AbortSignal,
): Promise<void> {
  const ff = (args: string[]) =>
    run(ffmpeg, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], JOB_MS, signal);
  const font = `fontfile=${FONT}`;
  const big = Math.round(p.h / 9);
  // The content: a clock of the loop's time and the segment number, burnt in; keyframes on segment boundaries.
  const clock = [
    `drawtext=${font}:text='LIVE  %{pts\\:hms}':x=(w-tw)/2:y=h*0.08:fontsize=${big}:fontcolor=white:box=1:boxcolor=black@0.6:boxborderw=8`,
    `drawtext=${font}:text='segment %{eif\\:trunc(t/${p.seg})\\:d}':x=(w-tw)/2:y=h*0.8:fontsize=${Math.round(big * 0.6)}:fontcolor=yellow:box=1:boxcolor=black@0.6:boxborderw=6`,
  ].join(',');
  await ff([
    ...[
      '-f',
      'lavfi',
      '-i',
      `testsrc2=size=${p.w}x${p.h}:rate=${p.fps}`,
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:beep_factor=4:sample_rate=48000',
    ],
    ...[
      '-t',
      String(p.loop),
      '-vf',
      clock,
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-profile:v',
      'main',
      '-pix_fmt',
      'yuv420p',
      '-b:v',
      '900k',
    ],
    ...[
      '-g',
      String(p.fps * p.seg),
      '-keyint_min',
      String(p.fps * p.seg),
      '-sc_threshold',
      '0',
      '-force_key_frames',
      `expr:gte(t,n_forced*${p.seg})`,
    ],
    ...['-c:a', 'aac', '-b:a', '96k', '-ac', '2'],
    ...[
      '-f',
      'hls',
      '-hls_time',
      String(p.seg),
      '-hls_list_size',
      '0',
      '-hls_segment_filename',
      path.join(dir, 'seg_%03d.ts'),
      path.join(dir, 'index.m3u8'),
    ],
  ]);
  for (const ad of ADS) {
    const title = `drawtext=${font}:text='${text(ad.text)}':x=(w-tw)/2:y=h*0.3:fontsize=${big * 1.5}:fontcolor=white`;
    const countdown = `drawtext=${font}:text='ad ends in %{eif\\:${ad.durationSec}-t\\:d} s':x=(w-tw)/2:y=h*0.62:fontsize=${big}:fontcolor=white@0.9`;
    await ff([
      ...[
        '-f',
        'lavfi',
        '-i',
        `color=c=${ad.color}:size=${p.w}x${p.h}:rate=${p.fps}`,
        '-f',
        'lavfi',
        '-i',
        `sine=frequency=${ad.tone}:sample_rate=48000`,
      ],
      ...[
        '-t',
        String(ad.durationSec),
        '-vf',
        `${title},${countdown}`,
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-ac',
        '2',
        '-movflags',
        '+faststart',
      ],
      path.join(dir, `${ad.id}.mp4`),
    ]);
  }
  await ff([
    ...[
      '-f',
      'lavfi',
      '-i',
      `gradients=size=${p.w}x${p.h}:c0=0x0b1d3a:c1=0x3a0b2e:x0=0:y0=0:x1=${p.w}:y1=${p.h}:nb_colors=2`,
    ],
    ...[
      '-vf',
      `drawtext=${font}:text='ACME SPORTS':x=w*0.03:y=h*0.06:fontsize=${big}:fontcolor=white@0.85`,
      '-frames:v',
      '1',
    ],
    path.join(dir, 'background.png'),
  ]);
  await writeFile(path.join(dir, 'complete'), new Date().toISOString());
}
