/**
 * ID3v2 text encodings (ID3v2.4 structure §4): 0 ISO-8859-1, 1 UTF-16 with BOM, 2 UTF-16BE,
 * 3 UTF-8. The two UTF-16 forms end strings with two NUL bytes on an even offset.
 */

/** Offset of the terminator of the string at `start` (or `end` when there is none). */
export function terminatorAt(buf: Buffer, start: number, end: number, encoding: number): number {
  if (encoding === 1 || encoding === 2) {
    for (let i = start; i + 1 < end; i += 2) if (buf[i] === 0 && buf[i + 1] === 0) return i;
    return end;
  }
  const i = buf.indexOf(0, start);
  return i < 0 || i > end ? end : i;
}

/** Width of the terminator of `encoding`. */
export function terminatorLength(encoding: number): number {
  return encoding === 1 || encoding === 2 ? 2 : 1;
}

function utf16(buf: Buffer, start: number, end: number, bigEndian: boolean): string {
  const len = (end - start) & ~1;
  if (!bigEndian) return buf.toString('utf16le', start, start + len);
  // Node has no UTF-16BE decoder: swap a copy (never the caller's bytes).
  const copy = Buffer.from(buf.subarray(start, start + len));
  return copy.swap16().toString('utf16le');
}

/** Decode `buf[start, end)` in the frame's encoding; an unknown encoding reads as ISO-8859-1. */
export function decodeText(buf: Buffer, start: number, end: number, encoding: number): string {
  if (end <= start) return '';
  switch (encoding) {
    case 1: {
      // A BOM per string; without one, big-endian (Unicode's default byte order).
      if (end - start >= 2 && buf[start] === 0xff && buf[start + 1] === 0xfe) return utf16(buf, start + 2, end, false);
      if (end - start >= 2 && buf[start] === 0xfe && buf[start + 1] === 0xff) return utf16(buf, start + 2, end, true);
      return utf16(buf, start, end, true);
    }
    case 2:
      return utf16(buf, start, end, true);
    case 3: {
      const s = buf.toString('utf8', start, end);
      return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
    }
    default:
      return buf.toString('latin1', start, end);
  }
}

/** True for text a person could read: no control characters other than tab and line ends. */
export function isPrintable(s: string): boolean {
  // eslint-disable-next-line no-control-regex
  return s.length > 0 && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(s);
}
