/**
 * A simulated DAI host whose ad pods carry timed metadata, for ID3 inspection tests and demos
 * (issue 13). VOD manifests with fixed times, so a test knows every expected value:
 *
 * - `…/master.m3u8`: variants `variant/720p.m3u8` (2.5 Mb/s) and `variant/360p.m3u8` (0.8 Mb/s),
 *   an audio rendition (absolute URI) and a subtitles rendition.
 * - each media playlist, 6 s segments, PDT from 2026-01-01T00:00:00Z: 2 content segments; pod 0
 *   (`EXT-X-CUE-OUT:12` … `EXT-X-CUE-IN`) of 2 ad segments on this host; 1 content segment; pod 1
 *   (`EXT-X-DATERANGE` SCTE35-OUT … SCTE35-IN) of 1 ad segment that answers 404; 1 content segment.
 *   Video ad segments are `ts` bytes, audio ones `aac`, subtitles WebVTT text.
 * - `…/manifest.mpd`: content Period, ad Period `dai_pod-0001-ad-1` (12 s – 20 s) with an
 *   `urn:google:dai:2018` EventStream and two fMP4 segments (SegmentTimeline) of `mp4` bytes,
 *   content Period.
 * - `/ad_break_id/{id}.m3u8`: a pod manifest of 2 `ts` segments (`/ad_break_id/{id}/ad_N.ts`), no cue tags.
 * The segment bytes are given by the caller (tests pass fixture files), so lib code reads no test
 * data. `hold()` keeps segment answers waiting until `release()`.
 */
import type http from 'node:http';
import { HttpSim } from './http-sim.js';

export interface PodHostOptions {
  /** MPEG-TS bytes with ID3 timed metadata (video ad segments, pod manifests). */
  ts: Buffer;
  /** Packed AAC with an ID3 tag (audio ad segments). */
  aac: Buffer;
  /** An fMP4 segment with an ID3 emsg (DASH ad segments). */
  mp4: Buffer;
  port?: number;
}

const EPOCH = Date.UTC(2026, 0, 1);
const SEG_SEC = 6;

function pdt(index: number): string {
  return `#EXT-X-PROGRAM-DATE-TIME:${new Date(EPOCH + index * SEG_SEC * 1000).toISOString()}`;
}

export class PodHostSim extends HttpSim {
  /** Segment requests served, by path. */
  readonly segmentRequests = new Map<string, number>();
  private held: Array<() => void> | undefined;

  constructor(private readonly opts: PodHostOptions) {
    super(opts.port ?? 0);
  }

