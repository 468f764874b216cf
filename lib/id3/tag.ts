/**
 * Our own ID3v2 reader (ID3v2.4 structure §3–4, ID3v2.3 §3, ID3v2.2 §3), not mux.js's: that one
 * stops at a zero-size frame, decodes only UTF-8, reads v2.3 frame sizes as syncsafe and drops a
 * second tag in one PES (docs/design.md §8). Every read is bounds-checked: bytes that are not a tag
 * give no tag, truncated frames are dropped, nothing throws.
 */
import { decodeText, terminatorAt, terminatorLength } from './text.js';
import type { Id3Frame, Id3Tag } from './types.js';

const HEADER = 10;

function syncsafe(buf: Buffer, at: number): number {
  return (
    ((buf[at]! & 0x7f) << 21) | ((buf[at + 1]! & 0x7f) << 14) | ((buf[at + 2]! & 0x7f) << 7) | (buf[at + 3]! & 0x7f)
  );
}

/** Total length (header, body, footer) of a valid ID3v2 tag header at `at`, else 0. */
export function id3TagLength(buf: Buffer, at = 0): number {
  if (at < 0 || at + HEADER > buf.length) return 0;
  if (buf[at] !== 0x49 || buf[at + 1] !== 0x44 || buf[at + 2] !== 0x33) return 0;
  const version = buf[at + 3]!;
  if (version < 2 || version > 4 || buf[at + 4] === 0xff) return 0;
  for (let i = 6; i < 10; i++) if (buf[at + i]! & 0x80) return 0; // §3.1: size is syncsafe
  const footer = version === 4 && buf[at + 5]! & 0x10 ? HEADER : 0;
  return HEADER + syncsafe(buf, at + 6) + footer;
}

/** Undo unsynchronisation (§6.1): every 0xFF 0x00 pair was written for a lone 0xFF. */
function deUnsync(b: Buffer): Buffer {
  if (b.indexOf(0xff) < 0) return b;
  const out = Buffer.allocUnsafe(b.length);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    out[n++] = b[i]!;
    if (b[i] === 0xff && b[i + 1] === 0x00) i++;
  }
  return out.subarray(0, n);
}

function stripNuls(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0) end--;
  return end === s.length ? s : s.slice(0, end);
}

const VALID_ID4 = /^[A-Z0-9]{4}$/;
const VALID_ID3 = /^[A-Z0-9]{3}$/;

/** Decode a frame body by its id (§4.2; v2.2 ids TXX, WXX, COM, T??, W?? alike): text, user text, URL, user URL, PRIV, COMM; else binary. */
export function decodeFrame(id: string, body: Buffer): Id3Frame {
  const enc = body[0] ?? 0;
  const encOk = enc <= 3 && body.length > 0;
  if ((id === 'TXXX' || id === 'TXX' || id === 'WXXX' || id === 'WXX') && encOk) {
    const descEnd = terminatorAt(body, 1, body.length, enc);
    const description = decodeText(body, 1, descEnd, enc);
    const from = Math.min(body.length, descEnd + terminatorLength(enc));
    // WXXX: the URL itself is always ISO-8859-1.
    const value =
      id[0] === 'W'
        ? body.toString('latin1', from).split('\0')[0]!
        : stripNuls(decodeText(body, from, body.length, enc));
    return { id, description, value };
  }
  if (id[0] === 'T' && encOk) {
    const values: string[] = [];
    for (let p = 1; p < body.length;) {
      const end = terminatorAt(body, p, body.length, enc);
      values.push(decodeText(body, p, end, enc));
      p = end + terminatorLength(enc);
    }
    while (values.length > 1 && values[values.length - 1] === '') values.pop();
    return { id, value: values.join('/') };
  }
  if (id[0] === 'W') return { id, value: body.toString('latin1').split('\0')[0]! };
  if (id === 'PRIV') {
    const end = terminatorAt(body, 0, body.length, 0);
    return {
      id,
      description: body.toString('latin1', 0, end),
      data: Buffer.from(body.subarray(Math.min(body.length, end + 1))),
    };
  }
  if ((id === 'COMM' || id === 'COM') && encOk && body.length >= 4) {
    const descEnd = terminatorAt(body, 4, body.length, enc);
    const from = Math.min(body.length, descEnd + terminatorLength(enc));
    return {
      id,
      description: decodeText(body, 4, descEnd, enc),
      value: stripNuls(decodeText(body, from, body.length, enc)),
    };
  }
  return { id, data: Buffer.from(body) };
}

