/**
 * The properties every stitched HLS playlist must have (issue 16; docs/design.md §11), checked
 * against the sources it was made from, not against the stitcher's own numbers.
 */
import type { Test } from 'tap';
import HLS from 'hls-parser';
import { parseMedia } from '../../lib/hls/media.js';
import { playlistLines, parseMaster, mediaPlaylistUris, absoluteUri, type MasterPlaylist } from '../../lib/stitch/hls/master.js';
import type { HlsSource, StitchedHls } from '../../lib/stitch/hls/stitch.js';
import { reparse } from '../hls/reparse.js';

/** hls-parser in strict mode when the source itself passes it (some fixtures break RFC 8216 rules on their own). */
function hlsParse(text: string, strict: boolean): { segments: unknown[] } {
  HLS.setOptions({ strictMode: strict });
  try {
    return HLS.parse(text) as { segments: unknown[] };
  } finally {
    HLS.setOptions({ strictMode: false });
  }
}

function strictOk(text: string): boolean {
  try {
    hlsParse(text, true);
    return true;
  } catch {
    return false;
  }
}

export interface Seg {
  uri: string;
  duration: number;
}

/** Segments of a media playlist text with URIs resolved against its URL. */
export function segmentsOf(text: string, url: string): Seg[] {
  return parseMedia(playlistLines(text)).segments.map((s) => ({ uri: absoluteUri(s.uri, url), duration: s.duration }));
}

const sum = (segs: Seg[]) => segs.reduce((a, s) => a + s.duration, 0);

/** Every media playlist of a source, segments resolved. */
export function playlistsOf(src: HlsSource): Map<string, Seg[]> {
  const m = parseMaster(src.url, src.master);
  const out = new Map<string, Seg[]>();
  for (const uri of mediaPlaylistUris(m)) {
    const text = src.playlists.get(uri) ?? (uri === src.url ? src.master : undefined);
    if (text !== undefined) out.set(uri, segmentsOf(text, uri));
  }
  return out;
}

/** Which content playlist each stitched playlist was made from, read from the two masters. */
export function contentOfOutputs(content: MasterPlaylist, stitchedMaster: string): Map<string, string> {
  const out = parseMaster('https://stitched.invalid/x/master.m3u8', stitchedMaster);
  const map = new Map<string, string>();
  out.variants.forEach((v, i) => map.set(v.uri.split('/').pop()!, content.variants[i]!.uri));
  const contentRenditions = content.renditions.filter((r) => r.uri);
  out.renditions.filter((r) => r.uri).forEach((r, i) => map.set(r.uri!.split('/').pop()!, contentRenditions[i]!.uri!));
  return map;
}

export interface CheckInput {
  content: HlsSource;
  ads: HlsSource[];
  fillerUri: string;
  result: StitchedHls;
}

/**
 * For every stitched playlist: content segments once and in order; everything else whole ad
 * playlists (or filler) in order, URIs byte for byte; duration = content + those ads; equal
 * discontinuity counts; rounded EXTINF ≤ one TARGETDURATION; hls-parser and m3u8-parser read it.
 */
export function checkStitched(t: Test, input: CheckInput): void {
  const { content, result } = input;
  const contentMaster = parseMaster(content.url, content.master);
  const contentPlaylists = playlistsOf(content);
  const adPlaylists = input.ads.flatMap((a) => [...playlistsOf(a).values()]);
  const sources = contentOfOutputs(contentMaster, result.master);
  const expectedAds = result.pods.reduce((n, p) => n + p.ads.length, 0);
  const discontinuities = new Set<number>();
  const targets = new Set<number>();
  t.ok(hlsParse(result.master, strictOk(content.master)), 'hls-parser reads the master');
  t.equal(reparse(result.master).playlists?.length, contentMaster.variants.length, 'm3u8-parser: every variant');
  t.equal(result.playlists.size, sources.size, 'every content playlist has a stitched one');
  for (const [name, text] of result.playlists) {
    const src = contentPlaylists.get(sources.get(name)!)!;
    const out = segmentsOf(text, 'https://stitched.invalid/x/' + name);
    const raw = parseMedia(playlistLines(text));
    const contentUris = new Set(src.map((s) => s.uri));
    t.same(
      out.filter((s) => contentUris.has(s.uri)).map((s) => s.uri),
      src.map((s) => s.uri),
      `${name}: every content segment once, in order`,
    );
    // The rest, run by run, must be whole ad playlists (or filler runs).
    const rest = out.filter((s) => !contentUris.has(s.uri));
    let i = 0;
    let adSeconds = 0;
    let ads = 0;
    while (i < rest.length) {
      if (rest[i]!.uri === input.fillerUri) {
        let d = 0;
        while (i < rest.length && rest[i]!.uri === input.fillerUri) d += rest[i++]!.duration;
        adSeconds += d;
        continue;
      }
      const match = adPlaylists.find((p) => p.length <= rest.length - i && p.every((s, k) => s.uri === rest[i + k]!.uri && s.duration === rest[i + k]!.duration));
      if (!match) {
        t.fail(`${name}: segment ${rest[i]!.uri} is neither content nor part of a whole ad playlist`);
        return;
      }
      adSeconds += sum(match);
      ads++;
      i += match.length;
    }
    if (!text.includes(input.fillerUri)) t.equal(ads, expectedAds, `${name}: ${expectedAds} ads played`);
    t.ok(Math.abs(sum(out) - (sum(src) + adSeconds)) < 1e-6, `${name}: duration = content + ads`);
    t.equal(raw.segments.length, out.length);
    discontinuities.add(raw.segments.filter((s) => s.discontinuity).length);
    targets.add(raw.targetDuration);
    t.ok(
      raw.segments.every((s) => Math.round(s.duration) <= raw.targetDuration),
      `${name}: every rounded EXTINF ≤ TARGETDURATION`,
    );
    t.ok(text.includes('#EXT-X-PLAYLIST-TYPE:VOD') && text.trimEnd().endsWith('#EXT-X-ENDLIST'), `${name}: VOD with ENDLIST`);
    const sourceText = content.playlists.get(sources.get(name)!) ?? content.master;
    const parsed = hlsParse(text, strictOk(sourceText));
    t.equal(parsed.segments.length, out.length, `${name}: hls-parser reads every segment`);
    t.equal(reparse(text).segments.length, out.length, `${name}: m3u8-parser reads every segment`);
    t.equal(text.split('\n').filter((l) => l.startsWith('#EXT-X-CUE-OUT:DURATION=')).length, result.pods.length, `${name}: one CUE-OUT per pod`);
  }
  t.equal(discontinuities.size, 1, 'the same number of discontinuities in every playlist');
  t.equal(targets.size, 1, 'one TARGETDURATION for all playlists');
}
