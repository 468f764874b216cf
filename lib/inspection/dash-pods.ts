/**
 * The ad pods of an MPD (issue 13; ISO/IEC 23009-1). Pure: the MPD text in, the segments to read
 * out. Not the hot path, so the MPD goes through the project's XML door (xmldom, DOCTYPE refused,
 * size and depth caps).
 *
 * - An ad Period has an id with an `ad`, `ads`, `pod` or `pods` token between non-alphanumerics
 *   (`dai_pod-0001065804-ad-1`, `mid-roll-1-ad-1`; not `head`, `download` or a UUID's hex group),
 *   or an EventStream `urn:google:dai:2018`. Consecutive
 *   ad Periods are one pod (Google puts each ad of a pod in a Period of its own).
 * - Segment addressing kept to what providers and the simulator use (§5.3.9): SegmentTemplate with
 *   a SegmentTimeline (`S@t/d/r`, `r=-1` up to the Period's end) or a fixed `@duration`;
 *   `$RepresentationID$`, `$Number[%0Nd]$`, `$Time$`, `$Bandwidth$`, `$$`; attributes inherited
 *   Period → AdaptationSet → Representation. SegmentList with SegmentURL@media. A Representation
 *   with neither is one segment: its BaseURL. BaseURL resolved MPD → Period → AdaptationSet →
 *   Representation. Byte ranges (`mediaRange`, `indexRange`) are not read.
 * - Times are seconds on the Period's timeline (presentationTimeOffset removed).
 */
import type { Element } from '@xmldom/xmldom';
import { attrOf, childElement, childElements } from '../xml/index.js';
import { periodTimings, readMpd } from '../dash/index.js';
import { mpdEventsOf, type MpdEvent } from '../id3/index.js';

export const GOOGLE_DAI_SCHEME = 'urn:google:dai:2018';
const AD_TOKEN = /^(ad|ads|pod|pods)$/i;

export interface DashSegmentRef {
  /** The media URL as the template or list writes it (after substitution). */
  name: string;
  url: string;
  startSec: number;
  durationSec: number;
}
export interface DashRenditionRef {
  name: string;
  segments: DashSegmentRef[];
}
export interface DashPeriodRef {
  name: string;
  startSec: number;
  renditions: DashRenditionRef[];
  /** The Period's EventStream events, with their time in seconds from the Period's start. */
  events: Array<{ event: MpdEvent; sec: number }>;
}
export interface DashPod {
  /** The first Period's start in the presentation (seconds). */
  startSec: number;
  /** Wall-clock start (epoch seconds) of a live MPD: availabilityStartTime + the Period's start. */
  startEpochSec?: number;
  periods: DashPeriodRef[];
}

export function isAdPeriod(id: string | undefined, eventSchemes: readonly string[]): boolean {
  if (eventSchemes.includes(GOOGLE_DAI_SCHEME)) return true;
  return !!id && id.split(/[^A-Za-z0-9]+/).some((t) => AD_TOKEN.test(t));
}

