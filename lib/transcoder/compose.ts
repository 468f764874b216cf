/**
 * The ffmpeg command line of one squeezeback segment (docs/design.md §12): the background (PNG or a
 * solid colour), the ad in its box, the content on top in its box, optional frames, the in/out
 * animation as expressions over `t`; H.264 + AAC in MPEG-TS at the content segment's size, frame
 * rate, duration and start PTS. Pure: it only builds arguments.
 */
import type { Composition } from './job.js';
import { DEFAULT_X264_PRESET, type X264Preset } from '../config/schema.js';

/** What ffprobe told about an input (./ffmpeg.ts `probe`). */
export interface MediaInfo {
  video?: { width: number; height: number; fps: string; startPts?: number; duration?: number };
  /** `startPts` (90 kHz) and `span` (s): where the audio packets lie, when the packets were read. */
  audio?: { sampleRate: number; channels: number; startPts?: number; span?: number };
  duration?: number;
}

export interface ComposeInput {
  comp: Composition;
  content: MediaInfo;
  ad: MediaInfo;
  files: { content: string; ad: string; background?: string | undefined };
  output: string;
  /** x264 and filter threads; 0 = ffmpeg's choice. */
  threads?: number;
  /** x264's speed/size trade-off (X264_PRESETS); veryfast unless the operator chose another. */
  preset?: X264Preset;
}

export class ComposeError extends Error {
  override name = 'ComposeError';
}

const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));
const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(6));

/** `fps` as ffprobe writes it (`30000/1001`); a sane default when it is unusable. */
function frameRate(fps: string | undefined): { text: string; value: number } {
  const m = /^(\d{1,6})\/(\d{1,6})$/.exec(fps ?? '');
  const value = m ? Number(m[1]) / Number(m[2]) : NaN;
  return value >= 1 && value <= 120 ? { text: fps!, value } : { text: '25', value: 25 };
}

/**
 * Squeeze progress over the segment, 0 = content full frame, 1 = content in its box, smoothstep-eased
 * so the motion starts and ends softly. `in`: over the first in_sec; `out`: the reverse over the
 * last out_sec, back to full frame at the segment's end; `hold`: 1. An animation longer than the
 * segment is shortened to it (a segment is composed on its own; the next one starts where it ends).
 */
export function progressExpr(
  phase: Composition['phase'],
  inSec: number,
  outSec: number,
  duration: number,
): string | undefined {
  const len = phase === 'in' ? Math.min(inSec, duration) : phase === 'out' ? Math.min(outSec, duration) : 0;
  if (len <= 0) return undefined;
  const p = phase === 'in' ? `clip(t/${num(len)},0,1)` : `clip((${num(duration)}-t)/${num(len)},0,1)`;
  return `(${p}*${p}*(3-2*${p}))`;
}

/** The segment's geometry in pixels. */
export function layoutBoxes(comp: Composition, width: number, height: number) {
  const lbar = comp.layout === 'lbar';
  const content = {
    w: even(width * comp.ratios.content),
    h: even(height * comp.ratios.content),
    x: lbar ? 0 : Math.round(width * comp.positions.content.x),
    y: lbar ? 0 : Math.round(height * comp.positions.content.y),
  };
  const ad = lbar
    ? { w: width, h: height, x: 0, y: 0 }
    : {
        w: even(width * comp.ratios.ad),
        h: -2,
        x: Math.round(width * comp.positions.ad.x),
        y: Math.round(height * comp.positions.ad.y),
      };
  return { content, ad };
}

const frameOf = (f: Composition['frames']['content']) => (f.enabled && f.thickness_px > 0 ? f : undefined);

/** ffmpeg's native AAC encoder: 1024 samples a frame, and one frame of priming before the first. */
const AAC_FRAME = 1024;

/**
 * The squeezed segment's audio covers exactly the AAC frames the content segment's audio covers,
 * so it meets its neighbours (content or squeezed) without overlap or gap and a break of any
 * length accumulates no A/V drift. Frames: the content audio's span in whole AAC frames at the
 * output rate (from the segment's video start and duration when the content has no audio, or its
 * packets were not read). The encoder writes its priming frame first, one frame before the first
 * real sample, so the real samples are one frame fewer than the frames and start one frame after
 * the first packet. `offsetSec`: where the first real sample goes, from the video's first frame.
 */
export function audioSlot(
  content: MediaInfo,
  duration: number,
  rate: number,
): { samples: number; offsetSec: number; frames: number } {
  const a = content.audio;
  const videoStart = content.video?.startPts;
  const measured =
    a?.span !== undefined &&
    a.startPts !== undefined &&
    videoStart !== undefined &&
    a.span > 0 &&
    a.span <= duration + 1;
  const frames = Math.max(2, Math.round(((measured ? a.span! : duration) * rate) / AAC_FRAME));
  const firstPacketSec = measured ? (a.startPts! - videoStart!) / 90000 : 0;
  return { frames, samples: (frames - 1) * AAC_FRAME, offsetSec: firstPacketSec + AAC_FRAME / rate };
}