/** Frames of a v2.2 body: id(3) size(3), no flags. */
function framesV22(body: Buffer): Id3Frame[] {
  const out: Id3Frame[] = [];
  for (let p = 0; p + 6 <= body.length;) {
    if (body[p] === 0) break; // padding
    const id = body.toString('latin1', p, p + 3);
    if (!VALID_ID3.test(id)) break;
    const size = (body[p + 3]! << 16) | (body[p + 4]! << 8) | body[p + 5]!;
    p += 6;
    if (size === 0) continue;
    if (p + size > body.length) break;
    out.push(decodeFrame(id, body.subarray(p, p + size)));
    p += size;
  }
  return out;
}

/**
 * Frames of a v2.3/v2.4 body: id(4) size(4) flags(2). Sizes are syncsafe only in v2.4 (§4.1);
 * some v2.4 writers still put plain sizes, recognisable by a byte with its top bit set.
 */
function framesV23(body: Buffer, version: number, unsyncAll: boolean): Id3Frame[] {
  const out: Id3Frame[] = [];
  for (let p = 0; p + HEADER <= body.length;) {
    if (body[p] === 0) break; // padding
    const id = body.toString('latin1', p, p + 4);
    if (!VALID_ID4.test(id)) break;
    const plain = body.readUInt32BE(p + 4);
    const size = version === 4 && (plain & 0x80808080) === 0 ? syncsafe(body, p + 4) : plain;
    const fmt = body[p + 9]!;
    p += HEADER;
    if (size === 0) continue; // zero-size frames are invalid (§4) but harmless: skip, keep going
    if (p + size > body.length) break;
    let data = body.subarray(p, p + size);
    p += size;
    let opaque = false;
    if (version === 4) {
      // §4.1.2: grouping id (1), encryption method (1), data length indicator (4), in that order.
      const skip = (fmt & 0x40 ? 1 : 0) + (fmt & 0x04 ? 1 : 0) + (fmt & 0x01 ? 4 : 0);
      data = data.subarray(Math.min(skip, data.length));
      if (fmt & 0x02 || unsyncAll) data = deUnsync(data);
      opaque = (fmt & 0x0c) !== 0;
    } else {
      // v2.3 §3.3.1: decompressed size (4), encryption method (1), group id (1).
      const skip = (fmt & 0x80 ? 4 : 0) + (fmt & 0x40 ? 1 : 0) + (fmt & 0x20 ? 1 : 0);
      data = data.subarray(Math.min(skip, data.length));
      opaque = (fmt & 0xc0) !== 0;
    }
    out.push(opaque ? { id, data: Buffer.from(data) } : decodeFrame(id, data));
  }
  return out;
}

/** The tag at `at`, or undefined when there is no valid header there. A truncated tag keeps its whole frames. */
export function parseId3Tag(buf: Buffer, at = 0): Id3Tag | undefined {
  const total = id3TagLength(buf, at);
  if (!total) return undefined;
  const version = buf[at + 3]!;
  const flags = buf[at + 5]!;
  const bodyEnd = Math.min(buf.length, at + HEADER + syncsafe(buf, at + 6));
  let body = buf.subarray(at + HEADER, bodyEnd);
  if (version === 2) {
    if (flags & 0x40) return { version, frames: [] }; // v2.2 compression: no scheme was ever defined
    return { version, frames: framesV22(flags & 0x80 ? deUnsync(body) : body) };
  }
  // v2.3 unsynchronises the whole body, extended header included; v2.4 frame by frame (§6.1).
  if (version === 3 && flags & 0x80) body = deUnsync(body);
  if (flags & 0x40 && body.length >= 4) {
    // Extended header: v2.3 size excludes its own 4 bytes (plain); v2.4 size is syncsafe and includes them.
    const ext = version === 3 ? 4 + body.readUInt32BE(0) : syncsafe(body, 0);
    body = body.subarray(Math.min(ext, body.length));
  }
  return { version, frames: framesV23(body, version, version === 4 && (flags & 0x80) !== 0) };
}

/** Every tag stored back to back from `at` (a PES or an emsg payload may hold several). */
export function parseId3Tags(buf: Buffer, at = 0): Id3Tag[] {
  const out: Id3Tag[] = [];
  try {
    for (let p = at; ;) {
      const len = id3TagLength(buf, p);
      if (!len) break;
      out.push(parseId3Tag(buf, p)!);
      p += len;
    }
  } catch {
    // Bounds are checked above; this is the last line of "garbage never throws".
  }
  return out;
}
