/**
 * The properties every stitched HLS playlist must have (issue 16; docs/design.md §11), checked
 * against the sources it was made from, not against the stitcher's own numbers.
 */
import type { Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fixturesDir } from './fixtures.js';
import HLS from 'hls-parser';
import { M3U8Parser, PlaylistLevelType } from 'hls.js';
import { parseMedia } from '../../lib/hls/media.js';
import {
  playlistLines,
  parseMaster,
  mediaPlaylistUris,
  absoluteUri,
  type MasterPlaylist,
} from '../../lib/stitch/hls/master.js';
import type { HlsSource, StitchedHls } from '../../lib/stitch/hls/stitch.js';
import type { Element } from '@xmldom/xmldom';
import { attrOf, childElement, childElements, localNameOf, parseXml, rootOf } from '../../lib/ads/xml.js';
import { parseIsoDuration, type StitchedDash } from '../../lib/stitch/dash/stitch.js';
import { reparse } from '../hls/reparse.js';

/** A folder of fixture playlists as a source served under `base`; `rename` fixes names a master gets wrong. */
export function folder(rel: string, base: string, rename: (s: string) => string = (s) => s): HlsSource {
  const dir = path.join(fixturesDir, rel);
  const playlists = new Map<string, string>();
  for (const f of readdirSync(dir))
    if (f !== 'master.m3u8' && f.endsWith('.m3u8')) playlists.set(base + f, readFileSync(path.join(dir, f), 'utf8'));
  return { url: base + 'master.m3u8', master: rename(readFileSync(path.join(dir, 'master.m3u8'), 'utf8')), playlists };
}

export function media(url: string, text: string): HlsSource {
  return { url, master: text, playlists: new Map() };
}

/** A VOD media playlist of segments with the given durations. */
export function vod(
  prefix: string,
  durations: number[],
  opts: { target?: number; head?: string[]; perSegment?: (i: number) => string[] } = {},
): string {
  const target = opts.target ?? Math.max(...durations.map(Math.ceil));
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:6',
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-PLAYLIST-TYPE:VOD',
    ...(opts.head ?? []),
  ];
  durations.forEach((d, i) => lines.push(...(opts.perSegment?.(i) ?? []), `#EXTINF:${d},`, `${prefix}${i}.ts`));
  return [...lines, '#EXT-X-ENDLIST', ''].join('\n');
}

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
      const match = adPlaylists.find(
        (p) =>
          p.length <= rest.length - i &&
          p.every((s, k) => s.uri === rest[i + k]!.uri && s.duration === rest[i + k]!.duration),
      );
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
    t.ok(
      text.includes('#EXT-X-PLAYLIST-TYPE:VOD') && text.trimEnd().endsWith('#EXT-X-ENDLIST'),
      `${name}: VOD with ENDLIST`,
    );
    const sourceText = content.playlists.get(sources.get(name)!) ?? content.master;
    const parsed = hlsParse(text, strictOk(sourceText));
    t.equal(parsed.segments.length, out.length, `${name}: hls-parser reads every segment`);
    t.equal(reparse(text).segments.length, out.length, `${name}: m3u8-parser reads every segment`);
    t.equal(
      text.split('\n').filter((l) => l.startsWith('#EXT-X-CUE-OUT:DURATION=')).length,
      result.pods.length,
      `${name}: one CUE-OUT per pod`,
    );
  }
  t.equal(discontinuities.size, 1, 'the same number of discontinuities in every playlist');
  t.equal(targets.size, 1, 'one TARGETDURATION for all playlists');
}

export interface InterstitialCheckInput {
  content: HlsSource;
  master: string;
  /** Media playlists by file name. */
  playlists: Map<string, string>;
  /** Asset list JSON texts by their absolute URL. */
  assetLists: Map<string, string>;
  /** The pods as `breaks[]` reports them: content offset and duration in seconds. */
  pods: Array<{ contentOffset: number; duration: number }>;
}

/** `NAME=value` pairs of a DATERANGE line (quoted values unquoted). */
export function dateRangeAttrs(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of line.slice(line.indexOf(':') + 1).matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g))
    out[m[1]!] = m[2]!.replace(/^"|"$/g, '');
  return out;
}

/**
 * HLS Interstitials output (RFC 8216bis Appendix D): every content playlist served with its
 * segments as the content has them, in order; one PROGRAM-DATE-TIME at least; the same DATERANGE
 * lines in every playlist, one per pod, at the pod's content time, with PRE/POST cues, resume
 * offset 0 and an asset list whose ads add up to the PLANNED-DURATION; hls-parser (strict when the
 * source passes it), m3u8-parser and hls.js's own parser read every playlist.
 */
