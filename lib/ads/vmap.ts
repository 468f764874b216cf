/**
 * VMAP 1.0 documents to plain data: `<vmap:VMAP>` → `<vmap:AdBreak>` (timeOffset, breakType,
 * breakId) → `<vmap:AdSource>` with either inline VAST (`<vmap:VASTAdData>`, whose element child is
 * a `<VAST>`) or an ad tag (`<vmap:AdTagURI>`), plus the break's `<vmap:TrackingEvents>`
 * (breakStart, breakEnd, error). `<vmap:CustomAdData>` and extensions are skipped. The `vmap:`
 * prefix is often undeclared or different: elements match by local name.
 */
import type { Document, Element } from '@xmldom/xmldom';
import {
  AdXmlError,
  attrOf,
  boolAttr,
  childElement,
  childElements,
  elementsAt,
  localNameOf,
  parseXml,
  rootOf,
  textOf,
  type ParseXmlOptions,
} from './xml.js';

export interface VmapAdSource {
  id?: string;
  allowMultipleAds?: boolean;
  followRedirects?: boolean;
  /** Inline VAST: the `<VAST>` element, or its text when a server wrapped it in CDATA. */
  vastXml?: Element | string;
  adTagUri?: string;
  /** `<vmap:AdTagURI templateType>` (vast1…vast4). */
  templateType?: string;
}

export interface VmapBreakTracking {
  breakStart?: string[];
  breakEnd?: string[];
  error?: string[];
}

export interface VmapBreak {
  breakId?: string;
  /** `linear`, `nonlinear`, `display`, or a comma-separated mix; '' when absent. */
  breakType: string;
  /** `start`, `end`, `HH:MM:SS(.mmm)`, `n%` or `#n`; '' when absent. */
  timeOffset: string;
  repeatAfter?: string;
  adSource?: VmapAdSource;
  tracking: VmapBreakTracking;
}

export interface VmapDocument {
  version: string;
  breaks: VmapBreak[];
}

/** True when the root element is a VMAP (a `<VAST>` root is not). */
export function isVmap(x: Document | Element): boolean {
  const root = rootOf(x);
  return !!root && localNameOf(root) === 'VMAP';
}

function opt(s: string | undefined): string | undefined {
  const t = s?.trim();
  return t ? t : undefined;
}

function adSource(el: Element): VmapAdSource {
  const out: VmapAdSource = {};
  const id = opt(attrOf(el, 'id'));
  const multiple = boolAttr(el, 'allowMultipleAds');
  const follow = boolAttr(el, 'followRedirects');
  if (id) out.id = id;
  if (multiple !== undefined) out.allowMultipleAds = multiple;
  if (follow !== undefined) out.followRedirects = follow;
  // VMAP 1.0.1 names it VASTAdData; 1.0 drafts and some servers say VASTData.
  const data = childElement(el, 'VASTAdData', 'VASTData');
  if (data) {
    const vast = childElements(data).find((c) => localNameOf(c) === 'VAST') ?? childElements(data)[0];
    const text = textOf(data);
    if (vast) out.vastXml = vast;
    else if (text.startsWith('<')) out.vastXml = text;
  }
  const tag = childElement(el, 'AdTagURI');
  const uri = opt(textOf(tag));
  if (tag && uri) {
    out.adTagUri = uri;
    const templateType = opt(attrOf(tag, 'templateType'));
    if (templateType) out.templateType = templateType;
  }
  return out;
}

function tracking(adBreak: Element): VmapBreakTracking {
  const out: VmapBreakTracking = {};
  for (const tr of elementsAt(adBreak, 'TrackingEvents', 'Tracking')) {
    const event = attrOf(tr, 'event')?.trim();
    const url = textOf(tr);
    if (url && (event === 'breakStart' || event === 'breakEnd' || event === 'error')) (out[event] ??= []).push(url);
  }
  return out;
}

/** Parses a VMAP document (text through parseXml, or parsed). Throws AdXmlError when the XML is refused or the root is not VMAP. */
export function parseVmap(input: string | Document | Element, opts?: ParseXmlOptions): VmapDocument {
  const root = rootOf(typeof input === 'string' ? parseXml(input, opts) : input);
  if (!root || localNameOf(root) !== 'VMAP')
    throw new AdXmlError('malformed', `not a VMAP document (root ${root ? localNameOf(root) : 'missing'})`);
  const breaks: VmapBreak[] = [];
  for (const el of childElements(root, 'AdBreak')) {
    const b: VmapBreak = {
      breakType: attrOf(el, 'breakType')?.trim() ?? '',
      timeOffset: attrOf(el, 'timeOffset')?.trim() ?? '',
      tracking: tracking(el),
    };
    const breakId = opt(attrOf(el, 'breakId'));
    const repeatAfter = opt(attrOf(el, 'repeatAfter'));
    const src = childElement(el, 'AdSource');
    if (breakId) b.breakId = breakId;
    if (repeatAfter) b.repeatAfter = repeatAfter;
    if (src) b.adSource = adSource(src);
    breaks.push(b);
  }
  return { version: attrOf(root, 'version')?.trim() ?? '', breaks };
}
