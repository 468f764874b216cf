/**
 * HLS VOD stitching (docs/design.md §11), pure: the content's master and media playlists and each
 * ad's, all fetched by the caller, in; the stitched master and media playlists and the pods'
 * places on the stitched timeline out. Every variant, audio and subtitle playlist gets every pod
 * at the same boundary, taken from the video timeline (the first variant): the first segment
 * boundary at or after the pod's cue point; audio and subtitles splice at their boundary nearest
 * to that time (hls-splice issue 55: splicing audio and video apart drifts). An ad that cannot play
 * in every playlist (missing, unparseable or live playlist, no audio for demuxed content, a
 * different container) is left out of all of them, so discontinuity counts stay equal.
 */
import { mapUriAttribute, parseMedia, playlistLines, tagValue } from '../../hls/index.js';
import { StitchError } from '../errors.js';
import {
  absoluteUri,
  mediaPlaylistUris,
  parseMaster,
  type MasterPlaylist,
  type Rendition,
  type Variant,
} from './master.js';
import { matchAudio, matchSubtitles, matchVariant } from './match.js';
import { splicePlaylist, type AdPiece, type SourceMedia, type Splice } from './splice.js';

/** A master playlist and the media playlists it names, by absolute URL. */
export interface HlsSource {
  url: string;
  master: string;
  playlists: ReadonlyMap<string, string>;
}

export interface HlsPodInput {
  id: string;
  /** Cue point in content seconds (0 pre-roll, the content's duration or more: post-roll). */
  offsetSec: number;
  ads: Array<{ id: string; source: HlsSource }>;
}

export interface HlsStitchOptions {
  fillerUri: string;
  /** Segments per playlist; a larger content playlist is refused (422). */
  maxSegments?: number;
}

export interface StitchedAd {
  id: string;
  start: number;
  duration: number;
}

export interface StitchedPod {
  /** Ids of the pods merged here (two cue points before one boundary play as one pod). */
  ids: string[];
  /** Content seconds where the pod plays (the boundary, not the cue point). */
  contentOffset: number;
  /** Stitched-timeline seconds. */
  start: number;
  duration: number;
  ads: StitchedAd[];
}

export interface StitchedHls {
  master: string;
  /** Media playlists by file name (`v0.m3u8`, `a0.m3u8`, `s0.m3u8`), named by the master. */
  playlists: Map<string, string>;
  pods: StitchedPod[];
  contentDuration: number;
  /** Ads left out, with why. */
  skipped: Array<{ podId: string; adId: string; reason: string }>;
}

type Kind = 'variant' | 'audio' | 'subtitles';

/** One media playlist of the output: the content playlist it is made from and its file name. */
export interface Output {
  name: string;
  kind: Kind;
  content: SourceMedia;
  variant?: Variant;
  rendition?: Rendition;
}

const EPS = 1e-3;

export function readMedia(url: string, text: string | undefined, maxSegments: number): SourceMedia {
  if (text === undefined) throw new StitchError('unparseable', `media playlist missing: ${url}`);
  const lines = playlistLines(text);
  if (lines[0] !== '#EXTM3U') throw new StitchError('unparseable', `not an HLS playlist: ${url}`);
  const playlist = parseMedia(lines);
  if (!playlist.endList || (playlist.playlistType && playlist.playlistType !== 'VOD'))
    throw new StitchError('not-vod', `not a VOD playlist (no EXT-X-ENDLIST): ${url}`);
  if (!playlist.segments.length) throw new StitchError('unparseable', `a playlist without segments: ${url}`);
  if (playlist.segments.length > maxSegments)
    throw new StitchError('too-large', `more than ${maxSegments} segments: ${url}`);
  if (playlist.segments.some((s) => !(s.duration > 0) || !Number.isFinite(s.duration)))
    throw new StitchError('unparseable', `a segment without a valid EXTINF: ${url}`);
  const version = Number(tagValue(playlist.header.find((l) => l.startsWith('#EXT-X-VERSION:')) ?? '')) || 0;
  return { url, playlist, version };
}

