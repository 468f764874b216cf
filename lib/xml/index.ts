/**
 * The one way XML text becomes a DOM (docs/design.md §7 "XML"), for VAST/VMAP (lib/ads) and the MPD
 * reader off the hot path (lib/dash/mpd.ts): @xmldom/xmldom ≥ 0.9.12 behind a
 * byte cap, a DOCTYPE refusal made before the parser sees the text (no entity expansion, no
 * billion laughs), every xmldom error or fatal error turned into an XmlError, and a depth cap.
 * Its own folder and error type (issue 28 item 3), so an MPD's error is not an ad's and the formats
 * that read XML do not import lib/ads.
 * Ad servers and VMAP files often use prefixes they never declare (`vmap:`, `xsi:`): xmldom 0.9
 * treats that as fatal, so such prefixes are declared for it with placeholder namespaces, and the
 * helpers below match elements by local name whatever their prefix or namespace.
 */
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';

export type XmlErrorCode = 'too-large' | 'doctype' | 'malformed';

export class XmlError extends Error {
  override name = 'XmlError';
  constructor(
    readonly code: XmlErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ParseXmlOptions {
  /** Size cap in UTF-8 bytes (default 2 MiB). */
  maxBytes?: number;
  /** Element nesting cap (default 64; VAST needs about 10). */
  maxDepth?: number;
}

export const XML_MAX_BYTES = 2 * 1024 * 1024;
export const XML_MAX_DEPTH = 64;

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;

/** True when a DOCTYPE comes before the root element (only the prolog is scanned: CDATA may quote one). */
function doctypeInProlog(s: string): boolean {
  for (let i = 0; ;) {
    const lt = s.indexOf('<', i);
    if (lt < 0) return false;
    if (s.startsWith('<?', lt)) {
      const end = s.indexOf('?>', lt + 2);
      if (end < 0) return false;
      i = end + 2;
    } else if (s.startsWith('<!--', lt)) {
      const end = s.indexOf('-->', lt + 4);
      if (end < 0) return false;
      i = end + 3;
    } else {
      return s.slice(lt, lt + 9).toUpperCase() === '<!DOCTYPE';
    }
  }
}

/** Every prefix used on an element or attribute name, so undeclared ones can be given a namespace. */
function prefixesUsed(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /[<\s/]([A-Za-z_][\w.-]*):[A-Za-z_]/g;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const p = m[1]!;
    if (p !== 'xml' && p !== 'xmlns' && !(p in out)) out[p] = `urn:undeclared-prefix:${p}`;
  }
  return out;
}

function checkDepth(doc: Document, maxDepth: number): void {
  // Iterative walk: a recursive one could overflow the stack on the very input the cap is for.
  const stack: Array<[Node, number]> = [[doc, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > maxDepth) throw new XmlError('too-large', `XML nested deeper than ${maxDepth} elements`);
    for (let c = node.firstChild; c; c = c.nextSibling) if (c.nodeType === ELEMENT_NODE) stack.push([c, depth + 1]);
  }
}

/** Parses XML; throws XmlError for anything that is not a small, DOCTYPE-free, well-formed document. */
export function parseXml(text: string, opts: ParseXmlOptions = {}): Document {
  if (typeof text !== 'string') throw new XmlError('malformed', 'XML input is not text');
  const maxBytes = opts.maxBytes ?? XML_MAX_BYTES;
  // A UTF-16 code unit is at least one UTF-8 byte, so the cheap length test settles most cases.
  if (text.length > maxBytes || Buffer.byteLength(text, 'utf8') > maxBytes)
    throw new XmlError('too-large', `XML larger than ${maxBytes} bytes`);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (doctypeInProlog(text)) throw new XmlError('doctype', 'XML with a DOCTYPE is refused');

  let first: string | undefined;
  const parser = new DOMParser({
    locator: false,
    xmlns: prefixesUsed(text),
    onError: (level, msg) => {
      if (level === 'warning') return;
      first ??= msg;
      throw new XmlError('malformed', msg);
    },
  });
  let doc: Document;
  try {
    doc = parser.parseFromString(text, 'text/xml');
  } catch (err) {
    throw new XmlError('malformed', `malformed XML: ${first ?? (err as Error).message}`);
  }
  if (!doc.documentElement) throw new XmlError('malformed', 'malformed XML: no root element');
  checkDepth(doc, opts.maxDepth ?? XML_MAX_DEPTH);
  return doc;
}

/** Local name whatever the prefix, declared or not. */
export function localNameOf(node: Node): string {
  if (node.localName) return node.localName;
  const name = node.nodeName;
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/** The root element of a document, or the element itself. */
export function rootOf(x: Document | Element): Element | null {
  return x.nodeType === ELEMENT_NODE ? (x as Element) : (x as Document).documentElement;
}

/** Element children, optionally only those with one of the local names. */
export function childElements(parent: Node, ...names: string[]): Element[] {
  const out: Element[] = [];
  for (let c = parent.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === ELEMENT_NODE && (names.length === 0 || names.includes(localNameOf(c)))) out.push(c as Element);
  }
  return out;
}

/** The first element child with one of the local names. */
export function childElement(parent: Node, ...names: string[]): Element | undefined {
  for (let c = parent.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === ELEMENT_NODE && names.includes(localNameOf(c))) return c as Element;
  }
  return undefined;
}

/** Follows a path of local names (`'Creatives', 'Creative'`) and returns every element at its end, in document order. */
export function elementsAt(parent: Node, ...path: string[]): Element[] {
  let level: Node[] = [parent];
  for (const name of path) level = level.flatMap((n) => childElements(n, name));
  return level as Element[];
}

/** The trimmed text of an element's own text and CDATA children (comments and child elements skipped). */
export function textOf(el: Node | undefined): string {
  if (!el) return '';
  let s = '';
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === TEXT_NODE || c.nodeType === CDATA_SECTION_NODE) s += c.nodeValue ?? '';
  }
  return s.trim();
}

/** An attribute by name, falling back to any attribute with that local name; undefined when absent. */
export function attrOf(el: Element, name: string): string | undefined {
  const v = el.getAttribute(name);
  if (v !== null) return v;
  const attrs = el.attributes;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs.item(i);
    if (a && localNameOf(a) === name) return a.value;
  }
  return undefined;
}

/** A boolean attribute (`true`/`false`, `1`/`0`, any case); undefined when absent or unreadable. */
export function boolAttr(el: Element, name: string): boolean | undefined {
  const v = attrOf(el, name)?.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return undefined;
}

/** A non-negative number attribute rounded to an integer (`bitrate="849.5"` happens); undefined when absent or not a number. */
export function intAttr(el: Element, name: string): number | undefined {
  const v = attrOf(el, name)?.trim();
  if (!v || !/^\d+(\.\d*)?$/.test(v)) return undefined;
  const n = Math.round(Number(v));
  return Number.isSafeInteger(n) ? n : undefined;
}