export function checkInterstitials(t: Test, input: InterstitialCheckInput): void {
  const { content } = input;
  const contentMaster = parseMaster(content.url, content.master);
  const contentPlaylists = playlistsOf(content);
  const sources = contentOfOutputs(contentMaster, input.master);
  const contentEnd = sum(contentPlaylists.get(contentMaster.variants[0]!.uri)!);
  t.ok(hlsParse(input.master, strictOk(content.master)), 'hls-parser reads the master');
  t.equal(reparse(input.master).playlists?.length, contentMaster.variants.length, 'm3u8-parser: every variant');
  t.equal(input.playlists.size, sources.size, 'every content playlist is served');
  const ranges = new Set<string>();
  for (const [name, text] of input.playlists) {
    const src = contentPlaylists.get(sources.get(name)!)!;
    const out = segmentsOf(text, 'https://stitched.invalid/x/' + name);
    t.same(out, src, `${name}: the content's segments, absolute, in order, nothing else`);
    t.ok(
      out.every((s) => /^https?:\/\//.test(s.uri) && text.includes(`\n${s.uri}\n`)),
      `${name}: segment URIs written absolute`,
    );
    const lines = text.split('\n');
    const pdt = lines.find((l) => l.startsWith('#EXT-X-PROGRAM-DATE-TIME:'));
    t.ok(pdt, `${name}: a PROGRAM-DATE-TIME (a DATERANGE needs one)`);
    const first = Date.parse(pdt!.slice(pdt!.indexOf(':') + 1));
    // In time order (a DATERANGE may stand before an earlier segment when two would share one).
    const dr = lines
      .filter((l) => l.startsWith('#EXT-X-DATERANGE:') && l.includes('CLASS="com.apple.hls.interstitial"'))
      .sort((x, y) => Date.parse(dateRangeAttrs(x)['START-DATE']!) - Date.parse(dateRangeAttrs(y)['START-DATE']!));
    t.equal(dr.length, input.pods.length, `${name}: one interstitial DATERANGE per pod`);
    ranges.add(dr.join('\n'));
    dr.forEach((line, i) => {
      const a = dateRangeAttrs(line);
      const pod = input.pods[i]!;
      t.ok(a['ID'], 'ID');
      t.equal(
        Date.parse(a['START-DATE']!) - first,
        Math.round(pod.contentOffset * 1000),
        `${name}: START-DATE at the pod's content offset ${pod.contentOffset}`,
      );
      t.equal(Number(a['PLANNED-DURATION']), pod.duration, 'PLANNED-DURATION = the pod');
      t.notOk('DURATION' in a, 'no DURATION: an inserted ad covers no content time');
      t.equal(a['X-RESUME-OFFSET'], '0', 'the content resumes where it paused');
      t.equal(a['X-RESTRICT'], 'SKIP,JUMP');
      t.equal(
        a['CUE'],
        pod.contentOffset === 0 ? 'PRE' : Math.abs(pod.contentOffset - contentEnd) < 1e-6 ? 'POST' : undefined,
        'CUE for pre- and post-rolls only',
      );
      const list = input.assetLists.get(a['X-ASSET-LIST']!);
      t.ok(list, `${name}: the asset list ${a['X-ASSET-LIST']} is served`);
      const json = JSON.parse(list!) as { ASSETS: Array<{ URI: string; DURATION: number }> };
      t.ok(
        json.ASSETS.length > 0 &&
          json.ASSETS.every((x) => /^https?:\/\//.test(x.URI) && typeof x.DURATION === 'number' && x.DURATION > 0),
        'ASSETS: absolute URIs and durations',
      );
      t.ok(
        Math.abs(json.ASSETS.reduce((s, x) => s + x.DURATION, 0) - pod.duration) < 2e-3,
        'the assets add up to the PLANNED-DURATION',
      );
    });
    const sourceText = content.playlists.get(sources.get(name)!) ?? content.master;
    const parsed = hlsParse(text, strictOk(sourceText)) as { segments: Array<{ dateRange?: unknown }> };
    t.equal(parsed.segments.length, out.length, `${name}: hls-parser reads every segment`);
    t.equal(
      parsed.segments.filter((s) => s.dateRange).length,
      Math.min(input.pods.length, out.length),
      `${name}: hls-parser sees every DATERANGE (it keeps one a segment)`,
    );
    // hls.js (the player the operator pages use) reads each as a valid interstitial at the pod's time.
    const details = M3U8Parser.parseLevelPlaylist(
      text,
      'https://stitched.invalid/x/' + name,
      0,
      PlaylistLevelType.MAIN,
      0,
      null,
    );
    t.equal(details.fragments.length, out.length, `${name}: hls.js reads every segment`);
    const events = Object.values(details.dateRanges)
      .filter((e) => e !== undefined)
      .sort((x, y) => x.startTime - y.startTime);
    t.same(
      events.map((e) => [
        e.isInterstitial,
        e.isValid,
        Math.round(e.startTime * 1000) / 1000,
        e.cue.pre,
        e.cue.post,
        e.plannedDuration,
      ]),
      input.pods.map((p) => [
        true,
        true,
        p.contentOffset,
        p.contentOffset === 0,
        Math.abs(p.contentOffset - contentEnd) < 1e-6,
        p.duration,
      ]),
      `${name}: hls.js reads every DATERANGE as a valid interstitial at its pod's time`,
    );
    const m3u8 = reparse(text) as ReturnType<typeof reparse> & { dateRanges?: unknown[] };
    t.equal(m3u8.segments.length, out.length, `${name}: m3u8-parser reads every segment`);
    t.equal(m3u8.dateRanges?.length ?? 0, input.pods.length, `${name}: m3u8-parser reads every DATERANGE`);
  }
  t.equal(ranges.size, 1, 'the same DATERANGEs in every playlist');
}

/** Media-time segments addressed by each Representation of the content Periods, keyed by Representation id. */
function addressed(mpd: string, contentOnly: (period: Element) => boolean): Map<string, string[]> {
  const root = rootOf(parseXml(mpd, { maxBytes: 8 * 1024 * 1024 }))!;
  const out = new Map<string, string[]>();
  for (const p of childElements(root, 'Period')) {
    if (!contentOnly(p)) continue;
    const dur =
      parseIsoDuration(attrOf(p, 'duration')) ??
      parseIsoDuration(attrOf(root, 'mediaPresentationDuration'))! - (parseIsoDuration(attrOf(p, 'start')) ?? 0);
    childElements(p, 'AdaptationSet').forEach((as, asIndex) => {
      for (const rep of childElements(as, 'Representation')) {
        const tpl =
          childElement(rep, 'SegmentTemplate') ??
          childElement(as, 'SegmentTemplate') ??
          childElement(p, 'SegmentTemplate');
        if (!tpl) continue;
        const key = `${asIndex}/${attrOf(rep, 'id')}`;
        const list = out.get(key) ?? [];
        const ts = Number(attrOf(tpl, 'timescale') ?? 1);
        const pto = Number(attrOf(tpl, 'presentationTimeOffset') ?? 0);
        let n = Number(attrOf(tpl, 'startNumber') ?? 1);
        const tl = childElement(tpl, 'SegmentTimeline');
        if (tl) {
          let at = 0;
          for (const s of childElements(tl, 'S')) {
            if (attrOf(s, 't') !== undefined) at = Number(attrOf(s, 't'));
            const d = Number(attrOf(s, 'd'));
            let r = Number(attrOf(s, 'r') ?? 0);
            if (r < 0) r = Math.ceil((pto + dur * ts - at) / d) - 1;
            for (let i = 0; i <= r; i++, at += d) list.push(`${n++}@${at}`);
          }
        } else {
          const d = Number(attrOf(tpl, 'duration'));
          const count = Math.ceil((dur * ts) / d - 1e-3);
          for (let i = 0; i < count; i++) list.push(`${n++}`);
        }
        out.set(key, list);
      }
    });
  }
  return out;
}

/** Periods tile [0, mediaPresentationDuration] with no gap or overlap; content segments addressed exactly as in the original. */
export function checkDash(
  t: Test,
  original: string,
  result: Pick<StitchedDash, 'mpd' | 'pods' | 'contentDuration'>,
): void {
  const root = rootOf(parseXml(result.mpd, { maxBytes: 8 * 1024 * 1024 }))!;
  t.equal(localNameOf(root), 'MPD');
  const periods = childElements(root, 'Period');
  let at = 0;
  const ids = new Set<string>();
  for (const p of periods) {
    t.ok(
      Math.abs(parseIsoDuration(attrOf(p, 'start'))! - at) < 1e-6,
      `Period ${attrOf(p, 'id')} starts where the previous ended`,
    );
    at += parseIsoDuration(attrOf(p, 'duration'))!;
    ids.add(attrOf(p, 'id')!);
  }
  t.equal(ids.size, periods.length, 'unique Period ids');
  t.ok(
    Math.abs(parseIsoDuration(attrOf(root, 'mediaPresentationDuration'))! - at) < 1e-6,
    'mediaPresentationDuration = the sum of the Periods',
  );
  const adIds = new Set(result.pods.flatMap((p) => p.ids));
  const isAd = (p: Element) => [...adIds].some((id) => (attrOf(p, 'id') ?? '').startsWith(`${id}-ad`));
  t.same(
    addressed(result.mpd, (p) => !isAd(p)),
    addressed(original, () => true),
    'the content segments addressed equal the original ones',
  );
  const expectedAds = result.pods.reduce((a, p) => a + p.duration, 0);
  t.ok(Math.abs(at - (result.contentDuration + expectedAds)) < 1e-6, 'duration = content + ads');
  const keys = (p: Element) =>
    childElements(p, 'AdaptationSet')
      .map(
        (as) =>
          `${(attrOf(as, 'contentType') ?? attrOf(as, 'mimeType') ?? attrOf(childElement(as, 'Representation')!, 'mimeType') ?? '').split('/')[0]}|${attrOf(as, 'lang') ?? ''}`,
      )
      .filter((k, i, all) => !k.startsWith('image') && all.indexOf(k) === i)
      .sort()
      .join(',');
  const source = childElements(rootOf(parseXml(original, { maxBytes: 8 * 1024 * 1024 }))!, 'Period');
  if (new Set(source.map(keys)).size === 1)
    t.equal(new Set(periods.map(keys)).size, 1, 'every Period has the same content types and languages');
}