export function durationOf(m: SourceMedia): number {
  let d = 0;
  for (const s of m.playlist.segments) d += s.duration;
  return d;
}

const hasMap = (m: SourceMedia) => m.playlist.segments.some((s) => s.map !== undefined);

/** Segment boundaries of a playlist in seconds: 0, the end of each segment (the last is its duration). */
export function boundaries(m: SourceMedia): number[] {
  const bounds = [0];
  for (const s of m.playlist.segments) bounds.push(bounds[bounds.length - 1]! + s.duration);
  return bounds;
}

/** Where a pod plays: the index of the first boundary at or after its cue point (the end for a post-roll). */
export function boundaryFor(bounds: number[], offsetSec: number): number {
  const end = bounds.length - 1;
  return offsetSec >= bounds[end]! - EPS ? end : bounds.findIndex((t) => t >= offsetSec - EPS);
}

/** The index of the boundary nearest to `t` in a playlist (0 … segments.length). */
function nearestBoundary(m: SourceMedia, t: number): number {
  let at = 0;
  let best = 0;
  let bestDist = Math.abs(t);
  const segs = m.playlist.segments;
  for (let i = 0; i < segs.length; i++) {
    at += segs[i]!.duration;
    const d = Math.abs(at - t);
    if (d < bestDist - EPS) {
      best = i + 1;
      bestDist = d;
    }
  }
  return best;
}

/** Output playlists of the content, named in the order the master names them. */
function outputsOf(master: MasterPlaylist, media: Map<string, SourceMedia>): Output[] {
  const names = new Map<string, Output>();
  const out: Output[] = [];
  const add = (uri: string, kind: Kind, prefix: string, extra: Partial<Output>) => {
    if (names.has(uri)) return;
    const o: Output = {
      name: `${prefix}${out.filter((x) => x.kind === kind).length}.m3u8`,
      kind,
      content: media.get(uri)!,
      ...extra,
    };
    names.set(uri, o);
    out.push(o);
  };
  for (const v of master.variants) add(v.uri, 'variant', 'v', { variant: v });
  for (const r of master.renditions) {
    if (!r.uri) continue;
    if (r.type === 'AUDIO') add(r.uri, 'audio', 'a', { rendition: r });
    else if (r.type === 'SUBTITLES') add(r.uri, 'subtitles', 's', { rendition: r });
    else if (r.type === 'VIDEO')
      add(r.uri, 'variant', 'v', { variant: { attrs: '', uri: r.uri, bandwidth: 0, codecs: [], width: 0, height: 0 } });
  }
  return out;
}

export class AdReader {
  private readonly masters = new Map<string, MasterPlaylist>();
  private readonly media = new Map<string, SourceMedia>();
  constructor(private readonly maxSegments: number) {}

  master(src: HlsSource): MasterPlaylist {
    let m = this.masters.get(src.url);
    if (!m) this.masters.set(src.url, (m = parseMaster(src.url, src.master)));
    return m;
  }

  playlist(src: HlsSource, uri: string): SourceMedia {
    let m = this.media.get(uri);
    if (!m)
      this.media.set(
        uri,
        (m = readMedia(
          uri,
          uri === src.url && !src.playlists.has(uri) ? src.master : src.playlists.get(uri),
          this.maxSegments,
        )),
      );
    return m;
  }
}

interface AdPlan {
  id: string;
  pieces: Map<Output, AdPiece>;
  /** BANDWIDTH of the ad variant matched to each content variant. */
  bandwidths: Map<Output, number>;
}

