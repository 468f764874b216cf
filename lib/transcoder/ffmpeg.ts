/**
 * Running ffmpeg and ffprobe (Debian's `ffmpeg` package, or FFMPEG_PATH; docs/design.md §12): a
 * deadline that kills the process, the end of stderr kept for the error, a missing binary reported
 * by name with the package to install.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { MediaInfo } from './compose.js';

export class FfmpegError extends Error {
  override name = 'FfmpegError';
  constructor(
    readonly code: 'missing' | 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

const STDERR_KEEP = 4096;

/** ffprobe next to the configured ffmpeg (`/opt/x/ffmpeg` → `/opt/x/ffprobe`), else on PATH. */
export function ffprobeBeside(ffmpeg: string): string {
  return ffmpeg.includes('/')
    ? path.join(path.dirname(ffmpeg), path.basename(ffmpeg).replace(/ffmpeg/, 'ffprobe'))
    : ffmpeg.replace(/ffmpeg/, 'ffprobe');
}

export const missingMessage = (bin: string) =>
  `${bin} was not found: install Debian's ffmpeg package (apt-get install ffmpeg) or set FFMPEG_PATH`;

/** Runs `bin args`; resolves stdout; rejects with FfmpegError (killed with SIGKILL at the deadline). */
export function run(bin: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    let timedOut = false;
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString('utf8')).slice(-STDERR_KEEP);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        e.code === 'ENOENT' || e.code === 'EACCES'
          ? new FfmpegError('missing', missingMessage(bin))
          : new FfmpegError('failed', `${bin}: ${e.message}`),
      );
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      if (timedOut)
        return reject(
          new FfmpegError('timeout', `${path.basename(bin)} ran longer than ${timeoutMs} ms and was killed`),
        );
      if (code === 0) return resolve(Buffer.concat(out));
      reject(
        new FfmpegError(
          'failed',
          `${path.basename(bin)} exited with ${code ?? sig}: ${err.trim().split('\n').slice(-3).join(' | ')}`,
        ),
      );
    });
  });
}

interface ProbeStream {
  index?: number;
  codec_type?: string;
  width?: number;
  height?: number;
  r_frame_rate?: string;
  start_time?: string;
  duration?: string;
  sample_rate?: string;
  channels?: number;
}

interface ProbePacket {
  stream_index?: number;
  pts_time?: string;
  duration_time?: string;
}

const seconds = (s: string | undefined) => (s !== undefined && Number.isFinite(Number(s)) ? Number(s) : undefined);

/**
 * Where the audio packets lie: the first packet's PTS (90 kHz units) and the span in seconds from
 * it to the last packet's end. Not the stream `duration`: in MPEG-TS ffprobe computes that from
 * PES timestamps and leaves out the frames of the last PES, so it reads short by up to a PES.
 */
function audioSpan(
  packets: ProbePacket[] | undefined,
  index: number | undefined,
): { startPts: number; span: number } | undefined {
  let first: number | undefined;
  let end: number | undefined;
  for (const p of packets ?? []) {
    const pts = seconds(p.pts_time);
    if (p.stream_index !== index || pts === undefined) continue;
    const d = Math.max(0, seconds(p.duration_time) ?? 0);
    if (first === undefined || pts < first) first = pts;
    if (end === undefined || pts + d > end) end = pts + d;
  }
  return first !== undefined && end !== undefined && end > first
    ? { startPts: Math.round(first * 90000), span: end - first }
    : undefined;
}

/**
 * The streams of a media file, as far as composing needs them; start PTS in 90 kHz units.
 * `audioPackets`: also read the audio packets' timing (a content segment, a few hundred packets;
 * not the ad, whose audio is cut to the slot anyway).
 */
export async function probe(
  ffprobe: string,
  file: string,
  timeoutMs: number,
  opts: { audioPackets?: boolean } = {},
): Promise<MediaInfo> {
  const entries =
    'stream=index,codec_type,width,height,r_frame_rate,start_time,duration,sample_rate,channels:format=duration';
  const args = [
    '-v',
    'error',
    '-show_entries',
    opts.audioPackets ? `${entries}:packet=stream_index,pts_time,duration_time` : entries,
    '-of',
    'json',
    file,
  ];
  const json = await run(ffprobe, args, timeoutMs);
  let parsed: { streams?: ProbeStream[]; packets?: ProbePacket[]; format?: { duration?: string } };
  try {
    parsed = JSON.parse(json.toString('utf8')) as typeof parsed;
  } catch {
    throw new FfmpegError('failed', 'ffprobe answered something that is not JSON');
  }
  const v = parsed.streams?.find((s) => s.codec_type === 'video');
  const a = parsed.streams?.find((s) => s.codec_type === 'audio');
  const info: MediaInfo = {};
  if (v && v.width && v.height) {
    const start = seconds(v.start_time);
    info.video = { width: v.width, height: v.height, fps: v.r_frame_rate ?? '25/1' };
    if (start !== undefined) info.video.startPts = Math.round(start * 90000);
    const d = seconds(v.duration);
    if (d !== undefined) info.video.duration = d;
  }
  if (a && Number(a.sample_rate) > 0) {
    info.audio = { sampleRate: Number(a.sample_rate), channels: a.channels ?? 2 };
    const span = opts.audioPackets ? audioSpan(parsed.packets, a.index) : undefined;
    if (span) Object.assign(info.audio, span);
  }
  const d = seconds(parsed.format?.duration);
  if (d !== undefined) info.duration = d;
  return info;
}
