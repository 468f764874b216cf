/**
 * The live origin of `npm run demo`: the cue origin's sliding playlists (program date-time, SCTE-35
 * cues, a discontinuity where the loop starts again) over real MPEG-TS segments held in memory,
 * plus a few static files (the brand's background). Answers carry CORS headers, so hls.js on any
 * page can fetch the segments.
 */
import type http from 'node:http';
import { CueOriginSim, type CueOriginOptions } from './cue-origin.js';

export interface VideoOriginOptions extends Omit<CueOriginOptions, 'loopSegments'> {
  /** The content loop: media sequence n plays segments[n % length]. */
  segments: Buffer[];
  /** Other files by path (e.g. `/brand/background.png`), with their content type. */
  files?: Map<string, { type: string; body: Buffer }>;
}

const SEGMENT = /^\/[A-Za-z0-9_-]+\/seg_(\d{1,12})\.ts$/;

export class VideoOriginSim extends CueOriginSim {
  private readonly segments: Buffer[];
  private readonly files: Map<string, { type: string; body: Buffer }>;

  constructor(opts: VideoOriginOptions) {
    super({ ...opts, loopSegments: opts.segments.length });
    if (!opts.segments.length) throw new Error('VideoOriginSim needs at least one segment');
    this.segments = opts.segments;
    this.files = opts.files ?? new Map();
  }

  protected override handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.setHeader('Access-Control-Allow-Origin', '*');
    const path = (req.url ?? '/').split('?')[0]!;
    const seg = SEGMENT.exec(path);
    const file = seg
      ? { type: 'video/mp2t', body: this.segments[Number(seg[1]) % this.segments.length]! }
      : this.files.get(path);
    if (!file) return super.handle(req, res);
    req.resume();
    // A published segment never changes; a segment of the future is not there yet.
    if (seg && Number(seg[1]) > this.live()) return void res.writeHead(404).end();
    res.writeHead(200, {
      'Content-Type': file.type,
      'Content-Length': file.body.length,
      'Cache-Control': 'public, max-age=3600',
    });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }
}