/** The ad's playlist for each content output; throws StitchError when the ad cannot play in all of them. */
function planAd(id: string, outputs: Output[], content: MasterPlaylist, src: HlsSource, reader: AdReader): AdPlan {
  const ad = reader.master(src);
  const plan: AdPlan = { id, pieces: new Map(), bandwidths: new Map() };
  const variantFor = new Map<Variant, Variant>();
  for (const o of outputs) {
    if (o.kind !== 'variant') continue;
    const v = matchVariant(o.variant!, ad.variants);
    variantFor.set(o.variant!, v);
    plan.pieces.set(o, { media: reader.playlist(src, v.uri) });
    plan.bandwidths.set(o, v.bandwidth);
  }
  for (const o of outputs) {
    if (o.kind === 'variant') continue;
    const r = o.rendition!;
    if (o.kind === 'subtitles') {
      const sub = matchSubtitles(r, ad);
      // The filler's length is the ad's video length, set when the pod is laid out.
      plan.pieces.set(o, sub ? { media: reader.playlist(src, sub.uri!) } : { fillerSec: 0 });
      continue;
    }
    const contentVariant = content.variants.find((v) => v.audio === r.groupId) ?? content.variants[0]!;
    const audio = matchAudio(r, variantFor.get(contentVariant) ?? ad.variants[0]!, ad);
    if (!audio) throw new StitchError('unsupported', 'the ad has no separate audio rendition for demuxed content');
    plan.pieces.set(o, { media: reader.playlist(src, audio.uri!) });
  }
  for (const [o, p] of plan.pieces) {
    if ('media' in p && hasMap(p.media) !== hasMap(o.content))
      throw new StitchError(
        'unsupported',
        `the ad's container (${hasMap(p.media) ? 'fMP4' : 'TS'}) differs from the content's`,
      );
  }
  return plan;
}

function replaceBandwidth(attrs: string, bandwidth: number): string {
  return /(^|,)BANDWIDTH=\d+/.test(attrs)
    ? attrs.replace(/(^|,)BANDWIDTH=\d+/, `$1BANDWIDTH=${bandwidth}`)
    : `BANDWIDTH=${bandwidth},${attrs}`;
}

