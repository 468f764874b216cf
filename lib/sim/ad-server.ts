/**
 * A simulated ad decision server for tests and the demo. `GET /ad…` answers a VMAP 1.0 document
 * with one linear pre-roll break holding an inline VAST 4.0 pod; `/vast/wrapper` and
 * `/vast/inline` serve the wrapper chain; `/track` records tracking hits; `/creatives/<id>.mp4`
 * serves a few bytes, or the real file given for that ad (the demo's ffmpeg-made ads). Switchable failure modes like the DAI simulator (lib/sim/dai-host.ts).
 *
 * The stream id of an ad request is read from `s`, `stream_id` or `sid` and carried into every
 * tracking URL (`s=none` without one), so a test can tell whose beacon reached the server.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

export type AdServerMode = 'ok' | 'error' | 'slow' | 'garbage' | 'empty' | 'wrapper';

export interface SimAd {
  id: string;
  durationSec: number;
  /** Streaming media files (server-side stitching): an HLS master and a DASH MPD URL. */
  hls?: string;
  dash?: string;
  /** The progressive MP4 media file's URL (default: the sim's own `/creatives/<id>.mp4`, a few bytes, not playable). */
  mp4?: string;
}

export interface AdServerSimOptions {
  port?: number;
  mode?: AdServerMode;
  slowMs?: number;
  ads?: SimAd[];
  /** VMAP break timeOffsets, each break carrying the whole pod; default one pre-roll (`start`). */
  breaks?: string[];
  /** Real MP4 files by ad id (URL-safe ids), answered at `/creatives/<id>.mp4` (others get a stub). */
  creatives?: Map<string, Buffer>;
}

export interface AdRequest {
  path: string;
  query: URLSearchParams;
  at: number;
}

export interface TrackingHit {
  ad: string;
  ev: string;
  s: string;
  query: URLSearchParams;
}

const TRACKED = ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const;
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** An ISO BMFF `ftyp` box: enough for a content-type sniff, not a playable file. */
const MP4 = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');

const xmlAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** CDATA cannot hold `]]>`; every URL here is built with encodeURIComponent, which escapes `]`. */
const cdata = (s: string) => `<![CDATA[${s.replace(/]]>/g, ']]]]><![CDATA[>')}]]>`;

