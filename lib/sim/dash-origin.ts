/**
 * A DASH origin over real fMP4 media (issue 30, browser tests with Shaka and dash.js): the caller
 * hands over what ffmpeg's dash muxer wrote (`-use_template 1 -use_timeline 1`: one MPD whose
 * SegmentTemplates name `$RepresentationID$`/`$Number$` files, and those files).
 *
 * - `live: false`: any `.mpd` path answers that MPD as written (a VOD, `type="static"`), e.g. as a
 *   catalog item's content or an ad's media file for stitching.
 * - `live: true`: any `.mpd` path answers a `type="dynamic"` MPD over the same segments on the real
 *   clock, the way a packager's live output looks: segment `i` (0-based) is available from
 *   `availabilityStartTime + (i + 1) × segmentSec`, the SegmentTimelines hold the last
 *   `windowSegments` available segments, `publishTime` is now; after the last segment nothing new
 *   appears. So it serves as the DAI host of `/dai/manifest/…/manifest.mpd`.
 *
 * Media files are answered by their name under any path (the MPD names them relatively, so they
 * resolve next to whatever MPD path was asked); a live segment not yet available is a 404. Web
 * players fetch the media from here, so it answers with CORS like a real CDN.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

export interface DashOriginOptions {
  /** The MPD ffmpeg wrote (static, SegmentTimeline in every Representation). */
  mpd: string;
  /** Init and media segments by file name. */
  files: Map<string, Buffer>;
  segmentSec: number;
  live?: boolean;
  windowSegments?: number;
  /** Live: how many segments are available at start (default 6). */
  published?: number;
  /** Live: the MPD's `suggestedPresentationDelay`, as packagers write it (default none). */
  suggestedDelaySec?: number;
  /**
   * Live: a `UTCTiming` element (http-iso) pointing at this origin's `/time`, so players take the
   * wall clock from the origin as packagers publish it, not from an HTTP Date header (whole
   * seconds: dash.js, falling back to the MPD answer's Date, put its clock 1.95 s behind once).
   */
  utcTiming?: boolean;
}

const DASH = 'application/dash+xml';

/** One SegmentTimeline as [t, d] pairs, expanded (ffmpeg writes no `r="-1"`). */
function expand(timeline: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const m of timeline.matchAll(/<S\b([^>]*)\/>/g)) {
    const attrs = Object.fromEntries([...m[1]!.matchAll(/(\w+)="(-?\d+)"/g)].map((a) => [a[1]!, Number(a[2])]));
    const { t, d = 0, r = 0 } = attrs as { t?: number; d?: number; r?: number };
    if (t !== undefined) next = t;
    for (let i = 0; i <= r; i++) {
      out.push([next, d]);
      next += d;
    }
  }
  return out;
}

export class DashOriginSim extends HttpSim {
  epochMs = 0;
  /** Requests per path, to check who read what. */
  readonly requests = new Map<string, number>();
  private readonly timelines: Array<Array<[number, number]>>;
  private readonly segmentCount: number;

  constructor(private readonly opts: DashOriginOptions) {
    super();
    this.timelines = [...opts.mpd.matchAll(/<SegmentTimeline>([\s\S]*?)<\/SegmentTimeline>/g)].map((m) =>
      expand(m[1]!),
    );
    this.segmentCount = Math.min(...this.timelines.map((x) => x.length));
    if (!this.timelines.length || !(this.segmentCount > 0))
      throw new Error('DashOriginSim: the MPD has no SegmentTimeline');
    this.restart();
  }

  /** Live: starts the timeline again, with `published` segments available now. */
  restart(): void {
    this.epochMs = Date.now() - (this.opts.published ?? 6) * this.opts.segmentSec * 1000;
  }

  /** Live: how many segments are available at `nowMs` (capped at all of them). */
  available(nowMs = Date.now()): number {
    return Math.max(0, Math.min(this.segmentCount, Math.floor((nowMs - this.epochMs) / (this.opts.segmentSec * 1000))));
  }

  /** The live MPD at `nowMs`: the static one with dynamic timing and windowed timelines. */
  liveMpd(nowMs = Date.now()): string {
    const seg = this.opts.segmentSec;
    const end = this.available(nowMs);
    const first = Math.max(0, end - (this.opts.windowSegments ?? 10));
    const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    let i = 0;
    return this.opts.mpd
      .replace(/\btype="static"/, `type="dynamic"`)
      .replace(
        /\s*mediaPresentationDuration="[^"]*"/,
        ` availabilityStartTime="${new Date(this.epochMs).toISOString()}" publishTime="${iso(nowMs)}" minimumUpdatePeriod="PT${seg}S" timeShiftBufferDepth="PT${(this.opts.windowSegments ?? 10) * seg}S"${this.opts.suggestedDelaySec ? ` suggestedPresentationDelay="PT${this.opts.suggestedDelaySec}S"` : ''}`,
      )
      .replace(/<SegmentTimeline>[\s\S]*?<\/SegmentTimeline>/g, () => {
        const kept = this.timelines[i++]!.slice(first, end);
        return `<SegmentTimeline>${kept.map(([t, d], k) => (k === 0 ? `<S t="${t}" d="${d}"/>` : `<S d="${d}"/>`)).join('')}</SegmentTimeline>`;
      })
      .replace(/startNumber="1"/g, `startNumber="${first + 1}"`)
      .replace(
        /<\/MPD>/,
        this.opts.utcTiming
          ? `\t<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="${this.url}/time"/>\n</MPD>`
          : '</MPD>',
      );
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const { path, send } = this.cdnExchange(req, res, this.requests);
    if (this.opts.live && path === '/time') return send(200, 'text/plain', new Date().toISOString());
    if (path.endsWith('.mpd')) return send(200, DASH, this.opts.live ? this.liveMpd() : this.opts.mpd);
    const name = path.slice(path.lastIndexOf('/') + 1);
    const file = this.opts.files.get(name);
    if (!file) return send(404, 'text/plain', 'not found');
    const number = /-(\d+)\.m4s$/.exec(name);
    if (this.opts.live && number && !name.startsWith('init') && Number(number[1]) > this.available())
      return send(404, 'text/plain', 'not available yet');
    send(200, name.endsWith('.mpd') ? DASH : 'video/mp4', file);
  }
}