export function writeMaster(master: MasterPlaylist, outputs: Output[], bandwidths: Map<Output, number>): string {
  const nameOf = new Map(outputs.map((o) => [o.content.url, o.name]));
  const lines = ['#EXTM3U'];
  if (master.version) lines.push(`#EXT-X-VERSION:${master.version}`);
  if (master.independentSegments) lines.push('#EXT-X-INDEPENDENT-SEGMENTS');
  for (const l of master.other) lines.push(mapUriAttribute(l, (u) => absoluteUri(u, master.url)));
  for (const r of master.renditions) lines.push(r.uri ? mapUriAttribute(r.line, () => nameOf.get(r.uri!)!) : r.line);
  for (const o of outputs) {
    if (o.kind !== 'variant' || !o.variant?.attrs) continue;
    for (const variant of master.variants.filter((x) => x.uri === o.content.url)) {
      lines.push(
        `#EXT-X-STREAM-INF:${replaceBandwidth(variant.attrs, Math.max(variant.bandwidth, bandwidths.get(o) ?? 0, 1))}`,
        o.name,
      );
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * The content's master and its output playlists, every media playlist read and checked (StitchError
 * when unusable), and the video playlist (the first variant) whose boundaries place the pods.
 */
export function readContent(
  content: HlsSource,
  maxSegments: number,
): { master: MasterPlaylist; outputs: Output[]; video: SourceMedia; bounds: number[]; contentDuration: number } {
  const master = parseMaster(content.url, content.master);
  const media = new Map<string, SourceMedia>();
  for (const uri of mediaPlaylistUris(master))
    media.set(
      uri,
      readMedia(
        uri,
        uri === content.url && !content.playlists.has(uri) ? content.master : content.playlists.get(uri),
        maxSegments,
      ),
    );
  const outputs = outputsOf(master, media);
  const video = outputs[0]!.content;
  const bounds = boundaries(video);
  return { master, outputs, video, bounds, contentDuration: bounds[bounds.length - 1]! };
}

/** Stitches ad pods into VOD content. Throws StitchError when the content cannot be used. */
export function stitchHls(content: HlsSource, pods: HlsPodInput[], opts: HlsStitchOptions): StitchedHls {
  const maxSegments = opts.maxSegments ?? 100_000;
  const { master, outputs, video, bounds, contentDuration } = readContent(content, maxSegments);
  // Where each video boundary lands in every playlist (the nearest boundary there).
  const landing = (o: Output, at: number) => (o.content === video ? at : nearestBoundary(o.content, bounds[at]!));

  // Pods to video boundaries, ads checked against every output. Pods that land on one boundary in
  // any playlist play as one pod: otherwise that playlist would lack the content between them,
  // and with it a discontinuity the others have.
  const reader = new AdReader(maxSegments);
  const skipped: StitchedHls['skipped'] = [];
  const laid: Array<{ at: number; ids: string[]; ads: AdPlan[] }> = [];
  for (const pod of [...pods].sort((a, b) => a.offsetSec - b.offsetSec)) {
    const at = boundaryFor(bounds, pod.offsetSec);
    const ads: AdPlan[] = [];
    for (const ad of pod.ads) {
      try {
        ads.push(planAd(ad.id, outputs, master, ad.source, reader));
      } catch (err) {
        if (!(err instanceof StitchError)) throw err;
        skipped.push({ podId: pod.id, adId: ad.id, reason: err.message });
      }
    }
    if (!ads.length) continue;
    const last = laid[laid.length - 1];
    if (last && outputs.some((o) => landing(o, last.at) === landing(o, at))) {
      last.ids.push(pod.id);
      last.ads.push(...ads);
    } else laid.push({ at, ids: [pod.id], ads });
  }

  // One target duration for every playlist: the largest rounded EXTINF anywhere (RFC 8216 §4.3.3.1).
  let target = 1;
  let version = 3;
  const consider = (m: SourceMedia) => {
    target = Math.max(target, m.playlist.targetDuration);
    version = Math.max(version, m.version);
    for (const s of m.playlist.segments) target = Math.max(target, Math.round(s.duration));
  };
  for (const o of outputs) consider(o.content);
  for (const e of laid) for (const ad of e.ads) for (const p of ad.pieces.values()) if ('media' in p) consider(p.media);

  // The stitched timeline, from the video playlist.
  const stitchedPods: StitchedPod[] = [];
  let shift = 0;
  for (const e of laid) {
    const start = bounds[e.at]! + shift;
    const ads: StitchedAd[] = [];
    let t = start;
    for (const ad of e.ads) {
      const piece = ad.pieces.get(outputs[0]!)!;
      const d = 'media' in piece ? durationOf(piece.media) : 0;
      ads.push({ id: ad.id, start: t, duration: d });
      t += d;
    }
    stitchedPods.push({ ids: e.ids, contentOffset: bounds[e.at]!, start, duration: t - start, ads });
    shift += t - start;
  }

  const playlists = new Map<string, string>();
  const bandwidths = new Map<Output, number>();
  for (const o of outputs) {
    const splices: Splice[] = laid.map((e, i) => {
      const pod = stitchedPods[i]!;
      const ads = e.ads.map((ad, j): AdPiece => {
        bandwidths.set(o, Math.max(bandwidths.get(o) ?? 0, ad.bandwidths.get(o) ?? 0));
        const p = ad.pieces.get(o)!;
        return 'fillerSec' in p ? { fillerSec: pod.ads[j]!.duration } : p;
      });
      return { at: landing(o, e.at), durationSec: pod.duration, ads };
    });
    playlists.set(
      o.name,
      splicePlaylist(o.content, splices, { targetDuration: target, version, fillerUri: opts.fillerUri }),
    );
  }
  return { master: writeMaster(master, outputs, bandwidths), playlists, pods: stitchedPods, contentDuration, skipped };
}
