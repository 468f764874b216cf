/**
 * String-based MPD rewriting for the DAI proxy (no DOM on the hot path): absolute DAI-host URLs in
 * `Location` and `PatchLocation` point back at the service, so manifest refreshes come through the
 * proxy; segment URLs are never proxied, so an MPD-level `BaseURL` is made absolute (or added) so
 * relative segment URLs resolve against the upstream, not against the proxy's URL; root-relative
 * segment URLs are the content's and get the content origin (spec rule 6, issue 25).
 */
import { UriRewriter, type UriRules } from '../hls/uris.js';

export interface MpdResult {
  valid: boolean;
  text: string;
}

/** Elements that follow BaseURL among the MPD's children (ISO/IEC 23009-1 MPD type sequence). */
const AFTER_BASEURL = [
  'Location',
  'PatchLocation',
  'ServiceDescription',
  'InitializationSet',
  'InitializationGroup',
  'InitializationPresentation',
  'ContentProtection',
  'Period',
];

function openTag(xml: string, name: string, from: number): number {
  // Matches <Name> or <Name attr…> or <prefix:Name…>, not <NameSuffix.
  for (let i = xml.indexOf(name, from); i !== -1; i = xml.indexOf(name, i + 1)) {
    const before = xml[i - 1];
    const after = xml[i + name.length];
    if (
      (before === '<' || before === ':') &&
      (after === '>' || after === ' ' || after === '\t' || after === '\n' || after === '\r' || after === '/')
    ) {
      if (inComment(xml, i)) continue;
      if (before === '<') return i - 1;
      // <prefix:Name…>, not the closing </prefix:Name> nor `x:Name ` in text.
      const lt = xml.lastIndexOf('<', i);
      if (lt !== -1 && NAME.test(xml.slice(lt + 1, i - 1))) return lt;
    }
  }
  return -1;
}

const NAME = /^[A-Za-z_][\w.-]*$/;

/** Comments and CDATA sections of the last text looked at, [starts[k], ends[k]) in order, from one forward scan. */
let sectionsOf: { xml: string; starts: number[]; ends: number[] } | undefined;

function sections(xml: string): { xml: string; starts: number[]; ends: number[] } {
  if (sectionsOf?.xml === xml) return sectionsOf;
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = xml.indexOf('<!'); i !== -1;) {
    const end = xml.startsWith('<!--', i) ? '-->' : xml.startsWith('<![CDATA[', i) ? ']]>' : undefined;
    if (end === undefined) {
      i = xml.indexOf('<!', i + 2);
      continue;
    }
    const close = xml.indexOf(end, i + 4);
    starts.push(i);
    ends.push(close === -1 ? xml.length : close + end.length);
    i = close === -1 ? -1 : xml.indexOf('<!', close + end.length);
  }
  return (sectionsOf = { xml, starts, ends });
}

/** Whether offset i falls inside a comment or CDATA section (`<!-- <Period> -->` is not an element). */
function inComment(xml: string, i: number): boolean {
  const { starts, ends } = sections(xml);
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! < i) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && ends[lo - 1]! > i;
}

/** Applies fn to the text of every `name` element between from and to. */
function mapElementText(xml: string, name: string, to: number, fn: (text: string) => string): string {
  let out = '';
  let pos = 0;
  for (let start = openTag(xml, name, 0); start !== -1 && start < to; start = openTag(xml, name, pos)) {
    const gt = xml.indexOf('>', start);
    if (gt === -1 || xml[gt - 1] === '/') break;
    let close = xml.indexOf('</', gt);
    while (close !== -1 && inComment(xml, close)) close = xml.indexOf('</', close + 2);
    if (close === -1) break;
    const raw = xml.slice(gt + 1, close);
    const text = raw.trim();
    const mapped = text.includes('<') ? mapCdata(text, fn) : text ? fn(text) : text;
    out += xml.slice(pos, gt + 1) + (mapped === text ? raw : mapped);
    pos = close;
  }
  return out + xml.slice(pos);
}

