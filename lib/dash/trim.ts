/**
 * Live window and live-edge delay for DASH MPDs (spec rule 7; docs/design.md §4), the counterpart of
 * lib/hls/trim.ts, on the MPD text: one tag scan records offsets, a handful of splices make the
 * output; everything not edited is copied byte for byte. Only `type="dynamic"` MPDs are trimmed.
 *
 * SegmentTimeline (ISO/IEC 23009-1 §5.3.9.6), last Period only:
 * - Segments are counted on a reference timeline, the one with the longest segments (ties: the
 *   first): drop its last `delaySegments`, then keep its last `windowSegments` — never less than
 *   three of its longest segments of content (HLS keeps three target durations, RFC 8216 §6.2.2).
 * - Every timeline is cut at the reference's cut times (period time), keeping a segment when its
 *   midpoint is inside: audio and video keep the same span even when their segment durations
 *   differ (counting per timeline would desynchronise their live edges), and a timeline on the
 *   reference's grid keeps exactly the same count.
 * - S runs are split by rewriting `t`/`r` (the first kept S always states `t`); `startNumber`
 *   advances by the segments dropped from the head (§5.3.9.5.3: the first S is number
 *   startNumber). `presentationTimeOffset`, `availabilityStartTime` and Period@start stay: kept
 *   segments keep their media times, and those attributes only map media time to wall-clock time
 *   (§5.3.9.2, §5.3.1.2), so changing any of them would move the kept segments.
 * - The delay is the dropped tail, and the MPD says so where players compute the live edge:
 *   `suggestedPresentationDelay` (and ServiceDescription/Latency) grow by the dropped span, since
 *   dash.js aims at the wall clock minus that delay, not at the timeline's end (issue 30.1;
 *   raisePresentationDelay below).
 * - `timeShiftBufferDepth` (measured back from the wall-clock now, i.e. the untrimmed end) becomes
 *   the kept window plus the delayed tail when the head was cut; it is only ever lowered.
 * - `r="-1"` followed by an S with `t` repeats up to that `t` and is split like any run. A last S
 *   with `r="-1"` repeats until the wall clock (the MPD does not say how far), so that timeline is
 *   treated like a `@duration` template (below); so is a timeline that cannot be read.
 *
 * SegmentTemplate@duration / SegmentList@duration (no timeline in the last Period): the player
 * computes the live edge from the wall clock, so the segments are not touched:
 * `suggestedPresentationDelay` grows by delaySegments × duration and `timeShiftBufferDepth` is
 * lowered to (max(windowSegments, 3) + delay) × duration. SegmentBase has no segments to count.
 * A Period with both kinds is trimmed by its timelines only (the MPD-level delay would apply twice).
 *
 * Earlier Periods are left whole: the lowered timeShiftBufferDepth already keeps players out of
 * them, and their ids must stay for MPD patches and period continuity. MPD-level PatchLocation is
 * removed when anything changed: patches are made against the upstream MPD and would re-add what
 * was trimmed, so a trimmed MPD must be refetched whole (§5.15).
 */
import type { MpdResult } from './rewrite.js';
import { formatIsoDuration, parseXsDuration } from './duration.js';
import { attrValue, intAt, isWs, readSAttrs, sAttrs, TagScan, uintAt, valueEnd } from './scan.js';

export interface MpdTrimOptions {
  windowSegments: number;
  delaySegments: number;
  /**
   * How long after the upstream answered the result may still be served (the proxy's micro-cache,
   * ≤ 1 s): its timeline then trails the upstream's by up to that much, so a raised delay covers
   * it too, or dash.js reaches the end of the timeline it holds before its next MPD update.
   */
  servedForSec?: number;
}

/** The S runs of the last Period's timelines, in parallel arrays reused between calls (the scan and its use run synchronously). */
class Runs {
  length = 0;
  sStart = new Int32Array(256);
  sEnd = new Int32Array(256);
  nameEnd = new Int32Array(256);
  tAt = new Int32Array(256);
  rAt = new Int32Array(256);
  nAt = new Int32Array(256);
  t = new Float64Array(256);
  d = new Float64Array(256);
  r = new Float64Array(256);
  count = new Float64Array(256);

