/**
 * Transcoding one creative (a progressive MP4) into renditions matching a content's ladder
 * profile (lib/stitch/profile.ts) with ffmpeg (the reference transcoder's runner, lib/transcoder):
 * each rung scaled into its resolution (letter- or pillar-boxed, never stretched) at a bitrate
 * under its BANDWIDTH, key frames forced at every segment boundary so each segment is the
 * content's length (every EXTINF ≤ its target duration), audio resampled to the content's channels
 * and rate (silence when the creative has none). HLS: one media playlist per rung (TS or fMP4,
 * audio muxed, or in its own playlist when the content's is demuxed) and a master written here
 * with the content's CODECS; DASH: one MPD with a video AdaptationSet of every rung and an audio one.
 */
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { run } from '../transcoder/ffmpeg.js';
import type { MediaInfo } from '../transcoder/compose.js';
import type { X264Preset } from '../config/schema.js';
import type { LadderProfile, Rung } from '../stitch/profile.js';

export interface TranscodeResult {
  manifest: string;
}

const AUDIO_BPS = 128_000;

/** Video bits per second for a rung: what its BANDWIDTH leaves after audio, with headroom for the container. */
export function videoBitrate(r: Rung, withAudio: boolean): number {
  return Math.max(150_000, Math.floor((r.bandwidth - (withAudio ? AUDIO_BPS : 0)) * 0.85));
}

function scaleFilter(r: Rung, fps: number | undefined): string {
  const f = `scale=${r.width}:${r.height}:force_original_aspect_ratio=decrease,pad=${r.width}:${r.height}:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p`;
  return fps ? `${f},fps=${fps}` : f;
}

function videoCodec(p: LadderProfile, r: Rung): string[] {
  if (p.video === 'hevc') return ['-c:v', 'libx265', '-tag:v', 'hvc1', '-x265-params', 'log-level=error'];
  // avc1.PPCCLL: the content's profile (42 baseline, 4D main, else high).
  const pp = /avc[13]\.([0-9a-f]{2})/i.exec(r.codecs)?.[1]?.toLowerCase();
  return ['-c:v', 'libx264', '-profile:v', pp === '42' ? 'baseline' : pp === '4d' ? 'main' : 'high'];
}

/** Key frames at every segment boundary, none elsewhere (no scene cuts), so segments are exactly the content's length. */
const gop = (sec: number, preset: X264Preset) => [
  '-force_key_frames',
  `expr:gte(t,n_forced*${sec})`,
  '-sc_threshold',
  '0',
  '-preset',
  preset,
];

function audioOut(p: LadderProfile): string[] {
  const a = p.audio!;
  return ['-c:a', 'aac', '-ac', String(a.channels), '-ar', String(a.sampleRate), '-b:a', String(AUDIO_BPS)];
}

/** The input arguments: the creative, plus generated silence when the content has audio and the creative has none. */
function inputs(p: LadderProfile, src: string, info: MediaInfo): { args: string[]; audio: string } {
  if (!p.audio || info.audio) return { args: ['-i', src], audio: '0:a:0' };
  // The silence lasts as long as the creative: bounded on its own, since an audio-only run (demuxed audio) has no video to stop it.
  const sec = String(info.duration ?? info.video?.duration ?? 1);
  return {
    args: [
      '-i',
      src,
      '-f',
      'lavfi',
      '-t',
      sec,
      '-i',
      `anullsrc=r=${p.audio.sampleRate}:cl=${p.audio.channels === 1 ? 'mono' : 'stereo'}`,
      '-shortest',
    ],
    audio: '1:a:0',
  };
}

const BASE = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];

