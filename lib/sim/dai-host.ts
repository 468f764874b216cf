/**
 * A simulated DAI provider host for tests, the benchmark and the demo: live HLS playlists that
 * advance with the clock (lib/sim/live-playlist.ts), master playlists, a dynamic MPD, and switchable
 * failure modes (5xx, slow, garbage, 404). Playlists under a `/nopdt/` directory carry no
 * EXT-X-PROGRAM-DATE-TIME (a source whose breaks are placed by media sequence), with content paths
 * of their own (`/content/nopdt_<rendition>/…`) shared by the DAI and source forms. Under a
 * `/relative/` directory content segments are named relative to the playlist (`seg_N.ts`), under
 * `/renamed/` relative names the source never uses (`part_N.ts`) (issue 30.2). Bodies are rendered once per segment boundary and
 * rendition (shared by every stream, as a real event's are), then served from memory as bytes, so
 * the simulator is never the bottleneck of a benchmark.
 */
import { loadUws, type us_listen_socket } from '../http/uws.js';
import { livePlaylist, masterPlaylist, defaultShape, type LiveShape } from './live-playlist.js';

export type SimMode = 'ok' | 'error' | 'slow' | 'garbage' | 'notfound';

export interface DaiSimOptions {
  /** Shape of ordinary variants; paths containing /dvr/ get `dvrSegments` instead. */
  shape?: Partial<LiveShape>;
  dvrSegments?: number;
  port?: number;
}

export class DaiHostSim {
  mode: SimMode = 'ok';
  slowMs = 10_000;
  /** Upstream requests served, by path (without query). */
  readonly requests = new Map<string, number>();
  /** The same by `<user-agent> <path>`: which of a service's clients (proxy, break worker) asked. */
  readonly requestsByAgent = new Map<string, number>();
  requestCount = 0;
  /**
   * Fixed answers by path (VOD playlists, static MPDs), served as set, with a `Last-Modified` when
   * one is given; a test changes an entry to play an upstream update.
   */
  readonly fixed = new Map<string, { body: string; lastModified?: string }>();
  /** The X-Forwarded-For of the latest request ('' without one): whom the DAI host would geolocate. */
  lastForwardedFor = '';
  port = 0;
  url = '';
  private socket: us_listen_socket | undefined;
  private readonly shape: LiveShape;
  private readonly dvrShape: LiveShape;
  private readonly rendered = new Map<string, { slot: number; body: Buffer }>();
  private readonly uws = loadUws();

  constructor(private readonly opts: DaiSimOptions = {}) {
    this.shape = { ...defaultShape, ...opts.shape };
    this.dvrShape = { ...this.shape, windowSegments: opts.dvrSegments ?? 1200 };
  }

  async start(): Promise<this> {
    const app = this.uws.App();
    app.get('/*', (res, req) => {
      const path = req.getUrl();
      const query = req.getQuery() ?? '';
      this.requestCount++;
      this.requests.set(path, (this.requests.get(path) ?? 0) + 1);
      const byAgent = `${req.getHeader('user-agent')} ${path}`;
      this.requestsByAgent.set(byAgent, (this.requestsByAgent.get(byAgent) ?? 0) + 1);
      this.lastForwardedFor = req.getHeader('x-forwarded-for');
      const reply = (status: string, type: string, body: string | Buffer) => {
        if (!aborted) res.cork(() => res.writeStatus(status).writeHeader('Content-Type', type).end(body));
      };
      let aborted = false;
      res.onAborted(() => (aborted = true));
      if (this.mode === 'notfound') return reply('404 Not Found', 'text/plain', 'no such stream');
      if (this.mode === 'error') return reply('503 Service Unavailable', 'text/plain', 'upstream broken');
      if (this.mode === 'garbage') return reply('200 OK', 'text/html', '<html><body>Gateway says hello</body></html>');
      const fixed = this.fixed.get(path);
      if (fixed) {
        const type = path.endsWith('.mpd') ? 'application/dash+xml' : 'application/vnd.apple.mpegurl';
        res.cork(() => {
          res.writeStatus('200 OK').writeHeader('Content-Type', type);
          if (fixed.lastModified) res.writeHeader('Last-Modified', fixed.lastModified);
          res.end(fixed.body);
        });
        return;
      }
      const body = this.payload(path, query);
      if (body === undefined) return reply('404 Not Found', 'text/plain', 'not found');
      const type = path.endsWith('.mpd') ? 'application/dash+xml' : 'application/vnd.apple.mpegurl';
      if (this.mode === 'slow') setTimeout(() => reply('200 OK', type, body), this.slowMs);
      else reply('200 OK', type, body);
    });
    await new Promise<void>((resolve, reject) =>
      app.listen('127.0.0.1', this.opts.port ?? 0, (s) => {
        if (!s) return reject(new Error('the DAI simulator could not listen'));
        this.socket = s;
        this.port = this.uws.us_socket_local_port(s);
        this.url = `http://127.0.0.1:${this.port}`;
        resolve();
      }),
    );
    return this;
  }