  reset(): void {
    if (this.sStart.length > 65_536) Object.assign(this, new Runs()); // do not keep a huge MPD's arrays
    this.length = 0;
  }

  push(): number {
    if (this.length === this.sStart.length) {
      for (const k of ['sStart', 'sEnd', 'nameEnd', 'tAt', 'rAt', 'nAt'] as const) {
        const a = new Int32Array(this.length * 2);
        a.set(this[k]);
        this[k] = a;
      }
      for (const k of ['t', 'd', 'r', 'count'] as const) {
        const a = new Float64Array(this.length * 2);
        a.set(this[k]);
        this[k] = a;
      }
    }
    return this.length++;
  }
}
const runs = new Runs();

interface Template {
  nameEnd: number;
  openEnd: number;
  selfClose: boolean;
  timescale: number;
  pto: number;
  startNumber: number;
  /** Offset of the own startNumber value, -1 when inherited. */
  startNumberAt: number;
  duration: number;
  timeline: Timeline | undefined;
  /** The enclosing level's template (Period → AdaptationSet → Representation inheritance, §5.3.9.2). */
  outer: Template | undefined;
}

interface Timeline {
  tpl: Template;
  from: number;
  to: number;
  n: number;
  timescale: number;
  pto: number;
  /** Longest segment, in ticks. */
  maxD: number;
  /** Not trimmable: open-ended (last S r=-1) or unreadable. */
  opaque: boolean;
  /** Nested templates that inherit this timeline but state their own startNumber. */
  dependents: Template[];
}

function inherited(tpl: Template | undefined, pick: (t: Template) => number): number {
  for (let x = tpl; x; x = x.outer) {
    const v = pick(x);
    if (!Number.isNaN(v)) return v;
  }
  return NaN;
}

function outerTimeline(tpl: Template): Timeline | undefined {
  for (let x = tpl.outer; x; x = x.outer) if (x.timeline) return x.timeline;
  return undefined;
}

/** Counts each run (resolving r="-1" against the next S's t) and checks the timeline can be trimmed. */
function finishTimeline(tl: Timeline): void {
  let t = 0;
  for (let i = tl.from; i < tl.to; i++) {
    const d = runs.d[i]!;
    if (runs.tAt[i]! >= 0) t = runs.t[i]!;
    runs.t[i] = t;
    const r = runs.r[i]!;
    if (!(d > 0) || Number.isNaN(t) || Number.isNaN(r) || r < -1) tl.opaque = true;
    let count = r + 1;
    if (r === -1) {
      // §5.3.9.6: repeat until the next S's t; the last S repeats until the wall clock.
      const next = i + 1 < tl.to && runs.tAt[i + 1]! >= 0 ? runs.t[i + 1]! : NaN;
      count = Math.ceil((next - t) / d);
      if (!(count > 0)) {
        tl.opaque = true;
        count = 1;
      }
    }
    runs.count[i] = count;
    tl.n += count;
    if (d > tl.maxD) tl.maxD = d;
    t += d * count;
  }
  if (!(tl.timescale > 0) || Number.isNaN(tl.pto) || tl.n === 0) tl.opaque = true;
}

/** Segments i…n-1 from the end: the largest k whose last k durations sum to at most budget ticks. */
function lastWithin(tl: Timeline, budget: number): number {
  let k = 0;
  for (let j = tl.to - 1; j >= tl.from; j--) {
    const d = runs.d[j]!;
    const c = runs.count[j]!;
    if (d * c <= budget) {
      budget -= d * c;
      k += c;
    } else return k + Math.floor(budget / d);
  }
  return k;
}

/** The smallest m such that the m segments ending at index `end` (exclusive) hold at least min ticks (Infinity when none do). */
function needed(tl: Timeline, end: number, min: number): number {
  let c0 = tl.n;
  let m = 0;
  let sum = 0;
  for (let j = tl.to - 1; j >= tl.from; j--) {
    const c = runs.count[j]!;
    c0 -= c;
    const avail = Math.min(c, end - c0); // segments of run j before `end`
    if (avail <= 0) continue;
    const d = runs.d[j]!;
    if (sum + avail * d >= min) return m + Math.ceil((min - sum) / d);
    sum += avail * d;
    m += avail;
  }
  return Infinity;
}