  /** Segment answers wait from now until release(). */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const go of waiting) go();
  }

  get segmentCount(): number {
    let n = 0;
    for (const v of this.segmentRequests.values()) n += v;
    return n;
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0]!;
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const dir = path.slice(0, path.lastIndexOf('/'));
    if (path.endsWith('/master.m3u8')) return send(200, 'application/vnd.apple.mpegurl', this.master(dir));
    if (path.endsWith('.mpd')) return send(200, 'application/dash+xml', this.mpd());
    if (path.startsWith('/ad_break_id/') && path.endsWith('.m3u8'))
      return send(
        200,
        'application/vnd.apple.mpegurl',
        this.podManifest(path.slice('/ad_break_id/'.length, -'.m3u8'.length)),
      );
    if (path.endsWith('.m3u8')) {
      const kind = path.includes('/audio/') ? 'aac' : path.includes('/subs/') ? 'vtt' : 'ts';
      return send(
        200,
        'application/vnd.apple.mpegurl',
        this.media(path.slice(path.lastIndexOf('/') + 1, -'.m3u8'.length), kind),
      );
    }
    const body = path.includes('missing')
      ? undefined
      : path.endsWith('.ts')
        ? this.opts.ts
        : path.endsWith('.aac')
          ? this.opts.aac
          : path.endsWith('.m4s')
            ? this.opts.mp4
            : path.endsWith('.vtt')
              ? 'WEBVTT\n\n00:00.000 --> 00:06.000\nad\n'
              : undefined;
    this.segmentRequests.set(path, (this.segmentRequests.get(path) ?? 0) + 1);
    const answer = () =>
      body === undefined ? send(404, 'text/plain', 'not found') : send(200, 'application/octet-stream', body);
    if (this.held) this.held.push(answer);
    else answer();
  }

  private master(dir: string): string {
    return [
      '#EXTM3U',
      '#EXT-X-VERSION:4',
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",URI="${this.url}${dir}/audio/en.m3u8"`,
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE="en",URI="subs/en.m3u8"',
      '#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"',
      '#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aac",SUBTITLES="subs"',
      'variant/720p.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aac",SUBTITLES="subs"',
      'variant/360p.m3u8',
      '',
    ].join('\n');
  }

  /** Segments 0–1 content, 2–3 pod 0, 4 content, 5 pod 1 (its segment answers 404), 6 content. */
  private media(name: string, ext: 'ts' | 'aac' | 'vtt'): string {
    const out = [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      `#EXT-X-TARGETDURATION:${SEG_SEC}`,
      '#EXT-X-MEDIA-SEQUENCE:100',
      '#EXT-X-PLAYLIST-TYPE:VOD',
    ];
    const seg = (i: number, uri: string) => out.push(pdt(i), `#EXTINF:${SEG_SEC}.000,`, uri);
    seg(0, `/content/${name}/seg_0.${ext}`);
    seg(1, `/content/${name}/seg_1.${ext}`);
    out.push('#EXT-X-CUE-OUT:12', '#EXT-X-DISCONTINUITY');
    seg(2, `${this.url}/ads/pod0/${name}/ad_0.${ext}`);
    out.push('#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=12');
    seg(3, `${this.url}/ads/pod0/${name}/ad_1.${ext}`);
    out.push('#EXT-X-CUE-IN', '#EXT-X-DISCONTINUITY');
    seg(4, `/content/${name}/seg_4.${ext}`);
    out.push(
      `#EXT-X-DATERANGE:ID="pod1",START-DATE="${new Date(EPOCH + 5 * SEG_SEC * 1000).toISOString()}",PLANNED-DURATION=6,SCTE35-OUT=0xFC00`,
      '#EXT-X-DISCONTINUITY',
    );
    seg(5, `${this.url}/ads/pod1/${name}/ad_missing.${ext}`);
    out.push(
      `#EXT-X-DATERANGE:ID="pod1",START-DATE="${new Date(EPOCH + 6 * SEG_SEC * 1000).toISOString()}",SCTE35-IN=0xFC00`,
      '#EXT-X-DISCONTINUITY',
    );
    seg(6, `/content/${name}/seg_6.${ext}`);
    out.push('#EXT-X-ENDLIST', '');
    return out.join('\n');
  }

  /** Segments under the pod's own path (`/ad_break_id/{id}/ad_0.ts`), so a test can count one pod's fetches. */
  private podManifest(id: string): string {
    return [
      '#EXTM3U',
      '#EXT-X-VERSION:3',
      `#EXT-X-TARGETDURATION:${SEG_SEC}`,
      '#EXT-X-PLAYLIST-TYPE:VOD',
      '#EXTINF:6.000,',
      `${id}/ad_0.ts`,
      '#EXTINF:6.000,',
      `${id}/ad_1.ts`,
      '#EXT-X-ENDLIST',
      '',
    ].join('\n');
  }

  private mpd(): string {
    return `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" profiles="urn:mpeg:dash:profile:isoff-live:2011" mediaPresentationDuration="PT32S" minBufferTime="PT4S">
  <Period id="content-0" start="PT0S" duration="PT12S">
    <AdaptationSet mimeType="video/mp4">
      <SegmentTemplate timescale="90000" duration="540000" media="/content/dash/$RepresentationID$/seg_$Number$.m4s" startNumber="0"/>
      <Representation id="v720" bandwidth="2500000" codecs="avc1.64001f"/>
    </AdaptationSet>
  </Period>
  <Period id="dai_pod-0001-ad-1" start="PT12S" duration="PT8S">
    <BaseURL>${this.url}/ads/pod0/dash/</BaseURL>
    <EventStream schemeIdUri="urn:google:dai:2018" timescale="1000">
      <Event presentationTime="0" duration="8000" id="1" messageData="google_ad_0001"/>
      <Event presentationTime="5000" id="2" messageData="google_ad_0001_midpoint"/>
    </EventStream>
    <AdaptationSet mimeType="video/mp4">
      <SegmentTemplate timescale="90000" media="$RepresentationID$/seg_$Number%03d$.m4s" startNumber="1">
        <SegmentTimeline><S t="0" d="360000" r="1"/></SegmentTimeline>
      </SegmentTemplate>
      <Representation id="ad720" bandwidth="2500000" codecs="avc1.64001f"/>
    </AdaptationSet>
  </Period>
  <Period id="content-1" start="PT20S" duration="PT12S">
    <AdaptationSet mimeType="video/mp4">
      <SegmentTemplate timescale="90000" duration="540000" media="/content/dash/$RepresentationID$/seg_$Number$.m4s" startNumber="2"/>
      <Representation id="v720" bandwidth="2500000" codecs="avc1.64001f"/>
    </AdaptationSet>
  </Period>
</MPD>
`;
  }
}