/** The ffmpeg arguments; throws ComposeError when the content has no usable video. */
export function composeArgs({
  comp,
  content,
  ad,
  files,
  output,
  threads = 0,
  preset = DEFAULT_X264_PRESET,
}: ComposeInput): string[] {
  const v = content.video;
  if (!v || !(v.width > 0) || !(v.height > 0)) throw new ComposeError('the content segment has no video stream');
  if (!ad.video) throw new ComposeError('the ad has no video stream');
  const { width: W, height: H } = v;
  const fps = frameRate(v.fps);
  const duration = v.duration ?? content.duration ?? comp.durationSec;
  if (!duration || !(duration > 0) || duration > 60)
    throw new ComposeError('the content segment duration is unknown or over 60 s');
  const D = num(duration);
  const box = layoutBoxes(comp, W, H);
  const frames = Math.max(1, Math.round(duration * fps.value));
  const e = progressExpr(comp.phase, comp.inSec, comp.outSec, duration);

  const graph: string[] = [];
  graph.push(
    files.background
      ? `[2:v]scale=${W}:${H},setsar=1,format=yuv420p[bg]`
      : `color=c=black:s=${W}x${H}:r=${fps.text}:d=${D}[bg]`,
  );

  // The ad: in its box (dualbox) or covering the frame (L-bar: the content sits on top of it).
  const adFrame = comp.layout === 'dualbox' ? frameOf(comp.frames.ad) : undefined;
  const adScale =
    comp.layout === 'lbar'
      ? `scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H}`
      : `scale=${box.ad.w}:-2`;
  const adPad = adFrame
    ? `,format=yuva420p,pad=w=iw+${2 * adFrame.thickness_px}:h=ih+${2 * adFrame.thickness_px}:x=${adFrame.thickness_px}:y=${adFrame.thickness_px}:color=${adFrame.color}`
    : '';
  const adT = adFrame?.thickness_px ?? 0;
  graph.push(`[1:v]setpts=PTS-STARTPTS,fps=${fps.text},${adScale},setsar=1${adPad}[ad]`);
  graph.push(`[bg][ad]overlay=x=${box.ad.x - adT}:y=${box.ad.y - adT}:eof_action=repeat[under]`);

  // The content: full frame → its box. Per-frame sizes need eval=frame, and a frame drawn with pad
  // (drawbox keeps the size it was configured with).
  const cFrame = frameOf(comp.frames.content);
  const cT = cFrame?.thickness_px ?? 0;
  const scaleOf = (full: number, boxed: number) => (e ? `'2*trunc((${full}-${full - boxed}*${e})/2)'` : String(boxed));
  const posOf = (target: number) => (e ? `'${target}*${e}-${cT}'` : String(target - cT));
  const cScale = `scale=w=${scaleOf(W, box.content.w)}:h=${scaleOf(H, box.content.h)}${e ? ':eval=frame' : ''}`;
  const cPad = cFrame
    ? `,format=yuva420p,pad=w=iw+${2 * cT}:h=ih+${2 * cT}:x=${cT}:y=${cT}:color=${cFrame.color}${e ? ':eval=frame' : ''}`
    : '';
  graph.push(`[0:v]setpts=PTS-STARTPTS,${cScale},setsar=1${cPad}[content]`);
  graph.push(
    `[under][content]overlay=x=${posOf(box.content.x)}:y=${posOf(box.content.y)}:eof_action=repeat:format=yuv420,format=yuv420p,trim=end_frame=${frames}[v]`,
  );

  // Audio: the ad's (default) or the content's, at the content's sample rate and layout (so the
  // squeezed segment keeps the variant's audio parameters); silence when that source has none.
  // Cut and placed to cover what the content segment's audio covers (audioSlot).
  const rate = content.audio?.sampleRate ?? ad.audio?.sampleRate ?? 48000;
  const layout = (content.audio?.channels ?? ad.audio?.channels ?? 2) === 1 ? 'mono' : 'stereo';
  const slot = audioSlot(content, duration, rate);
  const source = comp.audio === 'content' ? (content.audio ? '[0:a]' : undefined) : ad.audio ? '[1:a]' : undefined;
  const cut = `atrim=end_sample=${slot.samples},asetpts=PTS-STARTPTS${slot.offsetSec < 0 ? '-' : '+'}${num(Math.abs(slot.offsetSec))}/TB`;
  graph.push(
    source
      ? `${source}asetpts=PTS-STARTPTS,aresample=${rate},aformat=sample_fmts=fltp:channel_layouts=${layout},apad,${cut}[a]`
      : `anullsrc=r=${rate}:cl=${layout},${cut}[a]`,
  );

  const start = v.startPts;
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];
  args.push('-i', files.content);
  args.push('-ss', num(comp.adOffsetSec), '-i', files.ad);
  if (files.background) args.push('-loop', '1', '-framerate', fps.text, '-t', D, '-i', files.background);
  args.push('-filter_complex', graph.join(';'));
  if (threads > 0) args.push('-filter_complex_threads', String(threads));
  // The length is set in the graph (video: `trim` to the frame count; audio: `atrim`), not by `-t`
  // or `-frames:v`: either closes every stream of the output, and the audio may rightly end up to
  // a frame after the video (it ends where the content's audio ends).
  args.push('-map', '[v]', '-map', '[a]');
  args.push(
    '-c:v',
    'libx264',
    '-preset',
    preset,
    '-crf',
    '21',
    '-pix_fmt',
    'yuv420p',
    '-r',
    fps.text,
    '-force_key_frames',
    'expr:eq(n,0)',
    '-g',
    String(Math.ceil(fps.value * duration) + 1),
  );
  if (threads > 0) args.push('-threads', String(threads));
  args.push('-c:a', 'aac', '-b:a', '128k', '-ar', String(rate), '-ac', layout === 'mono' ? '1' : '2');
  // Timestamps: the content's own start, no muxer delay, so the segment drops in without a jump.
  args.push('-muxdelay', '0', '-muxpreload', '0');
  if (start !== undefined) args.push('-output_ts_offset', (start / 90000).toFixed(6));
  args.push('-f', 'mpegts', output);
  return args;
}
