/**
 * Splits a chunked text stream into lines. A chunk may end anywhere: inside a line, between the
 * CR and LF of a CRLF, or inside a multi-byte UTF-8 character (byte chunks go through a
 * StringDecoder). Line terminators are LF or CRLF (RFC 8216 §4.1).
 */
import { StringDecoder } from 'node:string_decoder';

export class LineSplitter {
  private carry = '';
  private readonly decoder = new StringDecoder('utf8');

  /** Calls onLine for every line completed by this chunk (without its terminator). */
  push(chunk: string | Uint8Array, onLine: (line: string) => void): void {
    const text = this.carry + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      onLine(text.slice(start, end));
      start = nl + 1;
    }
    this.carry = start === 0 ? text : text.slice(start);
  }

  /** Flushes the last line when the input did not end with a terminator. */
  end(onLine: (line: string) => void): void {
    let rest = this.carry + this.decoder.end();
    this.carry = '';
    if (rest.endsWith('\r')) rest = rest.slice(0, -1);
    if (rest.length) onLine(rest);
  }
}

/** The tag name of a `#EXT…` line: `#EXTINF:5,` → `#EXTINF`. */
export function tagName(line: string): string {
  const colon = line.indexOf(':');
  return colon === -1 ? line : line.slice(0, colon);
}

/** The value of a tag line after its colon. */
export function tagValue(line: string): string {
  const colon = line.indexOf(':');
  return colon === -1 ? '' : line.slice(colon + 1);
}

/**
 * Rewrites the quoted `URI="…"` attribute of a tag line with fn; the rest of the line is kept byte
 * for byte. Quoted strings cannot contain quotes (RFC 8216 §4.2), so the next quote ends the value.
 */
export function mapUriAttribute(line: string, fn: (uri: string) => string): string {
  let at = line.indexOf('URI="');
  // Make sure we matched the attribute name URI, not the tail of e.g. SERVER-URI.
  while (at > 0 && line[at - 1] !== ':' && line[at - 1] !== ',') at = line.indexOf('URI="', at + 5);
  if (at === -1) return line;
  const start = at + 5;
  const end = line.indexOf('"', start);
  if (end === -1) return line;
  const uri = line.slice(start, end);
  const mapped = fn(uri);
  return mapped === uri ? line : line.slice(0, start) + mapped + line.slice(end);
}

/** Reads one attribute value (unquoted) from an attribute list: `DURATION=30` or `ID="x"`. */
export function attribute(list: string, name: string): string | undefined {
  let at = list.indexOf(`${name}=`);
  while (at > 0 && list[at - 1] !== ',' && list[at - 1] !== ':' && list[at - 1] !== ' ') at = list.indexOf(`${name}=`, at + 1);
  if (at === -1) return undefined;
  let start = at + name.length + 1;
  if (list[start] === '"') {
    const end = list.indexOf('"', ++start);
    return end === -1 ? undefined : list.slice(start, end);
  }
  const end = list.indexOf(',', start);
  return list.slice(start, end === -1 ? undefined : end).trim();
}
