/**
 * DASH MPD inband-free events (ISO/IEC 23009-1 §5.10.2: Period/EventStream with schemeIdUri,
 * value, timescale, presentationTimeOffset; Event with presentationTime, duration, id,
 * messageData or element content, contentEncoding="base64" §5.10.2.2). Not the hot path, so the
 * MPD is read by lib/dash's MPD reader (through the one XML door: DOCTYPE refused, size and depth caps).
 * A base64 payload that decodes to an ID3 tag (e.g. scheme https://aomedia.org/emsg/ID3) is
 * parsed into its frames; anything else is reported as the event's text.
 */
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { attrOf, childElements, elementsAt, textOf } from '../xml/index.js';
import { readMpd } from '../dash/index.js';
import { id3TagLength, parseId3Tags } from './tag.js';
import { tagResults } from './tag-result.js';
import type { Id3TagResult } from './types.js';

export interface MpdEvent {
  /** Id of the Period holding the EventStream (ad Periods look like `dai_pod-0001065804-ad-1`). */
  periodId?: string;
  periodIndex: number;
  schemeIdUri: string;
  value?: string;
  timescale: number;
  presentationTimeOffset: number;
  presentationTime: number;
  duration?: number;
  id?: string;
  /** The `messageData` attribute, else the element's content (text, or its child elements as XML). */
  messageData: string;
  contentEncoding?: string;
}

const B64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

function num(el: Element, name: string, dflt: number): number {
  const v = Number(attrOf(el, name));
  return Number.isFinite(v) && attrOf(el, name)?.trim() ? v : dflt;
}

function content(ev: Element): string {
  const message = attrOf(ev, 'messageData');
  if (message !== undefined) return message;
  const kids = childElements(ev);
  if (!kids.length) return textOf(ev);
  const ser = new XMLSerializer();
  return kids.map((k) => ser.serializeToString(k)).join('');
}

/** Every Event of every Period's EventStream, in document order; an unreadable MPD gives none. */
export function mpdEvents(mpd: string): MpdEvent[] {
  let root;
  try {
    root = readMpd(mpd)?.root;
  } catch {
    return [];
  }
  return root ? mpdEventsOf(root) : [];
}

/** mpdEvents of an MPD already read (lib/dash readMpd), so a caller that reads its Periods too parses it once. */
export function mpdEventsOf(root: Element): MpdEvent[] {
  const out: MpdEvent[] = [];
  elementsAt(root, 'Period').forEach((period, periodIndex) => {
    for (const stream of childElements(period, 'EventStream')) {
      const schemeIdUri = attrOf(stream, 'schemeIdUri') ?? '';
      const timescale = num(stream, 'timescale', 1) || 1;
      const presentationTimeOffset = num(stream, 'presentationTimeOffset', 0);
      for (const ev of childElements(stream, 'Event')) {
        const e: MpdEvent = {
          periodIndex,
          schemeIdUri,
          timescale,
          presentationTimeOffset,
          presentationTime: num(ev, 'presentationTime', 0),
          messageData: content(ev),
        };
        const set = <K extends keyof MpdEvent>(k: K, v: MpdEvent[K] | undefined) => v !== undefined && (e[k] = v);
        set('periodId', attrOf(period, 'id'));
        set('value', attrOf(stream, 'value'));
        set('id', attrOf(ev, 'id'));
        set('contentEncoding', attrOf(ev, 'contentEncoding'));
        if (attrOf(ev, 'duration') !== undefined) e.duration = num(ev, 'duration', 0);
        out.push(e);
      }
    }
  });
  return out;
}

/**
 * The event as result tags: the frames of its ID3 tag when its payload is base64 of one, else
 * one tag whose value is the message text; either way at the event's own time and timescale.
 */
export function mpdEventTags(e: MpdEvent): Id3TagResult[] {
  const time = { timescale: e.timescale, presentation_time: e.presentationTime };
  const text = e.messageData.trim();
  if (text && B64.test(text)) {
    const bytes = Buffer.from(text, 'base64');
    if (id3TagLength(bytes)) {
      const tags = tagResults(parseId3Tags(bytes), time);
      if (tags.length) return tags;
    }
    if (e.contentEncoding === 'base64') return [{ value: text, data: bytes.toString('base64'), metadata: time }];
  }
  return [{ value: e.messageData, metadata: time }];
}

/**
 * Index of the segment whose [start, start + duration) holds `time` (all in one timescale), or
 * -1. Starts are taken in order; a time exactly on a boundary belongs to the later segment.
 */
export function segmentIndexAt(time: number, starts: readonly number[], durations: readonly number[]): number {
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i]!;
    const d = durations[i] ?? 0;
    if (time >= s && time < s + d) return i;
  }
  return -1;
}
