/**
 * ffmpeg for the transcoder tests: whether it is there (with CI=true a missing ffmpeg fails the run;
 * elsewhere the dependent tests are skipped with the reason), small real inputs made with lavfi,
 * ffprobe as JSON, a frame as raw RGB, and a tiny static file server for the inputs.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createReadStream, existsSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { inCI } from './services.js';

const exec = promisify(execFile);

export const FFMPEG = process.env['FFMPEG_PATH'] || 'ffmpeg';
export const FFPROBE = process.env['FFPROBE_PATH'] || 'ffprobe';

function available(bin: string): boolean {
  try {
    execFileSync(bin, ['-hide_banner', '-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Returns false (and fails t under CI=true, else skips with the reason) when ffmpeg/ffprobe are missing. */
export function needFfmpeg(t: Test): boolean {
  for (const bin of [FFMPEG, FFPROBE]) {
    if (available(bin)) continue;
    const msg = `${bin} is not installed (apt-get install ffmpeg)`;
    if (inCI) t.fail(msg);
    else t.test(msg, { skip: msg }, () => undefined);
    return false;
  }
  return true;
}

export async function ffmpeg(args: string[]): Promise<void> {
  await exec(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

export interface Probe {
  streams: Array<{
    codec_type: string;
    codec_name: string;
    width?: number;
    height?: number;
    start_pts?: number;
    start_time?: string;
    duration?: string;
    r_frame_rate?: string;
  }>;
  format: { duration?: string; start_time?: string };
}

export async function ffprobe(file: string): Promise<Probe> {
  const { stdout } = await exec(FFPROBE, [
    '-v',
    'error',
    '-show_entries',
    'stream=codec_type,codec_name,width,height,start_pts,start_time,duration,r_frame_rate:format=duration,start_time',
    '-of',
    'json',
    file,
  ]);
  return JSON.parse(stdout) as Probe;
}

/**
 * Where each kind of stream's packets lie, in seconds: the first packet's PTS and the last packet's
 * end (PTS + duration), and the packet count. The stream `duration` ffprobe prints for MPEG-TS comes
 * from PES timestamps and leaves out the last PES's frames, so spans are measured from the packets.
 */
export async function packetSpans(
  file: string,
): Promise<Record<'video' | 'audio', { start: number; end: number; span: number; packets: number } | undefined>> {
  const { stdout } = await exec(
    FFPROBE,
    [
      '-v',
      'error',
      '-show_entries',
      'stream=index,codec_type:packet=stream_index,pts_time,duration_time',
      '-of',
      'json',
      file,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const parsed = JSON.parse(stdout) as {
    streams: Array<{ index: number; codec_type: string }>;
    packets: Array<{ stream_index: number; pts_time?: string; duration_time?: string }>;
  };
  const of = (kind: 'video' | 'audio') => {
    const index = parsed.streams.find((s) => s.codec_type === kind)?.index;
    let start = Infinity;
    let end = -Infinity;
    let packets = 0;
    for (const p of parsed.packets) {
      if (p.stream_index !== index || p.pts_time === undefined) continue;
      const pts = Number(p.pts_time);
      start = Math.min(start, pts);
      end = Math.max(end, pts + Number(p.duration_time ?? 0));
      packets++;
    }
    return packets ? { start, end, span: end - start, packets } : undefined;
  };
  return { video: of('video'), audio: of('audio') };
}

/** The frame shown at `sec` after the segment's start, as rgb24 bytes (width × height × 3). */
export async function rgbFrameAt(file: string, sec: number): Promise<Buffer> {
  const { stdout } = await promisify(execFile)(
    FFMPEG,
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      file,
      '-ss',
      String(sec),
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout;
}

/** [r, g, b] at (x, y) of an rgb24 frame `width` wide. */
export const pixel = (rgb: Buffer, width: number, x: number, y: number): [number, number, number] => {
  const i = (Math.round(y) * width + Math.round(x)) * 3;
  return [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
};

/** Serves the files of `dir` (GET only) on loopback; answers its base URL and a stop function. */
export async function serveDir(dir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (!existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
