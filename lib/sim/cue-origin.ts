/**
 * A live HLS origin whose playlist carries SCTE-35 cues (issue 15): short segments on the real
 * clock, a window that advances, and cue tag lines injected before chosen media sequences, in
 * any dialect (EXT-X-CUE-OUT/-CONT/-IN, DATERANGE, OATCLS, EXT-X-SCTE35 …; binaries from
 * ./scte35-encode.ts). Serves `/<name>/master.m3u8` (one variant) and `/<name>/media.m3u8` for
 * any channel name, each with its own cues; `pdt: false` drops EXT-X-PROGRAM-DATE-TIME.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

export interface CueOriginOptions {
  segmentSec?: number;
  windowSegments?: number;
  /** Epoch of media sequence 0, ms (default: the start, rounded down to a segment). */
  epochMs?: number;
  pdt?: boolean;
  /**
   * The content repeats every this many segments (the demo loops a few minutes of real video): an
   * EXT-X-DISCONTINUITY where it starts again, counted by EXT-X-DISCONTINUITY-SEQUENCE. 0 = no loop.
   */
  loopSegments?: number;
}

export class CueOriginSim extends HttpSim {
  readonly segmentSec: number;
  readonly windowSegments: number;
  readonly epochMs: number;
  private readonly pdt: boolean;
  readonly loopSegments: number;
  /** channel → media sequence → tag lines written before that segment. */
  private readonly cues = new Map<string, Map<number, string[]>>();
  /** Playlist reads per channel, to check a source is followed (and by how many). */
  readonly reads = new Map<string, number>();

  constructor(opts: CueOriginOptions = {}) {
    super();
    this.segmentSec = opts.segmentSec ?? 1;
    this.windowSegments = opts.windowSegments ?? 60;
    const segMs = this.segmentSec * 1000;
    this.epochMs = opts.epochMs ?? Math.floor(Date.now() / segMs) * segMs - 1000 * segMs;
    this.pdt = opts.pdt ?? true;
    this.loopSegments = opts.loopSegments ?? 0;
  }

  /** The newest published media sequence at `nowMs`. */
  live(nowMs = Date.now()): number {
    return Math.floor((nowMs - this.epochMs) / (this.segmentSec * 1000));
  }

  /** The program date-time of a media sequence, ms. */
  pdtOf(seq: number): number {
    return this.epochMs + seq * this.segmentSec * 1000;
  }

  /** Injects cue tag lines before segment `seq` of `channel`. */
  cue(channel: string, seq: number, ...lines: string[]): void {
    let byChannel = this.cues.get(channel);
    if (!byChannel) this.cues.set(channel, (byChannel = new Map()));
    byChannel.set(seq, [...(byChannel.get(seq) ?? []), ...lines]);
  }

  media(channel: string, nowMs = Date.now()): string {
    const live = this.live(nowMs);
    const first = Math.max(0, live - this.windowSegments + 1);
    const out = [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      `#EXT-X-TARGETDURATION:${Math.ceil(this.segmentSec)}`,
      `#EXT-X-MEDIA-SEQUENCE:${first}`,
    ];
    const loop = this.loopSegments;
    if (loop > 0) out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${Math.floor(first / loop)}`);
    const cues = this.cues.get(channel);
    for (let seq = first; seq <= live; seq++) {
      if (loop > 0 && seq > first && seq % loop === 0) out.push('#EXT-X-DISCONTINUITY');
      out.push(...(cues?.get(seq) ?? []));
      if (this.pdt) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(this.pdtOf(seq)).toISOString()}`);
      out.push(`#EXTINF:${this.segmentSec.toFixed(3)},`, `/${channel}/seg_${seq}.ts`);
    }
    return out.join('\n') + '\n';
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    const m = /^\/([A-Za-z0-9_-]+)\/(master|media)\.m3u8$/.exec((req.url ?? '').split('?')[0]!);
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const [, channel, kind] = m as unknown as [string, string, string];
    this.reads.set(`${channel}/${kind}`, (this.reads.get(`${channel}/${kind}`) ?? 0) + 1);
    const body =
      kind === 'master'
        ? ['#EXTM3U', '#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720', `/${channel}/media.m3u8`, ''].join(
            '\n',
          )
        : this.media(channel);
    res.writeHead(200, { 'Content-Type': 'application/vnd.apple.mpegurl' }).end(body);
  }
}
