/**
 * One stitched media playlist: content segments with ad pods spliced in at segment boundaries
 * (RFC 8216; docs/design.md §11). Lines are copied, never re-serialized, except where a splice
 * changes their meaning:
 * - `EXT-X-DISCONTINUITY` before each ad and before the content that follows a pod (§4.3.2.3);
 * - `EXT-X-MAP` applies until the next one (§4.3.2.5): the content's is written again after an ad;
 * - `EXT-X-KEY` applies until the next one (§4.3.2.4): `METHOD=NONE` before a clear ad, the
 *   content's key again after it; a key without IV takes the Media Sequence Number as IV (§5.2),
 *   which splicing changes, so such a key is written with the original number as explicit IV;
 * - `EXT-X-BYTERANGE` without `@offset` continues the previous segment of the same resource
 *   (§4.3.2.2): the first segment after a splice gets its offset written out;
 * - `#EXT-X-CUE-OUT:DURATION=` / `#EXT-X-CUE-IN` around each pod; the sources' own cue tags
 *   (CUE-OUT/-CONT/-IN, EXT-OATCLS-SCTE35, DATERANGEs with SCTE35-*) are dropped so a player sees
 *   only the stitched breaks.
 * Ad segment URIs that are absolute are copied byte for byte; relative ones are resolved.
 */
import { attribute, tagName, tagValue } from '../../hls/lines.js';
import { HEADER_TAGS, type MediaPlaylist, type Segment } from '../../hls/media.js';
import { uriResolver } from './master.js';

/** A parsed source media playlist and where it came from (relative URIs resolve against it). */
export interface SourceMedia {
  url: string;
  playlist: MediaPlaylist;
  /** EXT-X-VERSION of the source, 0 when absent. */
  version: number;
}

/** What plays in a pod's place for one ad in one playlist: the ad's matched playlist, or empty subtitle cues. */
export type AdPiece = { media: SourceMedia } | { fillerSec: number };

export interface Splice {
  /** Content segment index the pod goes before (the content's length for a post-roll). */
  at: number;
  /** The pod's duration on the video timeline, for `#EXT-X-CUE-OUT:DURATION=`. */
  durationSec: number;
  ads: AdPiece[];
}

export interface SpliceOptions {
  targetDuration: number;
  version: number;
  /** An empty WebVTT document, played for ads without subtitles. */
  fillerUri: string;
}

const DROPPED = new Set([
  '#EXT-X-CUE-OUT',
  '#EXT-X-CUE-OUT-CONT',
  '#EXT-X-CUE-IN',
  '#EXT-OATCLS-SCTE35',
  '#EXT-X-ENDLIST',
  '#EXT-X-KEY',
  '#EXT-X-MAP',
]);
const IV_METHODS = new Set(['AES-128', 'SAMPLE-AES']);

/** Per source: the MAP and KEY in force after the segments read so far, and where its last byte range ended. */
class SourceState {
  keys: string[] = [];
  map: string | undefined;
  byteEnd = 0;
  readonly resolve: (uri: string) => string;

  constructor(readonly src: SourceMedia) {
    this.resolve = uriResolver(src.url);
  }

  uriAttr(line: string): string {
    const at = line.indexOf('URI="');
    if (at === -1) return line;
    const end = line.indexOf('"', at + 5);
    if (end === -1) return line;
    const uri = line.slice(at + 5, end);
    const abs = this.resolve(uri);
    return abs === uri ? line : line.slice(0, at + 5) + abs + line.slice(end);
  }
}

function hex32(n: number): string {
  return '0x' + n.toString(16).padStart(32, '0');
}

class Writer {
  readonly out: string[] = [];
  private keyText = '';
  private map: string | undefined;
  seq: number;

  constructor(
    header: string[],
    startSeq: number,
    private readonly opts: SpliceOptions,
  ) {
    this.out.push(...header);
    this.seq = startSeq;
  }