  stop(): void {
    if (this.socket) this.uws.us_listen_socket_close(this.socket);
    this.socket = undefined;
  }

  /** The body for a path at this moment; undefined for unknown paths. */
  body(path: string, query = ''): string | undefined {
    const b = this.payload(path, query);
    return typeof b === 'string' || b === undefined ? b : b.toString('utf8');
  }

  /** What the server sends: media playlists as their cached bytes, the rest as text. */
  private payload(path: string, query: string): string | Buffer | undefined {
    if (path.endsWith('.mpd')) return this.mpd(path);
    if (!path.endsWith('.m3u8')) return undefined;
    const dir = path.slice(0, path.lastIndexOf('/'));
    if (path.endsWith('/master.m3u8')) return masterPlaylist(this.url, dir, query);
    // Paths under /source/ are the content origin's own playlists (a break worker's source_uri): no DAI pods.
    const source = path.startsWith('/source/');
    const noPdt = path.includes('/nopdt/');
    const base = source ? { ...this.shape, adEvery: 0 } : path.includes('/dvr/') ? this.dvrShape : this.shape;
    const naming = path.includes('/relative/') ? 'relative' : path.includes('/renamed/') ? 'renamed' : 'root';
    const slot = Math.floor((Date.now() - base.epochMs) / (base.segmentSec * 1000));
    // Content segments belong to the rendition, not to the viewer: every stream of an event and the
    // source playlist carry the same content paths, as a DAI provider's streams of one event do. So
    // one rendering per rendition and kind serves every stream until the next segment boundary.
    const rendition = path.slice(path.lastIndexOf('/') + 1, -'.m3u8'.length);
    const name = (noPdt ? 'nopdt_' : '') + rendition.replace(/[^A-Za-z0-9_-]/g, '_');
    const key = `${source ? 'source' : base === this.dvrShape ? 'dvr' : 'live'}|${naming}|${name}`;
    const cached = this.rendered.get(key);
    if (cached && cached.slot === slot) return cached.body;
    const text = livePlaylist(name, Date.now(), {
      ...base,
      ...(noPdt ? { pdt: false } : {}),
      contentNaming: naming,
      adHost: this.url,
    });
    if (this.rendered.size > 1_000) this.rendered.clear();
    const body = Buffer.from(text); // sent as bytes: no encoding per response
    this.rendered.set(key, { slot, body });
    return body;
  }

  private mpd(path: string): string {
    if (path.includes('/timeline/')) return this.timelineMpd(path);
    return `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" profiles="urn:mpeg:dash:profile:isoff-live:2011" minimumUpdatePeriod="PT2S" availabilityStartTime="2026-01-01T00:00:00Z" minBufferTime="PT4S">
  <Location>${this.url}${path}</Location>
  <Period id="p0" start="PT0S">
    <AdaptationSet mimeType="video/mp4" segmentAlignment="true">
      <SegmentTemplate timescale="90000" duration="540000" initialization="init_$RepresentationID$.mp4" media="seg_$RepresentationID$_$Number$.m4s" startNumber="0"/>
      <Representation id="v720" bandwidth="2500000" width="1280" height="720" codecs="avc1.64001f"/>
    </AdaptationSet>
  </Period>
</MPD>
`;
  }

  /** A dynamic MPD whose SegmentTimeline holds the last 30 six-second segments up to now. */
  private timelineMpd(path: string): string {
    const ast = Date.UTC(2026, 0, 1);
    const seg = 540_000; // 6 s at 90 kHz
    const edge = Math.floor(((Date.now() - ast) * 90) / seg) * seg;
    return `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" profiles="urn:mpeg:dash:profile:isoff-live:2011" minimumUpdatePeriod="PT2S" availabilityStartTime="2026-01-01T00:00:00Z" timeShiftBufferDepth="PT180S" minBufferTime="PT4S">
  <Location>${this.url}${path}</Location>
  <Period id="p0" start="PT0S">
    <AdaptationSet mimeType="video/mp4" segmentAlignment="true">
      <SegmentTemplate timescale="90000" initialization="init_$RepresentationID$.mp4" media="seg_$RepresentationID$_$Time$.m4s">
        <SegmentTimeline><S t="${edge - 30 * seg}" d="${seg}" r="29"/></SegmentTimeline>
      </SegmentTemplate>
      <Representation id="v720" bandwidth="2500000" width="1280" height="720" codecs="avc1.64001f"/>
    </AdaptationSet>
  </Period>
</MPD>
`;
  }
}
