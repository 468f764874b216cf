/**
 * A live HLS origin over real MPEG-TS segments (issue 17, browser tests): the caller hands over
 * segments cut from one continuous encode (so timestamps run on across them); segment `i` is
 * published at `epochMs + i × segmentSec` and the window slides with the real clock, with program
 * date-times, until the last one (then `#EXT-X-ENDLIST`). Any path ending in `master.m3u8` answers
 * the one-variant master and any other `.m3u8` the media playlist, so the same origin serves as a
 * squeezeback `source_uri` (`/live/master.m3u8`) and as a DAI host (`/linear/…/stream/{id}/master.m3u8`);
 * segments are root-relative (`/seg/{i}.ts`), as a DAI provider's content segments are. Web
 * players fetch the segments from here, so it answers with CORS like a real CDN.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

export interface MediaOriginOptions {
  segments: Buffer[];
  segmentSec: number;
  windowSegments?: number;
  /** How many segments are already published at start (default 4). */
  published?: number;
  /** The variant's CODECS and RESOLUTION attributes. */
  codecs?: string;
  resolution?: string;
}

const HLS = 'application/vnd.apple.mpegurl';

export class MediaOriginSim extends HttpSim {
  epochMs = 0;
  /** Requests per path, to check who read what. */
  readonly requests = new Map<string, number>();

  /** A copy: restart() may change its shape. */
  private readonly opts: MediaOriginOptions;

  constructor(opts: MediaOriginOptions) {
    super();
    this.opts = { ...opts };
    this.restart();
  }

  /**
   * Starts the timeline again from segment 0 (a new live event over the same segments). `shape`
   * changes how many segments are published at once and listed from now on: a test that measured
   * its live-edge delay anew needs that much more content at the start (test/browser/players).
   */
  restart(shape: Pick<MediaOriginOptions, 'published' | 'windowSegments'> = {}): void {
    if (shape.published !== undefined) this.opts.published = shape.published;
    if (shape.windowSegments !== undefined) this.opts.windowSegments = shape.windowSegments;
    this.epochMs = Date.now() - ((this.opts.published ?? 4) - 0.5) * this.opts.segmentSec * 1000;
  }

  /** The newest published segment index at `nowMs` (capped at the last segment). */
  live(nowMs = Date.now()): number {
    return Math.min(this.opts.segments.length - 1, Math.floor((nowMs - this.epochMs) / (this.opts.segmentSec * 1000)));
  }

  master(): string {
    const { codecs = 'avc1.64001e,mp4a.40.2', resolution = '640x360' } = this.opts;
    return `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=1500000,CODECS="${codecs}",RESOLUTION=${resolution}\nvariant.m3u8\n`;
  }

  media(nowMs = Date.now()): string {
    const seg = this.opts.segmentSec;
    const live = this.live(nowMs);
    const first = Math.max(0, live - (this.opts.windowSegments ?? 6) + 1);
    const out = [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      `#EXT-X-TARGETDURATION:${Math.ceil(seg)}`,
      `#EXT-X-MEDIA-SEQUENCE:${first}`,
    ];
    for (let i = first; i <= live; i++)
      out.push(
        `#EXT-X-PROGRAM-DATE-TIME:${new Date(this.epochMs + i * seg * 1000).toISOString()}`,
        `#EXTINF:${seg.toFixed(3)},`,
        `/seg/${i}.ts`,
      );
    if (live === this.opts.segments.length - 1) out.push('#EXT-X-ENDLIST');
    return `${out.join('\n')}\n`;
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const { path, send } = this.cdnExchange(req, res, this.requests);
    const seg = /^\/seg\/(\d{1,6})\.ts$/.exec(path);
    if (seg) {
      const i = Number(seg[1]);
      return i <= this.live()
        ? send(200, 'video/mp2t', this.opts.segments[i]!)
        : send(404, 'text/plain', 'not published');
    }
    if (path.endsWith('master.m3u8')) return send(200, HLS, this.master());
    if (path.endsWith('.m3u8')) return send(200, HLS, this.media());
    send(404, 'text/plain', 'not found');
  }
}