function vastDuration(sec: number): string {
  const ms = Math.round(sec * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)}.${p(ms % 1000, 3)}`;
}

export class AdServerSim extends HttpSim {
  mode: AdServerMode;
  slowMs: number;
  ads: SimAd[];
  breaks: string[];
  readonly creatives: Map<string, Buffer>;
  /** Status for /track answers (e.g. 404 to test that 4xx is not retried). */
  trackStatus = 200;
  /** The next N /track hits answer 500 (to test retries); counts down. */
  failTracks = 0;
  readonly requests: AdRequest[] = [];
  readonly hits: TrackingHit[] = [];

  constructor(opts: AdServerSimOptions = {}) {
    super(opts.port);
    this.mode = opts.mode ?? 'ok';
    this.slowMs = opts.slowMs ?? 10_000;
    this.breaks = opts.breaks ?? ['start'];
    this.creatives = opts.creatives ?? new Map();
    this.ads = opts.ads ?? [
      { id: 'ad-1', durationSec: 15 },
      { id: 'ad-2', durationSec: 10 },
    ];
  }

  /**
   * Tracking hits per (ad, event, stream), keyed `ad|event|stream`: what an exactly-once check
   * compares with the beacons it expects (the scale bench, across restarts and kills).
   */
  beaconCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const h of this.hits) {
      const key = `${h.ad}|${h.ev}|${h.s}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  }

  /** The events the sim's documents track for each ad (impression and the five linear events). */
  static readonly TRACKED_EVENTS: readonly string[] = ['impression', ...TRACKED];

  hitCount(ev: string, ad?: string): number {
    return this.hits.filter((h) => h.ev === ev && (ad === undefined || h.ad === ad)).length;
  }

  /** The media file URL the sim puts in its documents for one ad. */
  creativeUrl(ad: string): string {
    return `${this.url}/creatives/${encodeURIComponent(ad)}.mp4`;
  }

  /** The tracking URL the sim puts in its documents for one ad and event. */
  trackUrl(ad: string, ev: string, stream: string): string {
    return `${this.url}/track?ad=${encodeURIComponent(ad)}&ev=${encodeURIComponent(ev)}&s=${encodeURIComponent(stream)}`;
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    // FreeWheel-style requests separate global, slot and key-value sections with ';'.
    const u = new URL((req.url ?? '/').replace(/;/g, '&'), 'http://sim');
    const path = u.pathname;
    const send = (status: number, type: string, body: string | Buffer) => {
      if (!res.headersSent && !res.destroyed)
        res
          .writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : body);
    };
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed');
    if (path === '/track') {
      const hit: TrackingHit = {
        ad: u.searchParams.get('ad') ?? '',
        ev: u.searchParams.get('ev') ?? '',
        s: u.searchParams.get('s') ?? '',
        query: u.searchParams,
      };
      this.hits.push(hit);
      if (this.failTracks > 0) {
        this.failTracks--;
        return send(500, 'text/plain', 'tracker broken');
      }
      return send(this.trackStatus, 'image/gif', this.trackStatus === 200 ? GIF : '');
    }
    const creative = /^\/creatives\/([^/]+)\.mp4$/.exec(path);
    if (creative) return send(200, 'video/mp4', this.creatives.get(creative[1]!) ?? MP4);
    const isAd = path === '/ad' || path.startsWith('/ad/');
    const isVast = path === '/vast/wrapper' || path === '/vast/inline';
    if (!isAd && !isVast) return send(404, 'text/plain', 'not found');
    this.requests.push({ path, query: u.searchParams, at: Date.now() });
    const stream = u.searchParams.get('s') || u.searchParams.get('stream_id') || u.searchParams.get('sid') || 'none';
    if (this.mode === 'error') return send(500, 'text/plain', 'ad server broken');
    if (this.mode === 'garbage')
      return send(200, 'text/html', '<html><body>Gateway says hello & goodbye</body></html>');
    let body: string;
    if (path === '/vast/wrapper') body = this.wrapperVast(stream);
    else if (path === '/vast/inline')
      body =
        this.mode === 'empty'
          ? '<?xml version="1.0" encoding="UTF-8"?>\n<VAST version="4.0" xmlns="http://www.iab.com/VAST"/>\n'
          : this.inlineVast(stream);
    else body = this.vmap(stream);
    this.later(res, this.mode === 'slow' ? this.slowMs : 0, () => send(200, 'application/xml', body));
  }

  /** VMAP 1.0 with one linear pre-roll: the inline pod, a wrapper reference, or no break at all. */
  vmap(stream: string): string {
    const head =
      '<?xml version="1.0" encoding="UTF-8"?>\n<vmap:VMAP xmlns:vmap="http://www.iab.net/videosuite/vmap" version="1.0"';
    if (this.mode === 'empty') return `${head}/>\n`;
    const source =
      this.mode === 'wrapper'
        ? `<vmap:AdTagURI templateType="vast3">${cdata(`${this.url}/vast/wrapper?s=${encodeURIComponent(stream)}`)}</vmap:AdTagURI>`
        : `<vmap:VASTAdData>\n${this.vastBody(stream)}\n      </vmap:VASTAdData>`;
    const breakId = (offset: string, i: number) =>
      offset === 'start' ? 'preroll' : offset === 'end' ? 'postroll' : `midroll-${i}`;
    const breaks = this.breaks.map(
      (
        offset,
        i,
      ) => `  <vmap:AdBreak timeOffset="${xmlAttr(offset)}" breakType="linear" breakId="${breakId(offset, i)}">
    <vmap:AdSource id="pod-${i + 1}" allowMultipleAds="true" followRedirects="true">
      ${source}
    </vmap:AdSource>
  </vmap:AdBreak>`,
    );
    return `${head}>\n${breaks.join('\n')}\n</vmap:VMAP>\n`;
  }

  inlineVast(stream: string): string {
    return `<?xml version="1.0" encoding="UTF-8"?>\n${this.vastBody(stream)}\n`;
  }

  /** A VAST 4.0 Wrapper whose own impression and tracking must be merged into the inline ads. */
  wrapperVast(stream: string): string {
    const s = encodeURIComponent(stream);
    return `<?xml version="1.0" encoding="UTF-8"?>
<VAST version="4.0" xmlns="http://www.iab.com/VAST">
  <Ad id="wrapper-1">
    <Wrapper followAdditionalWrappers="true" allowMultipleAds="true">
      <AdSystem version="1.0">AdServerSim</AdSystem>
      <Impression id="wrapper-imp">${cdata(this.trackUrl('wrapper-1', 'impression', stream))}</Impression>
      <VASTAdTagURI>${cdata(`${this.url}/vast/inline?s=${s}`)}</VASTAdTagURI>
      <Creatives>
        <Creative id="wrapper-cr">
          <Linear>
            <TrackingEvents>
${TRACKED.map((ev) => `              <Tracking event="${ev}">${cdata(this.trackUrl('wrapper-1', ev, stream))}</Tracking>`).join('\n')}
            </TrackingEvents>
          </Linear>
        </Creative>
      </Creatives>
    </Wrapper>
  </Ad>
</VAST>
`;
  }

  private vastBody(stream: string): string {
    const ads = this.ads.map((ad, i) => {
      const id = xmlAttr(ad.id);
      return `<Ad id="${id}" sequence="${i + 1}">
    <InLine>
      <AdSystem version="1.0">AdServerSim</AdSystem>
      <AdTitle>Simulated ad ${id}</AdTitle>
      <Impression id="imp-${id}">${cdata(this.trackUrl(ad.id, 'impression', stream))}</Impression>
      <Creatives>
        <Creative id="cr-${id}" sequence="1" adId="${id}">
          <Linear>
            <Duration>${vastDuration(ad.durationSec)}</Duration>
            <TrackingEvents>
${TRACKED.map((ev) => `              <Tracking event="${ev}">${cdata(this.trackUrl(ad.id, ev, stream))}</Tracking>`).join('\n')}
            </TrackingEvents>
            <VideoClicks>
              <ClickThrough id="click-${id}">${cdata(`https://advertiser.example.com/${encodeURIComponent(ad.id)}`)}</ClickThrough>
            </VideoClicks>
            <MediaFiles>
              <MediaFile id="mf-${id}" delivery="progressive" type="video/mp4" width="1280" height="720" bitrate="2000">${cdata(ad.mp4 ?? this.creativeUrl(ad.id))}</MediaFile>${ad.hls ? `\n              <MediaFile id="hls-${id}" delivery="streaming" type="application/x-mpegURL" width="1280" height="720">${cdata(ad.hls)}</MediaFile>` : ''}${ad.dash ? `\n              <MediaFile id="dash-${id}" delivery="streaming" type="application/dash+xml" width="1280" height="720">${cdata(ad.dash)}</MediaFile>` : ''}
            </MediaFiles>
          </Linear>
        </Creative>
      </Creatives>
    </InLine>
  </Ad>`;
    });
    return `<VAST version="4.0" xmlns="http://www.iab.com/VAST">\n  ${ads.join('\n  ')}\n</VAST>`;
  }
}
