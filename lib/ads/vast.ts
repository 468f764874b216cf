/**
 * VAST 2.0, 3.0 and 4.x documents to plain data: per `<Ad>` either its `<InLine>` linear creatives
 * or its `<Wrapper>` redirect with the impressions and tracking to merge into the ad it leads to
 * (VAST 4.1 §2.4.3.4). Only what a server-side squeeze needs is read: companions, non-linear
 * creatives, icons, verification and extensions are skipped. VAST 1 (`<VideoAdServingTemplate>`,
 * `<Video>`) parses to ads without linear creatives. Element names match by local name, so a default
 * namespace (`xmlns="http://www.iab.com/VAST"`) or a prefix changes nothing.
 */
import type { Document, Element } from '@xmldom/xmldom';
import {
  AdXmlError,
  attrOf,
  boolAttr,
  childElement,
  childElements,
  elementsAt,
  intAttr,
  localNameOf,
  parseXml,
  rootOf,
  textOf,
  type ParseXmlOptions,
} from './xml.js';

export interface VastMediaFile {
  uri: string;
  type?: string;
  width?: number;
  height?: number;
  /** kbit/s, as VAST gives it. */
  bitrate?: number;
  delivery?: string;
  apiFramework?: string;
}

/** A creative's registered identifier (VAST 4 `<UniversalAdId>`): the registry and the id in it. */
export interface UniversalAdId {
  idRegistry: string;
  idValue: string;
}

export interface VastLinear {
  creativeId?: string;
  /** The creative's first reliable `<UniversalAdId>` (VAST 4); absent when none or only "unknown". */
  universalAdId?: UniversalAdId;
  sequence?: number;
  /** 0 when `<Duration>` is missing or unreadable. */
  durationSec: number;
  mediaFiles: VastMediaFile[];
  /** Tracking URLs by `event` attribute (all events, not only the quartiles). */
  tracking: Record<string, string[]>;
  clickThrough?: string;
  clickTrackings: string[];
}

export interface VastInline {
  adSystem?: string;
  title?: string;
  impressions: string[];
  errors: string[];
  linears: VastLinear[];
}

export interface VastWrapper {
  /** `<VASTAdTagURI>` (VAST 2+) or the VAST 1 `<VASTAdTagURL><URL>`; may be relative; undefined when missing. */
  vastAdTagUri?: string;
  adSystem?: string;
  impressions: string[];
  errors: string[];
  /** Tracking of the wrapper's linear creatives (and a VAST 1 `<TrackingEvents>`), by event. */
  tracking: Record<string, string[]>;
  clickTrackings: string[];
  /** VAST 4 wrapper attributes; undefined when absent. */
  followAdditionalWrappers?: boolean;
  allowMultipleAds?: boolean;
  fallbackOnNoAd?: boolean;
}

export interface VastAd {
  /** `<Ad id>`, '' when absent. */
  id: string;
  /** `<Ad sequence>`: set on ads of a pod, absent on stand-alone ads. */
  sequence?: number;
  inline?: VastInline;
  wrapper?: VastWrapper;
}

export interface VastDocument {
  version: string;
  ads: VastAd[];
  /** Root-level `<Error>` URLs (a no-ad answer carries them). */
  errors: string[];
}

const VAST_ROOTS = ['VAST', 'VideoAdServingTemplate'];

/** `HH:MM:SS`, `HH:MM:SS.mmm` (VAST time format); a bare number of seconds is accepted too. Undefined otherwise. */
export function parseVastDuration(s: string | undefined): number | undefined {
  const t = s?.trim();
  if (!t) return undefined;
  const m = /^(\d{1,3}):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/.exec(t);
  if (m) {
    const sec = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
    return Number.isFinite(sec) ? sec : undefined;
  }
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  return undefined;
}

