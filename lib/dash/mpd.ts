/**
 * The one MPD reader off the hot path (issue 28 item 3): ID3 inspection (pods, EventStreams), the
 * DASH stitcher and the ladder profile read MPDs through it. A document goes through the one XML
 * door (lib/xml: DOCTYPE refused, size and depth caps) and must have an `MPD` root; Period timing
 * (ISO/IEC 23009-1 §5.3.2.1) is worked out once here. What only needs the root's attributes is read
 * with the trimmer's tag scanner (./scan.ts), without a document.
 */
import type { Document, Element } from '@xmldom/xmldom';
import { attrOf, childElements, localNameOf, parseXml, rootOf } from '../xml/index.js';
import { parseIsoDuration } from './duration.js';
import { TagScan, valueEnd } from './scan.js';

/** Size cap of an MPD read as a document (VOD MPDs of a few hours with SegmentTimelines stay far below it). */
export const MPD_MAX_BYTES = 8 * 1024 * 1024;

export interface MpdDocument {
  doc: Document;
  root: Element;
}

/**
 * Parses an MPD. Throws lib/xml's XmlError when the XML is refused (too large, DOCTYPE, malformed);
 * undefined when the root element is not an MPD.
 */
export function readMpd(text: string, opts: { maxBytes?: number } = {}): MpdDocument | undefined {
  const doc = parseXml(text, { maxBytes: opts.maxBytes ?? MPD_MAX_BYTES });
  const root = rootOf(doc);
  return root && localNameOf(root) === 'MPD' ? { doc, root } : undefined;
}

/** A Period with its start and duration in seconds on the presentation's timeline. */
export interface PeriodTiming {
  el: Element;
  /** Period@start, else where the previous Period ended (0 for the first); NaN when that is unknown. */
  start: number;
  /** Period@duration, else up to the next Period's @start, else up to mediaPresentationDuration; undefined when none says. */
  duration: number | undefined;
}

/** Every Period of the MPD, in order, with its timing. */
export function periodTimings(root: Element): PeriodTiming[] {
  const periods = childElements(root, 'Period');
  const total = parseIsoDuration(attrOf(root, 'mediaPresentationDuration'));
  const out: PeriodTiming[] = [];
  let at = 0;
  periods.forEach((el, i) => {
    const start = parseIsoDuration(attrOf(el, 'start')) ?? at;
    const next = periods[i + 1];
    const nextStart = next ? parseIsoDuration(attrOf(next, 'start')) : undefined;
    const duration =
      parseIsoDuration(attrOf(el, 'duration')) ??
      (nextStart !== undefined ? nextStart - start : total !== undefined ? total - start : undefined);
    out.push({ el, start, duration });
    at = duration === undefined ? NaN : start + duration;
  });
  return out;
}

/** An attribute of the MPD root, read with the tag scanner (no document); undefined when absent or no MPD root. */
export function mpdRootAttribute(text: string, name: string): string | undefined {
  const tag = new TagScan(text);
  while (tag.next()) if (tag.element && !tag.close) break;
  if (!tag.element || tag.close || !tag.is('MPD')) return undefined;
  const at = tag.attr(name);
  return at < 0 ? undefined : text.slice(at, valueEnd(text, at));
}