/** Text in one CDATA section is mapped inside it; other markup in an element's text (comments, a mix) is left alone. */
function mapCdata(text: string, fn: (text: string) => string): string {
  if (!text.startsWith('<![CDATA[') || text.indexOf(']]>') !== text.length - 3) return text;
  const value = text.slice(9, -3).trim();
  const mapped = value ? fn(value) : value;
  return mapped === value ? text : `<![CDATA[${mapped}]]>`;
}

export function rewriteMpd(xml: string, rules: UriRules): MpdResult {
  const mpdStart = openTag(xml, 'MPD', 0);
  if (mpdStart === -1) return { valid: false, text: xml };
  const uris = new UriRewriter(rules);
  const mpdOpenEnd = xml.indexOf('>', mpdStart) + 1;
  const firstPeriod = openTag(xml, 'Period', mpdOpenEnd);
  const mpdLevelEnd = firstPeriod === -1 ? xml.length : firstPeriod;

  let text = mapElementText(xml, 'Location', mpdLevelEnd, (u) => uris.master(u));
  text = mapElementText(text, 'PatchLocation', openTagOr(text, 'Period', mpdOpenEnd), (u) => uris.master(u));
  const levelEnd = openTagOr(text, 'Period', mpdOpenEnd);
  const baseUrl = openTag(text, 'BaseURL', mpdOpenEnd);
  if (baseUrl !== -1 && baseUrl < levelEnd) {
    text = mapElementText(text, 'BaseURL', levelEnd, (u) => uris.media(u));
  } else {
    // No MPD-level BaseURL: relative segment URLs would resolve against the proxy. Pin them upstream.
    const base = uris.media('./').replace(/&/g, '&amp;');
    // Without a Period, before the MPD's closing tag; a self-closing MPD has no segments to pin.
    const end = levelEnd < text.length ? levelEnd : rootCloseTag(text, mpdOpenEnd);
    if (end !== -1) {
      const insertAt = Math.min(
        ...AFTER_BASEURL.map((n) => openTag(text, n, mpdOpenEnd)).filter((i) => i !== -1 && i <= end),
        end,
      );
      text = `${text.slice(0, insertAt)}<BaseURL>${base}</BaseURL>${text.slice(insertAt)}`;
    }
  }
  return { valid: true, text: pinContentSegments(text, rules.contentOrigin) };
}

/** A root-relative value of an attribute that names a segment, an initialization segment or an index (ISO/IEC 23009-1 §5.3.9). */
const SEGMENT_ATTR = /(?<=\s)(media|initialization|sourceURL|index)\s*=\s*["']\/(?!\/)/g;

/**
 * Spec rule 6, as the HLS rewrite does it: a root-relative segment URL is the content's, fetched
 * from the content origin. Resolved against a BaseURL on the DAI host (the MPD-level one, or the
 * one pinned upstream above), `/content/seg_1.m4s` would reach the DAI host; made absolute on the
 * content origin it resolves the same under any BaseURL (RFC 3986 §5.2). Absolute URLs (DAI ad
 * segments) and relative ones (resolved upstream, like HLS's document-relative URIs) stay.
 */
function pinContentSegments(xml: string, origin: string): string {
  if (!origin) return xml;
  const prefix = origin.replace(/&/g, '&amp;');
  const rootRelative = (v: string) => v.charCodeAt(0) === 47 && v.charCodeAt(1) !== 47;
  // BaseURL elements below the MPD level (Period, AdaptationSet, Representation).
  const text = mapElementText(xml, 'BaseURL', xml.length, (u) => (rootRelative(u) ? prefix + u : u));
  return text.replace(SEGMENT_ATTR, (m: string, _name: string, at: number) =>
    inComment(text, at) ? m : m.slice(0, -1) + prefix + '/',
  );
}

/** Offset of the MPD's closing tag (`</MPD>`, `</prefix:MPD >`), or -1. */
function rootCloseTag(xml: string, from: number): number {
  const at = xml.lastIndexOf('</');
  return at >= from && /^<\/([A-Za-z_][\w.-]*:)?MPD\s*>/.test(xml.slice(at, at + 80)) ? at : -1;
}

function openTagOr(xml: string, name: string, from: number): number {
  const i = openTag(xml, name, from);
  return i === -1 ? xml.length : i;
}