  /**
   * Writes one source segment. `prefix`: the splice's own tags (discontinuity, cue); `runStart`:
   * the previous written segment came from another source (byte ranges need their offset).
   */
  segment(st: SourceState, seg: Segment, srcSeq: number, prefix: string[], runStart: boolean): void {
    const out = this.out;
    const hadDiscontinuity = prefix.length > 0 && prefix[0] === '#EXT-X-DISCONTINUITY';
    for (const line of seg.lines) {
      if (line.charCodeAt(0) !== 35) continue;
      const name = tagName(line);
      if (name === '#EXT-X-KEY') {
        // Several KEY tags in a row are one key set (different KEYFORMATs); METHOD=NONE clears it.
        if (!this.keyRunOpen) st.keys = [];
        this.keyRunOpen = true;
        if (attribute(tagValue(line), 'METHOD') !== 'NONE') st.keys.push(st.uriAttr(line));
        continue;
      }
      this.keyRunOpen = false;
      if (name === '#EXT-X-MAP') st.map = st.uriAttr(line);
    }
    this.keyRunOpen = false;
    out.push(...prefix);
    if (st.map !== undefined && st.map !== this.map) {
      out.push(st.map);
      this.map = st.map;
    }
    this.writeKeys(st, srcSeq);
    for (const line of seg.lines) {
      if (line.charCodeAt(0) !== 35) {
        out.push(st.resolve(line));
        break;
      }
      const name = tagName(line);
      if (DROPPED.has(name) || HEADER_TAGS.has(name)) continue;
      if (name === '#EXT-X-DATERANGE' && line.includes(',SCTE35-')) continue; // a source's own ad marker
      if (name === '#EXT-X-DISCONTINUITY' && hadDiscontinuity) continue;
      if (name === '#EXT-X-BYTERANGE') {
        const [len, off] = tagValue(line).split('@');
        const start = off !== undefined ? Number(off) : st.byteEnd;
        st.byteEnd = start + Number(len);
        out.push(off === undefined && runStart ? `#EXT-X-BYTERANGE:${len}@${start}` : line);
        continue;
      }
      out.push(line);
    }
    this.seq++;
  }

  private keyRunOpen = false;

  private writeKeys(st: SourceState, srcSeq: number): void {
    let lines = st.keys;
    if (lines.length && srcSeq !== this.seq) {
      lines = lines.map((l) => {
        const attrs = tagValue(l);
        return IV_METHODS.has(attribute(attrs, 'METHOD') ?? '') && attribute(attrs, 'IV') === undefined
          ? `${l},IV=${hex32(srcSeq)}`
          : l;
      });
    }
    const text = lines.join('\n');
    if (text === this.keyText) return;
    this.out.push(...(lines.length ? lines : ['#EXT-X-KEY:METHOD=NONE']));
    this.keyText = text;
  }

  filler(sec: number, prefix: string[]): void {
    const pieces = Math.max(1, Math.ceil(sec / this.opts.targetDuration - 1e-9));
    const each = (sec / pieces).toFixed(3);
    for (let i = 0; i < pieces; i++) {
      this.out.push(...(i === 0 ? prefix : []));
      if (this.keyText !== '') {
        this.out.push('#EXT-X-KEY:METHOD=NONE');
        this.keyText = '';
      }
      this.out.push(`#EXTINF:${each},`, this.opts.fillerUri);
      this.seq++;
    }
  }
}

function formatSec(sec: number): string {
  return String(Math.round(sec * 1000) / 1000);
}

/** The stitched media playlist text. `splices` sorted by `at`, each `at` distinct. */
export function splicePlaylist(content: SourceMedia, splices: Splice[], opts: SpliceOptions): string {
  const p = content.playlist;
  const header = [
    '#EXTM3U',
    `#EXT-X-VERSION:${opts.version}`,
    `#EXT-X-TARGETDURATION:${opts.targetDuration}`,
    `#EXT-X-MEDIA-SEQUENCE:${p.mediaSequence}`,
  ];
  if (p.discontinuitySequence) header.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${p.discontinuitySequence}`);
  header.push('#EXT-X-PLAYLIST-TYPE:VOD');
  if (p.header.includes('#EXT-X-INDEPENDENT-SEGMENTS')) header.push('#EXT-X-INDEPENDENT-SEGMENTS');
  const w = new Writer(header, p.mediaSequence, opts);
  const cs = new SourceState(content);
  let next = 0;
  let resumePrefix: string[] = [];
  const segs = p.segments;
  const writeContent = (to: number) => {
    for (; next < to; next++) {
      w.segment(cs, segs[next]!, p.mediaSequence + next, resumePrefix, resumePrefix.length > 0);
      resumePrefix = [];
    }
  };
  for (const s of splices) {
    writeContent(s.at);
    let first = true;
    for (const ad of s.ads) {
      const prefix = first
        ? [`#EXT-X-DISCONTINUITY`, `#EXT-X-CUE-OUT:DURATION=${formatSec(s.durationSec)}`]
        : ['#EXT-X-DISCONTINUITY'];
      first = false;
      if ('fillerSec' in ad) {
        w.filler(ad.fillerSec, prefix);
        continue;
      }
      // Each ad playlist is read from its start with its own MAP/KEY state, every time it plays.
      const st = new SourceState(ad.media);
      const ap = ad.media.playlist;
      ap.segments.forEach((seg, i) => w.segment(st, seg, ap.mediaSequence + i, i === 0 ? prefix : [], i === 0));
    }
    if (s.ads.length) resumePrefix = ['#EXT-X-DISCONTINUITY', '#EXT-X-CUE-IN'];
  }
  writeContent(segs.length);
  w.out.push('#EXT-X-ENDLIST', '');
  return w.out.join('\n');
}