/** Start time (ticks) of segment i; i === n gives the end of the last. */
function startTicks(tl: Timeline, i: number): number {
  let c0 = 0;
  for (let j = tl.from; j < tl.to; j++) {
    const c = runs.count[j]!;
    if (i < c0 + c || j === tl.to - 1) return runs.t[j]! + (i - c0) * runs.d[j]!;
    c0 += c;
  }
  return 0;
}

/** Index of the first segment whose midpoint is at or after cut (ticks). */
function firstFrom(tl: Timeline, cut: number): number {
  let c0 = 0;
  for (let j = tl.from; j < tl.to; j++) {
    const c = runs.count[j]!;
    const d = runs.d[j]!;
    const mid0 = runs.t[j]! + d / 2;
    if (mid0 + (c - 1) * d >= cut) return c0 + Math.max(0, Math.ceil((cut - mid0) / d));
    c0 += c;
  }
  return tl.n;
}

/** The exact t of run j plus extra ticks, in digits (BigInt beyond 2^53: epoch times at 10 MHz exceed it). */
function exactT(s: string, tl: Timeline, j: number, extra: number): string {
  let i = j;
  while (i > tl.from && runs.tAt[i]! < 0) i--;
  const approx = runs.t[j]! + extra;
  if (Number.isSafeInteger(approx) && (runs.tAt[i]! < 0 || Number.isSafeInteger(runs.t[i]!))) return String(approx);
  let v = runs.tAt[i]! >= 0 ? BigInt(s.slice(runs.tAt[i], valueEnd(s, runs.tAt[i]!))) : 0n;
  for (let k = i; k < j; k++) v += BigInt(runs.d[k]!) * BigInt(runs.count[k]!);
  return String(v + BigInt(extra));
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

function wsBefore(s: string, at: number): number {
  while (at > 0 && isWs(s.charCodeAt(at - 1))) at--;
  return at;
}

/** An edit setting attribute `name`: its value replaced, or the attribute added before the tag's end. */
function setAttr(
  s: string,
  edits: Edit[],
  valueAt: number,
  tagEnd: number,
  selfClose: boolean,
  name: string,
  value: string,
): void {
  if (valueAt >= 0) edits.push({ start: valueAt, end: valueEnd(s, valueAt), text: value });
  else {
    const at = wsBefore(s, selfClose ? tagEnd - 2 : tagEnd - 1);
    edits.push({ start: at, end: at, text: ` ${name}="${value}"` });
  }
}

/** Edits for one timeline keeping segments [a, b). */
function cutTimeline(s: string, tl: Timeline, a: number, b: number, edits: Edit[]): void {
  let ja = -1;
  let jb = -1;
  let ka = 0;
  let kb = 0;
  let c0 = 0;
  for (let j = tl.from; j < tl.to; j++) {
    const c = runs.count[j]!;
    if (ja < 0 && a < c0 + c) {
      ja = j;
      ka = a - c0;
    }
    if (b - 1 < c0 + c) {
      jb = j;
      kb = b - 1 - c0;
      break;
    }
    c0 += c;
  }
  if (ja > tl.from) edits.push({ start: wsBefore(s, runs.sStart[tl.from]!), end: runs.sEnd[ja - 1]!, text: '' });
  if (jb < tl.to - 1) edits.push({ start: wsBefore(s, runs.sStart[jb + 1]!), end: runs.sEnd[tl.to - 1]!, text: '' });
  const d = runs.d[ja]!;
  if (a > 0) {
    const tAt = runs.tAt[ja]!;
    const tv = exactT(s, tl, ja, ka * d);
    if (tAt >= 0) edits.push({ start: tAt, end: valueEnd(s, tAt), text: tv });
    else edits.push({ start: runs.nameEnd[ja]!, end: runs.nameEnd[ja]!, text: ` t="${tv}"` });
    const nAt = runs.nAt[ja]!;
    if (ka > 0 && nAt >= 0) edits.push({ start: nAt, end: valueEnd(s, nAt), text: String(uintAt(s, nAt) + ka) });
  }
  const setR = (j: number, keep: number) => {
    const rAt = runs.rAt[j]!;
    if (rAt >= 0 && (keep !== runs.count[j] || runs.r[j] === -1))
      edits.push({ start: rAt, end: valueEnd(s, rAt), text: String(keep - 1) });
  };
  if (ja === jb) setR(ja, kb - ka + 1);
  else {
    setR(ja, runs.count[ja]! - ka);
    // An r="-1" in the middle stays valid (the next kept S has t); at the new end it must be explicit.
    setR(jb, kb + 1);
  }
  if (a > 0) {
    const tpl = tl.tpl;
    const sn = inherited(tpl, (x) => x.startNumber);
    setAttr(
      s,
      edits,
      tpl.startNumberAt,
      tpl.openEnd,
      tpl.selfClose,
      'startNumber',
      String((Number.isNaN(sn) ? 1 : sn) + a),
    );
    for (const dep of tl.dependents)
      edits.push({ start: dep.startNumberAt, end: valueEnd(s, dep.startNumberAt), text: String(dep.startNumber + a) });
  }
}

/** What the scan of a dynamic MPD found. */
interface Scanned {
  mpdNameEnd: number;
  mpdEnd: number;
  mpdSelfClose: boolean;
  timelines: Timeline[];
  /** Longest @duration segment (seconds) of the last Period's templates and lists without a timeline. */
  wallClockDuration: number;
  patchLocations: Edit[];
  /** Offsets of MPD-level ServiceDescription/Latency @target, @min and @max values (milliseconds). */
  latency: number[];
}

function scanMpd(s: string): Scanned | undefined {
  const tag = new TagScan(s);
  while (tag.next()) if (tag.element && !tag.close) break;
  if (!tag.element || tag.close || !tag.is('MPD')) return undefined;
  const out: Scanned = {
    mpdNameEnd: tag.nameEnd,
    mpdEnd: tag.end,
    mpdSelfClose: tag.selfClose,
    timelines: [],
    wallClockDuration: 0,
    patchLocations: [],
    latency: [],
  };
  const typeAt = tag.attr('type');
  if (typeAt < 0 || !s.startsWith('dynamic', typeAt) || valueEnd(s, typeAt) !== typeAt + 7) return out;
  runs.reset();
  // Levels: 0 Period, 1 AdaptationSet, 2 Representation; the template in force at each.
  const level = [false, false, false];
  const tpls: (Template | undefined)[] = [undefined, undefined, undefined];
  let tpl: Template | undefined;
  let timeline: Timeline | undefined;
  let inList = 0;
  let patchStart = -1;
  const closeLevel = (lv: number) => {
    level[lv] = false;
    tpls[lv] = undefined;
  };
  const innermost = () => (level[2] ? 2 : level[1] ? 1 : level[0] ? 0 : -1);
  const wallClock = (duration: number, timescale: number) => {
    const sec = duration / (timescale > 0 ? timescale : 1);
    if (sec > out.wallClockDuration) out.wallClockDuration = sec;
  };
  const endTemplate = (x: Template) => {
    if (x.timeline) return;
    const outer = outerTimeline(x);
    if (outer) {
      if (x.startNumberAt >= 0 && !Number.isNaN(x.startNumber)) outer.dependents.push(x);
    } else {
      const d = inherited(x, (y) => y.duration);
      if (d > 0)
        wallClock(
          d,
          inherited(x, (y) => y.timescale),
        );
    }
  };
  while (tag.next()) {
    if (!tag.element) continue;
    if (tag.close) {
      if (tag.is('S')) {
        if (timeline && runs.length > timeline.from) runs.sEnd[runs.length - 1] = tag.end;
      } else if (tag.is('SegmentTimeline')) {
        if (timeline) finishTimeline(timeline);
        timeline = undefined;
      } else if (tag.is('SegmentTemplate')) {
        if (tpl) endTemplate(tpl);
        tpl = undefined;
      } else if (tag.is('SegmentList')) inList = Math.max(0, inList - 1);
      else if (tag.is('Representation')) closeLevel(2);
      else if (tag.is('AdaptationSet')) closeLevel(1);
      else if (tag.is('Period')) closeLevel(0);
      else if (tag.is('PatchLocation') && patchStart >= 0) {
        out.patchLocations.push({ start: wsBefore(s, patchStart), end: tag.end, text: '' });
        patchStart = -1;
      }
      continue;
    }
    if (tag.is('S')) {
      if (!timeline) continue;
      const i = runs.push();
      runs.sStart[i] = tag.start;
      runs.sEnd[i] = tag.end;
      runs.nameEnd[i] = tag.nameEnd;
      readSAttrs(s, tag.nameEnd, tag.end);
      const tAt = (runs.tAt[i] = sAttrs.t);
      const rAt = (runs.rAt[i] = sAttrs.r);
      runs.nAt[i] = sAttrs.n;
      runs.t[i] = tAt >= 0 ? uintAt(s, tAt) : 0;
      runs.d[i] = uintAt(s, sAttrs.d);
      runs.r[i] = rAt >= 0 ? intAt(s, rAt) : 0;
      timeline.to = i + 1;
    } else if (tag.is('SegmentTimeline')) {
      if (tag.selfClose || !tpl || inList || timeline) continue;
      timeline = {
        tpl,
        from: runs.length,
        to: runs.length,
        n: 0,
        timescale: inherited(tpl, (x) => x.timescale),
        pto: inherited(tpl, (x) => x.pto),
        maxD: 0,
        opaque: false,
        dependents: [],
      };
      if (Number.isNaN(timeline.timescale)) timeline.timescale = 1;
      if (Number.isNaN(timeline.pto)) timeline.pto = 0;
      tpl.timeline = timeline;
      out.timelines.push(timeline);
    } else if (tag.is('SegmentTemplate')) {
      const lv = innermost();
      if (lv < 0) continue;
      const snAt = tag.attr('startNumber');
      const x: Template = {
        nameEnd: tag.nameEnd,
        openEnd: tag.end,
        selfClose: tag.selfClose,
        timescale: uintAt(s, tag.attr('timescale')),
        pto: uintAt(s, tag.attr('presentationTimeOffset')),
        startNumber: uintAt(s, snAt),
        startNumberAt: snAt,
        duration: uintAt(s, tag.attr('duration')),
        timeline: undefined,
        outer: lv > 0 ? (tpls[lv - 1] ?? tpls[0]) : undefined,
      };
      tpls[lv] = x;
      if (tag.selfClose) endTemplate(x);
      else tpl = x;
    } else if (tag.is('SegmentList')) {
      const d = uintAt(s, tag.attr('duration'));
      if (d > 0) wallClock(d, uintAt(s, tag.attr('timescale')));
      if (!tag.selfClose) inList++;
    } else if (tag.is('Representation')) level[2] = !tag.selfClose;
    else if (tag.is('AdaptationSet')) level[1] = !tag.selfClose;
    else if (tag.is('Period')) {
      // A new Period: only the last one's timelines are trimmed.
      level[0] = !tag.selfClose;
      level[1] = level[2] = false;
      tpls[0] = tpls[1] = tpls[2] = tpl = timeline = undefined;
      out.timelines = [];
      out.wallClockDuration = 0;
      runs.reset();
    } else if (tag.is('PatchLocation') && innermost() < 0) patchStart = tag.start;
    else if (tag.is('Latency') && innermost() < 0) {
      for (const name of ['target', 'min', 'max']) {
        const at = tag.attr(name);
        if (at >= 0) out.latency.push(at);
      }
    }
  }
  // Open-ended (r="-1" last) timelines run on the wall clock like @duration templates.
  for (const tl of out.timelines) if (tl.opaque && tl.maxD > 0 && tl.timescale > 0) wallClock(tl.maxD, tl.timescale);
  return out;
}

function mpdAttr(s: string, m: Scanned, name: string): number {
  return attrValue(s, m.mpdNameEnd, m.mpdEnd, name);
}

/** Lowers MPD@timeShiftBufferDepth to sec (never raises it). */
function lowerTsbd(s: string, m: Scanned, sec: number, edits: Edit[]): void {
  const at = mpdAttr(s, m, 'timeShiftBufferDepth');
  const old = at >= 0 ? parseXsDuration(s.slice(at, valueEnd(s, at))) : NaN;
  if (!(old <= sec))
    setAttr(s, edits, at, m.mpdEnd, m.mpdSelfClose, 'timeShiftBufferDepth', formatIsoDuration(sec, 'ceil'));
}

function timelineEdits(s: string, m: Scanned, window: number, delay: number, lateSec: number, edits: Edit[]): boolean {
  const usable = m.timelines.filter((tl) => !tl.opaque);
  if (!usable.length) return false;
  let ref = usable[0]!;
  for (const tl of usable) if (tl.maxD / tl.timescale > ref.maxD / ref.timescale) ref = tl;
  const n = ref.n;
  const minContent = 3 * ref.maxD;
  let total = 0;
  for (let j = ref.from; j < ref.to; j++) total += runs.d[j]! * runs.count[j]!;
  delay = Math.min(delay, n - 1, Math.max(0, lastWithin(ref, total - minContent)));
  const remaining = n - delay;
  let start = 0;
  if (window > 0 && window < remaining) {
    start = remaining - window;
    start = Math.max(0, Math.min(start, remaining - needed(ref, remaining, minContent)));
  }
  if (start === 0 && delay === 0) return false;
  // Cuts in period time (seconds); each timeline keeps the segments whose midpoint lies inside.
  const toSec = (tl: Timeline, ticks: number) => (ticks - tl.pto) / tl.timescale;
  const from = start > 0 ? toSec(ref, startTicks(ref, start)) : -Infinity;
  const edge =
    delay > 0 ? toSec(ref, startTicks(ref, remaining - 1) + runs.d[lastRunOf(ref, remaining - 1)]!) : Infinity;
  let changed = false;
  for (const tl of usable) {
    const a = firstFrom(tl, from * tl.timescale + tl.pto);
    const b = firstFrom(tl, edge * tl.timescale + tl.pto);
    if (b <= a || (a === 0 && b === tl.n)) continue; // a timeline the window misses is left whole rather than emptied
    cutTimeline(s, tl, a, b, edits);
    changed = true;
  }
  if (changed && start > 0) lowerTsbd(s, m, toSec(ref, startTicks(ref, n)) - from, edits);
  if (changed && delay > 0)
    raisePresentationDelay(s, m, toSec(ref, startTicks(ref, n)) - edge, lateSec, (3 * ref.maxD) / ref.timescale, edits);
  return changed;
}

/**
 * The removed tail in the MPD's timing (issue 30.1). dash.js aims at the wall-clock edge
 * (availabilityStartTime + now) minus its live delay, which it takes from
 * ServiceDescription/Latency@target, else @suggestedPresentationDelay (PlaybackController
 * computeAndSetLiveDelay; TimelineConverter derives the DVR window's end from the wall clock, not
 * the timeline, unless calcFromSegmentTimeline is set): without this it aims `removedSec` past the
 * trimmed timeline's end and stalls until the timeline reaches it. Both delays grow by the
 * removed span; a @suggestedPresentationDelay the upstream did not state starts from three of the
 * longest segments (what HLS holds back, RFC 8216 §6.3.3) rather than from zero, which would aim
 * at the very end of the timeline. `lateSec` (MpdTrimOptions.servedForSec) is added as well: the
 * timeline dash.js holds is up to that much older than the upstream's. Segment times,
 * availabilityStartTime and publishTime stay: nothing is re-timed or re-encoded.
 */
function raisePresentationDelay(
  s: string,
  m: Scanned,
  removedSec: number,
  lateSec: number,
  defaultSec: number,
  edits: Edit[],
): void {
  if (!(removedSec > 0)) return;
  removedSec += lateSec;
  const at = mpdAttr(s, m, 'suggestedPresentationDelay');
  const old = at >= 0 ? parseXsDuration(s.slice(at, valueEnd(s, at))) : NaN;
  setAttr(
    s,
    edits,
    at,
    m.mpdEnd,
    m.mpdSelfClose,
    'suggestedPresentationDelay',
    formatIsoDuration((old >= 0 ? old : defaultSec) + removedSec, 'ceil'),
  );
  raiseLatency(s, m, removedSec, edits);
}

/** ServiceDescription/Latency (ms), which dash.js prefers to @suggestedPresentationDelay, grows by the same delay. */
function raiseLatency(s: string, m: Scanned, sec: number, edits: Edit[]): void {
  for (const a of m.latency) {
    const ms = uintAt(s, a);
    if (ms >= 0) edits.push({ start: a, end: valueEnd(s, a), text: String(Math.ceil(ms + sec * 1000)) });
  }
}

function lastRunOf(tl: Timeline, i: number): number {
  let c0 = 0;
  for (let j = tl.from; j < tl.to; j++) {
    c0 += runs.count[j]!;
    if (i < c0) return j;
  }
  return tl.to - 1;
}

function wallClockEdits(s: string, m: Scanned, window: number, delay: number, lateSec: number, edits: Edit[]): boolean {
  const dur = m.wallClockDuration;
  if (!(dur > 0)) return false;
  const tsbdAt = mpdAttr(s, m, 'timeShiftBufferDepth');
  const tsbd = tsbdAt >= 0 ? parseXsDuration(s.slice(tsbdAt, valueEnd(s, tsbdAt))) : NaN;
  // Leave three segments inside the time-shift buffer, as HLS keeps three target durations.
  if (tsbd >= 0) delay = Math.min(delay, Math.max(0, Math.floor(tsbd / dur - 3 + 1e-9)));
  let changed = false;
  if (delay > 0) {
    const at = mpdAttr(s, m, 'suggestedPresentationDelay');
    const old = at >= 0 ? parseXsDuration(s.slice(at, valueEnd(s, at))) : 0;
    setAttr(
      s,
      edits,
      at,
      m.mpdEnd,
      m.mpdSelfClose,
      'suggestedPresentationDelay',
      formatIsoDuration((old >= 0 ? old : 0) + delay * dur + lateSec, 'ceil'),
    );
    raiseLatency(s, m, delay * dur + lateSec, edits);
    changed = true;
  }
  if (window > 0) {
    const sec = (Math.max(window, 3) + delay) * dur;
    if (!(tsbd <= sec)) {
      lowerTsbd(s, m, sec, edits);
      changed = true;
    }
  }
  return changed;
}

/**
 * Applies the live window (windowSegments > 0) and the live-edge delay to a dynamic MPD; static
 * MPDs and window 0 / delay 0 return the input itself. valid is false when the text has no MPD root.
 */
export function trimMpdWindow(mpd: string, opts: MpdTrimOptions): MpdResult {
  const window = Math.max(0, Math.floor(opts.windowSegments) || 0);
  const delay = Math.max(0, Math.floor(opts.delaySegments) || 0);
  const late = Math.max(0, opts.servedForSec ?? 0) || 0;
  const m = scanMpd(mpd);
  if (!m) return { valid: false, text: mpd };
  if (window === 0 && delay === 0) return { valid: true, text: mpd };
  const edits: Edit[] = [];
  const changed = m.timelines.some((tl) => !tl.opaque)
    ? timelineEdits(mpd, m, window, delay, late, edits)
    : wallClockEdits(mpd, m, window, delay, late, edits);
  if (!changed) return { valid: true, text: mpd };
  edits.push(...m.patchLocations);
  edits.sort((x, y) => x.start - y.start);
  let text = '';
  let pos = 0;
  for (const e of edits) {
    if (e.start < pos) continue; // cannot happen for well-formed input; never splice twice
    text += mpd.slice(pos, e.start) + e.text;
    pos = e.end;
  }
  return { valid: true, text: text + mpd.slice(pos) };
}