export async function transcode(
  ffmpeg: string,
  p: LadderProfile,
  src: string,
  info: MediaInfo,
  dir: string,
  timeoutMs: number,
  signal: AbortSignal,
  preset: X264Preset,
): Promise<TranscodeResult> {
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1000, deadline - Date.now());
  const input = inputs(p, src, info);
  if (p.protocol === 'dash') {
    const maps: string[] = [];
    const split = `[0:v:0]split=${p.rungs.length}${p.rungs.map((_, i) => `[s${i}]`).join('')}`;
    const scales = p.rungs.map((r, i) => `[s${i}]${scaleFilter(r, p.fps)}[v${i}]`);
    p.rungs.forEach((r, i) =>
      maps.push(
        '-map',
        `[v${i}]`,
        `-b:v:${i}`,
        String(videoBitrate(r, !!p.audio)),
        `-maxrate:v:${i}`,
        String(Math.floor(videoBitrate(r, !!p.audio) * 1.1)),
        `-bufsize:v:${i}`,
        String(videoBitrate(r, !!p.audio) * 2),
      ),
    );
    const audio = p.audio ? ['-map', input.audio, ...audioOut(p)] : [];
    await run(
      ffmpeg,
      [
        ...BASE,
        ...input.args,
        '-filter_complex',
        [split, ...scales].join(';'),
        ...maps,
        ...videoCodec(p, p.rungs[0]!),
        ...gop(p.segmentSec, preset),
        ...audio,
        '-f',
        'dash',
        '-seg_duration',
        String(p.segmentSec),
        '-use_template',
        '1',
        '-use_timeline',
        '1',
        '-adaptation_sets',
        p.audio ? 'id=0,streams=v id=1,streams=a' : 'id=0,streams=v',
        '-init_seg_name',
        'init-$RepresentationID$.m4s',
        '-media_seg_name',
        'chunk-$RepresentationID$-$Number%05d$.m4s',
        path.join(dir, 'manifest.mpd'),
      ],
      left(),
      signal,
    );
    return { manifest: 'manifest.mpd' };
  }

  const fmp4 = p.container === 'fmp4';
  const hls = (name: string) => [
    '-f',
    'hls',
    '-hls_time',
    String(p.segmentSec),
    '-hls_playlist_type',
    'vod',
    '-hls_segment_type',
    fmp4 ? 'fmp4' : 'mpegts',
    ...(fmp4 ? ['-hls_fmp4_init_filename', `${name}_init.mp4`] : []),
    '-hls_segment_filename',
    path.join(dir, `${name}_%03d.${fmp4 ? 'm4s' : 'ts'}`),
    path.join(dir, `${name}.m3u8`),
  ];
  const muxed = p.audio !== null && !p.audio.demuxed;
  for (const [i, r] of p.rungs.entries()) {
    const v = videoBitrate(r, muxed);
    await run(
      ffmpeg,
      [
        ...BASE,
        ...input.args,
        '-map',
        '0:v:0',
        ...(muxed ? ['-map', input.audio, ...audioOut(p)] : ['-an']),
        '-vf',
        scaleFilter(r, p.fps),
        ...videoCodec(p, r),
        '-b:v',
        String(v),
        '-maxrate',
        String(Math.floor(v * 1.1)),
        '-bufsize',
        String(v * 2),
        ...gop(p.segmentSec, preset),
        ...hls(`r${i}`),
      ],
      left(),
      signal,
    );
  }
  if (p.audio?.demuxed)
    await run(
      ffmpeg,
      [...BASE, ...input.args, '-map', input.audio, '-vn', ...audioOut(p), ...hls('a')],
      left(),
      signal,
    );
  await writeFile(path.join(dir, 'master.m3u8'), hlsMaster(p));
  return { manifest: 'master.m3u8' };
}

/** The ad's master: one variant per content rung with the content's CODECS, so the stitcher's matcher pairs them one to one. */
export function hlsMaster(p: LadderProfile): string {
  const out = ['#EXTM3U', `#EXT-X-VERSION:${p.container === 'fmp4' ? 7 : 3}`, '#EXT-X-INDEPENDENT-SEGMENTS'];
  const group = p.audio?.demuxed ? 'ad-audio' : undefined;
  if (group) {
    const lang = p.audio!.language ? `,LANGUAGE="${p.audio!.language.replace(/[^A-Za-z0-9-]/g, '')}"` : '';
    out.push(
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${group}",NAME="ad"${lang},CHANNELS="${p.audio!.channels}",DEFAULT=YES,AUTOSELECT=YES,URI="a.m3u8"`,
    );
  }
  for (const [i, r] of p.rungs.entries()) {
    const codecs = r.codecs.replace(/[^A-Za-z0-9.,-]/g, '');
    out.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${r.bandwidth},RESOLUTION=${r.width}x${r.height}${codecs ? `,CODECS="${codecs}"` : ''}${p.fps ? `,FRAME-RATE=${p.fps.toFixed(3)}` : ''}${group ? `,AUDIO="${group}"` : ''}`,
      `r${i}.m3u8`,
    );
  }
  return out.join('\n') + '\n';
}
