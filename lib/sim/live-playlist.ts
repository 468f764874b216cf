/**
 * Live HLS playlists shaped like a DAI provider's (Google DAI pod serving as seen in the shared
 * fixtures): program date-time on every segment (unless `pdt: false`), root-relative content segments, absolute ad
 * segments on the DAI host inside cue-out/cue-in with discontinuities, a window that advances with
 * the clock. Deterministic for a given time, so tests can compute what they expect.
 */
export interface LiveShape {
  /** Segments in the window (the DVR depth). */
  windowSegments: number;
  segmentSec: number;
  /** An ad pod of `adSegments` starts every `adEvery` segments (0 = no ads). */
  adEvery: number;
  adSegments: number;
  /** Absolute base of ad segment URIs (the DAI host). */
  adHost: string;
  /** Epoch of media sequence 0, ms. */
  epochMs: number;
  /** false: no EXT-X-PROGRAM-DATE-TIME (sources whose breaks are placed by media sequence). */
  pdt?: boolean;
  /**
   * How content segments are named: `root` (default) `/content/<key>/seg_N.ts`; `relative`
   * `seg_N.ts`, relative to the playlist (a DAI host serving them next to its variant, issue 30.2);
   * `renamed` `part_N.ts`, relative, a name the source never uses.
   */
  contentNaming?: 'root' | 'relative' | 'renamed';
}

export const defaultShape: LiveShape = {
  windowSegments: 30,
  segmentSec: 6,
  adEvery: 20,
  adSegments: 3,
  adHost: 'https://dai.example.com',
  epochMs: Date.UTC(2026, 0, 1),
};

function isAd(seq: number, s: LiveShape): boolean {
  return s.adEvery > 0 && seq % s.adEvery >= s.adEvery - s.adSegments;
}

/** The media playlist of `streamKey` at time `nowMs`. */
export function livePlaylist(streamKey: string, nowMs: number, shape: LiveShape = defaultShape): string {
  const live = Math.floor((nowMs - shape.epochMs) / (shape.segmentSec * 1000));
  const first = Math.max(0, live - shape.windowSegments + 1);
  const out = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${Math.ceil(shape.segmentSec)}`,
    `#EXT-X-MEDIA-SEQUENCE:${first}`,
  ];
  // Discontinuities before the window: one where each earlier pod starts and one where it ends.
  const E = shape.adEvery;
  const below = (offset: number) => (E > 0 && first > offset ? Math.ceil((first - offset) / E) : 0);
  out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${below(E - shape.adSegments) + below(E)}`);
  for (let seq = first; seq <= live; seq++) {
    const ad = isAd(seq, shape);
    const podStart = ad && seq % E === E - shape.adSegments;
    const podEnd = !ad && seq > 0 && isAd(seq - 1, shape);
    const podSec = shape.adSegments * shape.segmentSec;
    if (podStart) out.push(`#EXT-X-CUE-OUT:${podSec}`, '#EXT-X-DISCONTINUITY');
    else if (ad)
      out.push(
        `#EXT-X-CUE-OUT-CONT:ElapsedTime=${((seq % E) - (E - shape.adSegments)) * shape.segmentSec},Duration=${podSec}`,
      );
    if (podEnd) out.push('#EXT-X-CUE-IN', '#EXT-X-DISCONTINUITY');
    if (shape.pdt !== false)
      out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(shape.epochMs + seq * shape.segmentSec * 1000).toISOString()}`);
    out.push(`#EXTINF:${shape.segmentSec.toFixed(3)},`);
    out.push(
      ad
        ? `${shape.adHost}/linear/pod/ad_${seq % shape.adEvery}_${seq}.ts`
        : shape.contentNaming === 'relative'
          ? `seg_${seq}.ts`
          : shape.contentNaming === 'renamed'
            ? `part_${seq}.ts`
            : `/content/${streamKey}/seg_${seq}.ts`,
    );
  }
  return out.join('\n') + '\n';
}

/** A master playlist whose variants live on the DAI host, as the provider serves it. */
export function masterPlaylist(daiHost: string, pathPrefix: string, query = ''): string {
  const q = query ? `?${query}` : '';
  return [
    '#EXTM3U',
    '#EXT-X-VERSION:4',
    '#EXT-X-INDEPENDENT-SEGMENTS',
    `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",URI="${daiHost}${pathPrefix}/audio/en.m3u8${q}"`,
    '#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aac"',
    `${daiHost}${pathPrefix}/variant/720p.m3u8${q}`,
    '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aac"',
    `${daiHost}${pathPrefix}/variant/360p.m3u8${q}`,
    `#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=200000,URI="${daiHost}${pathPrefix}/iframe/720p.m3u8${q}"`,
    '',
  ].join('\n');
}