function numAttr(el: Element | undefined, name: string): number | undefined {
  const v = el ? attrOf(el, name) : undefined;
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function baseOf(el: Element, parent: string): string {
  const b = childElement(el, 'BaseURL');
  const text = b?.textContent?.trim();
  if (!text) return parent;
  try {
    return new URL(text, parent).toString();
  } catch {
    return parent;
  }
}

/** The first of the elements (most specific first) that has the attribute. */
function inherited(els: Array<Element | undefined>, name: string): string | undefined {
  for (const el of els) {
    const v = el ? attrOf(el, name) : undefined;
    if (v !== undefined) return v;
  }
  return undefined;
}

function fillTemplate(tpl: string, vars: { id: string; bandwidth: string; number: number; time: number }): string {
  return tpl.replace(
    /\$(RepresentationID|Number|Time|Bandwidth|)(%0(\d+)d)?\$/g,
    (_m, name: string, _f, width: string | undefined) => {
      if (name === '') return '$';
      const raw =
        name === 'RepresentationID'
          ? vars.id
          : name === 'Bandwidth'
            ? vars.bandwidth
            : String(name === 'Number' ? vars.number : vars.time);
      return width && name !== 'RepresentationID' ? raw.padStart(Number(width), '0') : raw;
    },
  );
}

interface Timing {
  number: number;
  time: number;
  duration: number;
  pto: number;
  timescale: number;
}

/** Segment times of a template, in its timescale, at most `limit`. */
function templateTimes(tpls: Array<Element | undefined>, periodDurSec: number | undefined, limit: number): Timing[] {
  const timescale = Number(inherited(tpls, 'timescale') ?? 1) || 1;
  const startNumber = Number(inherited(tpls, 'startNumber') ?? 1) || 0;
  const pto = Number(inherited(tpls, 'presentationTimeOffset') ?? 0) || 0;
  const timelineEl = tpls.map((t) => (t ? childElement(t, 'SegmentTimeline') : undefined)).find((t) => t);
  const out: Timing[] = [];
  const end = periodDurSec === undefined ? Infinity : pto + periodDurSec * timescale;
  if (timelineEl) {
    let t = 0;
    for (const s of childElements(timelineEl, 'S')) {
      const d = numAttr(s, 'd') ?? 0;
      if (d <= 0) break;
      t = numAttr(s, 't') ?? t;
      let r = numAttr(s, 'r') ?? 0;
      if (r < 0) r = end === Infinity ? 0 : Math.ceil((end - t) / d) - 1;
      for (let k = 0; k <= r && out.length < limit; k++, t += d)
        out.push({ number: startNumber + out.length, time: t, duration: d, pto, timescale });
      if (out.length >= limit) break;
    }
  } else {
    const d = Number(inherited(tpls, 'duration') ?? 0);
    if (d > 0 && periodDurSec !== undefined) {
      const count = Math.min(limit, Math.ceil((periodDurSec * timescale) / d - 1e-9));
      for (let k = 0; k < count; k++)
        out.push({ number: startNumber + k, time: pto + k * d, duration: d, pto, timescale });
    }
  }
  return out;
}

function representationSegments(
  period: Element,
  set: Element,
  rep: Element,
  base: string,
  periodDurSec: number | undefined,
  limit: number,
): DashSegmentRef[] {
  const id = attrOf(rep, 'id') ?? '';
  const bandwidth = attrOf(rep, 'bandwidth') ?? '';
  const tpls = [rep, set, period].map((e) => childElement(e, 'SegmentTemplate'));
  const resolve = (name: string) => {
    try {
      return new URL(name, base).toString();
    } catch {
      return undefined;
    }
  };
  const out: DashSegmentRef[] = [];
  const media = inherited(tpls, 'media');
  if (media) {
    for (const t of templateTimes(tpls, periodDurSec, limit)) {
      const name = fillTemplate(media, { id, bandwidth, number: t.number, time: t.time });
      const url = resolve(name);
      if (url) out.push({ name, url, startSec: (t.time - t.pto) / t.timescale, durationSec: t.duration / t.timescale });
    }
    return out;
  }
  const list = [rep, set, period].map((e) => childElement(e, 'SegmentList')).find((l) => l);
  if (list) {
    const timescale = numAttr(list, 'timescale') ?? 1;
    const d = (numAttr(list, 'duration') ?? 0) / timescale;
    for (const su of childElements(list, 'SegmentURL')) {
      if (out.length >= limit) break;
      const name = attrOf(su, 'media');
      const url = name ? resolve(name) : undefined;
      if (name && url) out.push({ name, url, startSec: out.length * d, durationSec: d });
    }
    return out;
  }
  const own = childElement(rep, 'BaseURL')?.textContent?.trim();
  return own ? [{ name: own, url: base, startSec: 0, durationSec: periodDurSec ?? 0 }] : [];
}

/**
 * The ad pods of an MPD in presentation order; an unreadable MPD has none. `limit` caps the
 * segments listed per Representation; `allAds` reads every Period as an ad (a pod manifest).
 */
export function findDashPods(mpd: string, mpdUrl: string, opts: { limit?: number; allAds?: boolean } = {}): DashPod[] {
  const limit = opts.limit ?? 2000;
  let root: Element;
  try {
    const read = readMpd(mpd);
    if (!read) return [];
    root = read.root;
  } catch {
    return [];
  }
  const events = mpdEventsOf(root);
  const mpdBase = baseOf(root, mpdUrl);
  const timings = periodTimings(root);
  const ast = Date.parse(attrOf(root, 'availabilityStartTime') ?? '');
  const pods: DashPod[] = [];
  let current: DashPod | undefined;
  timings.forEach(({ el: p, start: at, duration: dur }, i) => {
    const id = attrOf(p, 'id');
    const schemes = childElements(p, 'EventStream').map((e) => attrOf(e, 'schemeIdUri') ?? '');
    if (!opts.allAds && !isAdPeriod(id, schemes)) {
      current = undefined;
      return;
    }
    const start = Number.isFinite(at) ? at : 0;
    const base = baseOf(p, mpdBase);
    const renditions: DashRenditionRef[] = [];
    for (const set of childElements(p, 'AdaptationSet')) {
      const setBase = baseOf(set, base);
      for (const rep of childElements(set, 'Representation')) {
        renditions.push({
          name: attrOf(rep, 'id') ?? `${renditions.length}`,
          segments: representationSegments(p, set, rep, baseOf(rep, setBase), dur, limit),
        });
      }
    }
    const periodEvents = events
      .filter((e) => e.periodIndex === i)
      .map((event) => ({ event, sec: (event.presentationTime - event.presentationTimeOffset) / event.timescale }));
    const ref: DashPeriodRef = { name: id ?? `period-${i}`, startSec: start, renditions, events: periodEvents };
    if (!current) {
      current = Number.isFinite(ast)
        ? { startSec: start, startEpochSec: ast / 1000 + start, periods: [] }
        : { startSec: start, periods: [] };
      pods.push(current);
    }
    current.periods.push(ref);
  });
  return pods;
}