/** Seconds as VAST `HH:MM:SS.mmm`. */
export function formatVastDuration(sec: number): string {
  const ms = Math.max(0, Math.round((Number.isFinite(sec) ? sec : 0) * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

function texts(parent: Element, name: string): string[] {
  return childElements(parent, name)
    .map(textOf)
    .filter((u) => u.length > 0);
}

function opt(s: string | undefined): string | undefined {
  const t = s?.trim();
  return t ? t : undefined;
}

function addTracking(into: Record<string, string[]>, trackingEvents: Element[]): void {
  for (const te of trackingEvents) {
    for (const tr of childElements(te, 'Tracking')) {
      const event = attrOf(tr, 'event')?.trim();
      const url = textOf(tr);
      if (event && url) (into[event] ??= []).push(url);
    }
  }
}

function mediaFile(el: Element): VastMediaFile | undefined {
  const uri = textOf(el);
  if (!uri) return undefined;
  const f: VastMediaFile = { uri };
  const type = opt(attrOf(el, 'type'));
  const delivery = opt(attrOf(el, 'delivery'));
  const apiFramework = opt(attrOf(el, 'apiFramework'));
  const width = intAttr(el, 'width');
  const height = intAttr(el, 'height');
  const bitrate = intAttr(el, 'bitrate');
  if (type) f.type = type;
  if (width !== undefined) f.width = width;
  if (height !== undefined) f.height = height;
  if (bitrate !== undefined) f.bitrate = bitrate;
  if (delivery) f.delivery = delivery;
  if (apiFramework) f.apiFramework = apiFramework;
  return f;
}

function linear(creative: Element, lin: Element): VastLinear {
  const out: VastLinear = {
    durationSec: parseVastDuration(textOf(childElement(lin, 'Duration'))) ?? 0,
    mediaFiles: elementsAt(lin, 'MediaFiles', 'MediaFile')
      .map(mediaFile)
      .filter((f): f is VastMediaFile => f !== undefined),
    tracking: {},
    clickTrackings: [],
  };
  const creativeId = opt(attrOf(creative, 'id'));
  const sequence = intAttr(creative, 'sequence');
  if (creativeId) out.creativeId = creativeId;
  const universalAdId = universalAdIdOf(creative);
  if (universalAdId) out.universalAdId = universalAdId;
  if (sequence !== undefined) out.sequence = sequence;
  addTracking(out.tracking, childElements(lin, 'TrackingEvents'));
  const clicks = childElement(lin, 'VideoClicks');
  if (clicks) {
    const through = opt(textOf(childElement(clicks, 'ClickThrough')));
    if (through) out.clickThrough = through;
    out.clickTrackings = texts(clicks, 'ClickTracking');
  }
  return out;
}

/**
 * The first `<UniversalAdId>` of a creative that names a real id. VAST 4.0 gives the value in the
 * `idValue` attribute, 4.1 in the element's text (the attribute deprecated); either is read, the
 * text first. "unknown" in the registry or the value is VAST's own word for "no id" (4.0 §3.7.1,
 * and what our VAST writer sends), so it is not an id: two creatives saying it are not the same.
 */
function universalAdIdOf(creative: Element): UniversalAdId | undefined {
  for (const el of childElements(creative, 'UniversalAdId')) {
    const idRegistry = attrOf(el, 'idRegistry')?.trim() ?? '';
    const idValue = opt(textOf(el)) ?? attrOf(el, 'idValue')?.trim() ?? '';
    if (!idRegistry || !idValue || idRegistry.toLowerCase() === 'unknown' || idValue.toLowerCase() === 'unknown')
      continue;
    if (idRegistry.length > 256 || idValue.length > 256) continue; // hostile input: an id, not a document
    return { idRegistry, idValue };
  }
  return undefined;
}

function inline(el: Element): VastInline {
  const out: VastInline = { impressions: texts(el, 'Impression'), errors: texts(el, 'Error'), linears: [] };
  const adSystem = opt(textOf(childElement(el, 'AdSystem')));
  const title = opt(textOf(childElement(el, 'AdTitle')));
  if (adSystem) out.adSystem = adSystem;
  if (title) out.title = title;
  for (const creative of elementsAt(el, 'Creatives', 'Creative')) {
    for (const lin of childElements(creative, 'Linear')) out.linears.push(linear(creative, lin));
  }
  return out;
}

function wrapper(el: Element): VastWrapper {
  const out: VastWrapper = {
    impressions: texts(el, 'Impression'),
    errors: texts(el, 'Error'),
    tracking: {},
    clickTrackings: [],
  };
  const legacy = childElement(el, 'VASTAdTagURL');
  const uri =
    opt(textOf(childElement(el, 'VASTAdTagURI'))) ??
    (legacy && opt(textOf(childElement(legacy, 'URL')) || textOf(legacy)));
  if (uri) out.vastAdTagUri = uri;
  const adSystem = opt(textOf(childElement(el, 'AdSystem')));
  if (adSystem) out.adSystem = adSystem;
  const lins = elementsAt(el, 'Creatives', 'Creative', 'Linear');
  addTracking(out.tracking, [
    ...childElements(el, 'TrackingEvents'),
    ...lins.flatMap((l) => childElements(l, 'TrackingEvents')),
  ]);
  out.clickTrackings = lins
    .flatMap((l) => elementsAt(l, 'VideoClicks', 'ClickTracking').map(textOf))
    .filter((u) => u.length > 0);
  const follow = boolAttr(el, 'followAdditionalWrappers');
  const multiple = boolAttr(el, 'allowMultipleAds');
  const fallback = boolAttr(el, 'fallbackOnNoAd');
  if (follow !== undefined) out.followAdditionalWrappers = follow;
  if (multiple !== undefined) out.allowMultipleAds = multiple;
  if (fallback !== undefined) out.fallbackOnNoAd = fallback;
  return out;
}

/** True when the document (or element) is a VAST root. */
export function isVast(x: Document | Element): boolean {
  const root = rootOf(x);
  return !!root && VAST_ROOTS.includes(localNameOf(root));
}

/**
 * Parses a VAST document given as text (through parseXml: caps, DOCTYPE refusal), a parsed
 * document, or a `<VAST>` element (VMAP `<vmap:VASTAdData>` carries one). Throws AdXmlError when
 * the text is not acceptable XML or the root is not VAST; never for odd content inside.
 */
export function parseVast(input: string | Document | Element, opts?: ParseXmlOptions): VastDocument {
  const root = rootOf(typeof input === 'string' ? parseXml(input, opts) : input);
  if (!root || !VAST_ROOTS.includes(localNameOf(root)))
    throw new AdXmlError('malformed', `not a VAST document (root ${root ? localNameOf(root) : 'missing'})`);
  const version = localNameOf(root) === 'VideoAdServingTemplate' ? '1.0' : (attrOf(root, 'version')?.trim() ?? '');
  const ads: VastAd[] = [];
  for (const adEl of childElements(root, 'Ad')) {
    const ad: VastAd = { id: attrOf(adEl, 'id')?.trim() ?? '' };
    const sequence = intAttr(adEl, 'sequence');
    if (sequence !== undefined) ad.sequence = sequence;
    const inl = childElement(adEl, 'InLine');
    const wrp = childElement(adEl, 'Wrapper');
    if (inl) ad.inline = inline(inl);
    else if (wrp) ad.wrapper = wrapper(wrp);
    ads.push(ad);
  }
  return { version, ads, errors: texts(root, 'Error') };
}
