/**
 * VAST/VMAP text through the one XML door (lib/xml): its callers (wrapper resolution, the VAST and
 * VMAP readers, their tests) tell an ad document's refusal by `AdXmlError` and its code, so the
 * door's XmlError is rethrown as one; the DOM helpers are the door's own.
 */
import type { Document } from '@xmldom/xmldom';
import { parseXml as parseXmlDoc, XmlError, type ParseXmlOptions, type XmlErrorCode } from '../xml/index.js';

// The door's DOM helpers and caps; parseXml below is the ads' own (a local export wins over a star export).
export * from '../xml/index.js';

export type AdXmlErrorCode = XmlErrorCode;

/** An XmlError raised while reading an ad document (a subclass, so `instanceof XmlError` holds too). */
export class AdXmlError extends XmlError {
  override name = 'AdXmlError';
}

/** Parses ad-server XML; throws AdXmlError for anything that is not a small, DOCTYPE-free, well-formed document. */
export function parseXml(text: string, opts: ParseXmlOptions = {}): Document {
  try {
    return parseXmlDoc(text, opts);
  } catch (err) {
    if (err instanceof XmlError) throw new AdXmlError(err.code, err.message);
    throw err;
  }
}
