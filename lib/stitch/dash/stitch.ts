/**
 * DASH VOD stitching (static MPD; docs/design.md §11), pure: the content Period is split at each
 * pod's splice point (the first video segment boundary at or after the cue point); the later part
 * keeps its media with `presentationTimeOffset` moved and `startNumber` advanced, its SegmentTimeline
 * starting at the first segment it owns, so no segment is addressed twice or skipped. Each ad MPD's
 * Periods are copied in with deterministic unique ids, their BaseURLs made absolute, EventStreams
 * kept. Every Period gets an explicit `start` and `duration` (no gap: dash.js stalls on one) and
 * the same content types and languages as the content (Shaka's period flattening needs it): an ad
 * audio set is copied for a content language it lacks, ad sets of types the content lacks are
 * removed, and an ad lacking a content type is left out.
 *
 * Segment addressing read and rewritten: SegmentTemplate (with SegmentTimeline or @duration) and
 * SegmentList with @duration. A Period addressed with SegmentBase (one indexed file) cannot be
 * split: only pre- and post-rolls go around it.
 */
import { XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { attrOf, childElement, childElements, localNameOf, rootOf, textOf, XmlError } from '../../xml/index.js';
import { formatIsoDuration, parseIsoDuration, periodTimings, readMpd } from '../../dash/index.js';
import { StitchError } from '../errors.js';
import type { StitchedPod } from '../hls/stitch.js';

export interface DashPodInput {
  id: string;
  offsetSec: number;
  ads: Array<{ id: string; url: string; mpd: string }>;
}

export interface StitchedDash {
  mpd: string;
  pods: StitchedPod[];
  contentDuration: number;
  skipped: Array<{ podId: string; adId: string; reason: string }>;
}

const MAX_BYTES = 8 * 1024 * 1024;
const EPS = 1e-3;

/** The ISO 8601 duration reader and writer are lib/dash's (re-exported for the stitcher's callers). */
export { formatIsoDuration, parseIsoDuration };

function parseMpd(text: string, url: string): Document {
  let read;
  try {
    read = readMpd(text, { maxBytes: MAX_BYTES });
  } catch (err) {
    if (err instanceof XmlError)
      throw new StitchError(err.code === 'too-large' ? 'too-large' : 'unparseable', `${url}: ${err.message}`);
    throw err;
  }
  if (!read) throw new StitchError('unparseable', `not an MPD: ${url}`);
  if ((attrOf(read.root, 'type') ?? 'static') !== 'static')
    throw new StitchError('not-vod', `not a static (VOD) MPD: ${url}`);
  return read.doc;
}

function resolve(uri: string, base: string): string {
  try {
    return new URL(uri, base).href;
  } catch {
    throw new StitchError('unparseable', `a BaseURL cannot be resolved: ${uri.slice(0, 200)}`);
  }
}

/** Absolute base of a Period: its first BaseURL over the MPD's first, over the document URL. */
function periodBase(root: Element, period: Element, url: string): string {
  const mpdBase = childElement(root, 'BaseURL');
  const base = mpdBase ? resolve(textOf(mpdBase), url) : url;
  const own = childElement(period, 'BaseURL');
  return own ? resolve(textOf(own), base) : base;
}

/** Makes the Period's first BaseURL the absolute base (inserted when it has none). */
function setPeriodBase(doc: Document, period: Element, base: string): void {
  const own = childElement(period, 'BaseURL');
  if (own) {
    while (own.firstChild) own.removeChild(own.firstChild);
    own.appendChild(doc.createTextNode(base));
    return;
  }
  const el = doc.createElementNS(period.namespaceURI, 'BaseURL');
  el.appendChild(doc.createTextNode(base));
  period.insertBefore(el, period.firstChild);
}

interface Seg {
  t: number;
  d: number;
}

/** The segments of a SegmentTimeline (media time), `r=-1` expanded to `endMedia`. */
function timeline(tl: Element, endMedia: number): Seg[] {
  const out: Seg[] = [];
  let t = 0;
  for (const s of childElements(tl, 'S')) {
    const d = Number(attrOf(s, 'd'));
    if (!(d > 0)) throw new StitchError('unparseable', 'an S element without a positive @d');
    const st = attrOf(s, 't');
    if (st !== undefined) t = Number(st);
    let r = Number(attrOf(s, 'r') ?? 0);
    if (r < 0) r = Math.max(0, Math.ceil((endMedia - t) / d) - 1);
    for (let i = 0; i <= r && out.length < 1_000_000; i++) {
      out.push({ t, d });
      t += d;
    }
  }
  return out;
}

function writeTimeline(doc: Document, tl: Element, segs: Seg[]): void {
  while (tl.firstChild) tl.removeChild(tl.firstChild);
  let i = 0;
  while (i < segs.length) {
    let r = 0;
    while (
      i + r + 1 < segs.length &&
      segs[i + r + 1]!.d === segs[i]!.d &&
      segs[i + r + 1]!.t === segs[i + r]!.t + segs[i]!.d
    )
      r++;
    const s = doc.createElementNS(tl.namespaceURI, 'S');
    if (i === 0 || segs[i]!.t !== segs[i - 1]!.t + segs[i - 1]!.d) s.setAttribute('t', String(segs[i]!.t));
    s.setAttribute('d', String(segs[i]!.d));
    if (r) s.setAttribute('r', String(r));
    tl.appendChild(s);
    i += r + 1;
  }
}

/** Every SegmentTemplate / SegmentList of a Period, at any level. */
function addressing(period: Element): Element[] {
  const out: Element[] = [];
  const walk = (el: Element) => {
    for (const c of childElements(el)) {
      const n = localNameOf(c);
      if (n === 'SegmentTemplate' || n === 'SegmentList' || n === 'SegmentBase') out.push(c);
      else if (n === 'AdaptationSet' || n === 'Representation') walk(c);
    }
  };
  walk(period);
  return out;
}

/** Segment start times of one addressing element, in seconds from the Period start. */
function segmentStarts(el: Element, periodSec: number): number[] {
  if (localNameOf(el) === 'SegmentBase') throw new StitchError('unsupported', 'a SegmentBase Period cannot be split');
  const ts = Number(attrOf(el, 'timescale') ?? 1);
  const pto = Number(attrOf(el, 'presentationTimeOffset') ?? 0);
  const tl = childElement(el, 'SegmentTimeline');
  if (tl) return timeline(tl, pto + periodSec * ts).map((s) => (s.t - pto) / ts);
  const d = Number(attrOf(el, 'duration'));
  if (!(d > 0)) throw new StitchError('unsupported', 'segment addressing without a timeline or @duration');
  const n = Math.ceil((periodSec * ts) / d - EPS);
  return Array.from({ length: n }, (_, k) => (k * d) / ts);
}

/** Rewrites one addressing element for the part of the Period before (`head`) or after `cutSec`. */
function cutAddressing(doc: Document, el: Element, cutSec: number, periodSec: number, head: boolean): void {
  const ts = Number(attrOf(el, 'timescale') ?? 1);
  const pto = Number(attrOf(el, 'presentationTimeOffset') ?? 0);
  const start = Number(attrOf(el, 'startNumber') ?? 1);
  const cut = pto + cutSec * ts;
  const tl = childElement(el, 'SegmentTimeline');
  if (tl) {
    const segs = timeline(tl, pto + periodSec * ts);
    // A segment belongs to the part holding most of it (audio boundaries rarely meet video's).
    const n1 = segs.filter((s) => s.t + s.d / 2 <= cut + EPS).length;
    writeTimeline(doc, tl, head ? segs.slice(0, n1) : segs.slice(n1));
    if (!head) {
      el.setAttribute('presentationTimeOffset', String(Math.round(cut)));
      el.setAttribute('startNumber', String(start + n1));
    }
    return;
  }
  const d = Number(attrOf(el, 'duration'));
  const n1 = Math.max(0, Math.ceil((cutSec * ts) / d - 0.5 - EPS));
  if (localNameOf(el) === 'SegmentList') {
    const urls = childElements(el, 'SegmentURL');
    (head ? urls.slice(n1) : urls.slice(0, n1)).forEach((u) => el.removeChild(u));
  } else if (!head) el.setAttribute('startNumber', String(start + n1));
  if (!head) el.setAttribute('presentationTimeOffset', String(pto + n1 * d));
}

function contentType(as: Element): string {
  const mime =
    attrOf(as, 'contentType') ??
    attrOf(as, 'mimeType') ??
    (childElement(as, 'Representation') && attrOf(childElement(as, 'Representation')!, 'mimeType')) ??
    '';
  const t = mime.split('/')[0]!.toLowerCase();
  return t === 'application' ? 'text' : t;
}

const TRACK_TYPES = new Set(['video', 'audio', 'text']);
const trackKey = (as: Element) => `${contentType(as)}|${(attrOf(as, 'lang') ?? '').toLowerCase()}`;

interface PeriodSpan {
  el: Element;
  start: number;
  duration: number;
}

function spans(root: Element): PeriodSpan[] {
  const periods = periodTimings(root);
  if (!periods.length) throw new StitchError('unparseable', 'an MPD without a Period');
  return periods.map(({ el, start, duration }) => {
    if (duration === undefined)
      throw new StitchError('unparseable', 'a Period without a duration and no mediaPresentationDuration');
    return { el, start, duration };
  });
}

/** Video segment boundaries of a Period (seconds from its start), the Period's end included. */
function boundaries(period: PeriodSpan): number[] {
  const sets = childElements(period.el, 'AdaptationSet');
  const video = sets.find((s) => contentType(s) === 'video') ?? sets[0];
  if (!video) return [0, period.duration];
  const el =
    childElement(childElement(video, 'Representation') ?? video, 'SegmentTemplate', 'SegmentList', 'SegmentBase') ??
    childElement(video, 'SegmentTemplate', 'SegmentList', 'SegmentBase') ??
    childElement(period.el, 'SegmentTemplate', 'SegmentList', 'SegmentBase');
  if (!el || localNameOf(el) === 'SegmentBase') return [0, period.duration];
  return [...segmentStarts(el, period.duration).filter((s) => s > EPS && s < period.duration - EPS), period.duration];
}

/** The ad's Periods, ready to insert: absolute bases, fixed ids, the content's tracks. */
function adPeriods(
  doc: Document,
  ad: { id: string; url: string; mpd: string },
  prefix: string,
  tracks: Map<string, Element>,
): Array<{ el: Element; duration: number }> {
  const adDoc = parseMpd(ad.mpd, ad.url);
  const root = rootOf(adDoc)!;
  return spans(root).map((span, k) => {
    const el = doc.importNode(span.el, true) as Element;
    setPeriodBase(doc, el, periodBase(root, span.el, ad.url));
    el.setAttribute('id', `${prefix}-p${k + 1}`);
    const byType = new Map<string, Element>();
    for (const as of childElements(el, 'AdaptationSet')) {
      if (!byType.has(contentType(as))) byType.set(contentType(as), as);
      if (!tracks.has(trackKey(as))) el.removeChild(as);
    }
    const have = new Set(childElements(el, 'AdaptationSet').map(trackKey));
    for (const [key, contentSet] of tracks) {
      if (have.has(key)) continue;
      const type = key.split('|')[0]!;
      const like = byType.get(type);
      if (!like) throw new StitchError('unsupported', `the ad has no ${type} track`);
      const copy = like.cloneNode(true) as Element;
      const lang = attrOf(contentSet, 'lang');
      if (lang) copy.setAttribute('lang', lang);
      else copy.removeAttribute('lang');
      copy.setAttribute('id', `${attrOf(like, 'id') ?? type}-${lang ?? 'und'}`);
      el.appendChild(copy);
      have.add(key);
    }
    return { el, duration: span.duration };
  });
}

export function stitchDash(content: { url: string; mpd: string }, pods: DashPodInput[]): StitchedDash {
  const doc = parseMpd(content.mpd, content.url);
  const root = rootOf(doc)!;
  const original = spans(root);
  const contentDuration = original.reduce((a, p) => a + p.duration, 0);
  // Content BaseURLs made absolute: the stitched MPD is served from elsewhere.
  for (const p of original) setPeriodBase(doc, p.el, periodBase(root, p.el, content.url));
  for (const b of childElements(root, 'BaseURL')) root.removeChild(b);
  root.removeAttribute('availabilityStartTime');
  const tracks = new Map<string, Element>();
  // Thumbnail (image) sets need not be in every Period; video, audio and text must.
  for (const as of childElements(original[0]!.el, 'AdaptationSet'))
    if (TRACK_TYPES.has(contentType(as)) && !tracks.has(trackKey(as))) tracks.set(trackKey(as), as);

  // Splice points: the first video boundary at or after each cue point.
  const skipped: StitchedDash['skipped'] = [];
  const cuts = new Map<
    number,
    { ids: string[]; ads: Array<{ id: string; periods: Array<{ el: Element; duration: number }> }> }
  >();
  for (const pod of [...pods].sort((a, b) => a.offsetSec - b.offsetSec)) {
    let at = contentDuration;
    try {
      if (pod.offsetSec < contentDuration - EPS) {
        const p = original.find((s) => pod.offsetSec < s.start + s.duration - EPS)!;
        const rel = Math.max(0, pod.offsetSec - p.start);
        at = p.start + (rel <= EPS ? 0 : boundaries(p).find((b) => b >= rel - EPS)!);
      }
    } catch (err) {
      if (!(err instanceof StitchError)) throw err;
      for (const ad of pod.ads) skipped.push({ podId: pod.id, adId: ad.id, reason: err.message });
      continue;
    }
    const entry = cuts.get(at) ?? { ids: [], ads: [] };
    pod.ads.forEach((ad, j) => {
      try {
        entry.ads.push({ id: ad.id, periods: adPeriods(doc, ad, `${pod.id}-ad${j + 1}`, tracks) });
      } catch (err) {
        if (!(err instanceof StitchError)) throw err;
        skipped.push({ podId: pod.id, adId: ad.id, reason: err.message });
      }
    });
    if (!entry.ads.length) continue;
    entry.ids.push(pod.id);
    cuts.set(at, entry);
  }

  // Split the content Periods at the cuts and lay everything out in order.
  const out: Array<{ el: Element; duration: number }> = [];
  const pods_: StitchedPod[] = [];
  const cutTimes = [...cuts.keys()].sort((a, b) => a - b);
  let shift = 0;
  const placePod = (at: number) => {
    const e = cuts.get(at)!;
    const start = at + shift;
    let t = start;
    const ads = e.ads.map((ad) => {
      const d = ad.periods.reduce((a, p) => a + p.duration, 0);
      out.push(...ad.periods);
      const r = { id: ad.id, start: t, duration: d };
      t += d;
      return r;
    });
    pods_.push({ ids: e.ids, contentOffset: at, start, duration: t - start, ads });
    shift += t - start;
  };
  let ci = 0;
  for (const span of original) {
    let rest = { el: span.el, start: span.start, duration: span.duration };
    let part = 0;
    while (ci < cutTimes.length && cutTimes[ci]! < rest.start + rest.duration - EPS) {
      const at = cutTimes[ci++]!;
      const rel = at - rest.start;
      if (rel > EPS) {
        const headEl = rest.el.cloneNode(true) as Element;
        for (const a of addressing(headEl)) cutAddressing(doc, a, rel, rest.duration, true);
        headEl.setAttribute('id', `${attrOf(span.el, 'id') ?? 'content'}-part${++part}`);
        out.push({ el: headEl, duration: rel });
        for (const a of addressing(rest.el)) cutAddressing(doc, a, rel, rest.duration, false);
        rest = { el: rest.el, start: at, duration: rest.duration - rel };
      }
      placePod(at);
    }
    if (part) rest.el.setAttribute('id', `${attrOf(span.el, 'id') ?? 'content'}-part${++part}`);
    else if (!attrOf(rest.el, 'id')) rest.el.setAttribute('id', 'content');
    out.push({ el: rest.el, duration: rest.duration });
  }
  while (ci < cutTimes.length) placePod(cutTimes[ci++]!);

  for (const p of childElements(root, 'Period')) root.removeChild(p);
  let at = 0;
  for (const p of out) {
    p.el.setAttribute('start', formatIsoDuration(at));
    p.el.setAttribute('duration', formatIsoDuration(p.duration));
    root.appendChild(p.el);
    at += p.duration;
  }
  root.setAttribute('mediaPresentationDuration', formatIsoDuration(at));
  return { mpd: new XMLSerializer().serializeToString(doc), pods: pods_, contentDuration, skipped };
}
