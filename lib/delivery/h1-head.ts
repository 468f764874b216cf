/**
 * The byte-level checks of an HTTP/1.x response head that the upstream client runs on every
 * response (issue 31: the head is read per distinct request, so a regular expression with a
 * backtracking entry per byte, `toLowerCase` copies and `Number` of slices cost more than the rest
 * of the parse). Each function states the grammar it accepts; test/delivery/h1-head.test.ts holds
 * them to the regular expressions they replace, and h1-pool-differential.test.ts to llhttp.
 */

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const HTTP_1 = [0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e]; // "HTTP/1."

function table(accepts: (byte: number) => boolean): Uint8Array {
  const t = new Uint8Array(256);
  for (let b = 0; b < 256; b++) t[b] = accepts(b) ? 1 : 0;
  return t;
}

/** tchar (RFC 9110 §5.6.2): the bytes of a field name. */
const TCHAR = table(
  (b) =>
    (b >= 0x30 && b <= 0x39) ||
    (b >= 0x41 && b <= 0x5a) ||
    (b >= 0x61 && b <= 0x7a) ||
    "!#$%&'*+-.^_`|~".includes(String.fromCharCode(b)),
);
/** A field value's bytes as llhttp's strict mode takes them: HTAB, SP to `~`, obs-text (RFC 9110 §5.5). */
const VALUE = table((b) => b === HTAB || (b >= SP && b <= 0x7e) || b >= 0x80);

const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;

/**
 * Whether buf[from, end) is a whole response head as llhttp's strict mode takes it (RFC 9112 §2.1,
 * §4, §5), end being just past its blank line: `HTTP/1.0` or `HTTP/1.1`, SP, a 3-digit status, an
 * optional SP and reason free of CR and LF, CRLF; then lines of a token name, `:` and a value of
 * VALUE bytes, each ended CRLF; then CRLF. A bare LF or CR, obs-fold (a line starting with
 * whitespace), a space before the colon or a 4-digit status fail it.
 */
export function validHead(buf: Uint8Array, from: number, end: number): boolean {
  if (end - from < 16) return false; // "HTTP/1.1 200" CRLF CRLF
  for (let k = 0; k < 7; k++) if (buf[from + k] !== HTTP_1[k]) return false;
  const minor = buf[from + 7];
  if (minor !== 0x30 && minor !== 0x31) return false;
  if (buf[from + 8] !== SP || !isDigit(buf[from + 9]) || !isDigit(buf[from + 10]) || !isDigit(buf[from + 11]))
    return false;
  let p = from + 12;
  if (buf[p] === SP) while (p < end && buf[p] !== CR && buf[p] !== LF) p++;
  if (buf[p] !== CR || buf[p + 1] !== LF) return false;
  p += 2;
  const blank = end - 2;
  while (p < blank) {
    const name = p;
    while (p < blank && TCHAR[buf[p]!] === 1) p++;
    if (p === name || buf[p] !== 0x3a) return false;
    p++;
    while (p < blank && VALUE[buf[p]!] === 1) p++;
    if (buf[p] !== CR || buf[p + 1] !== LF) return false;
    p += 2;
  }
  return p === blank && buf[p] === CR && buf[p + 1] === LF;
}

/** The 3-digit status of a head validHead accepted (its text from the start of the status line). */
export function statusOf(text: string): number {
  return (text.charCodeAt(9) - 0x30) * 100 + (text.charCodeAt(10) - 0x30) * 10 + (text.charCodeAt(11) - 0x30);
}

/**
 * Whether text[from, to) is the field name `lower` (given in lower case) in any case (RFC 9110
 * §5.1), without making a string. A byte of a valid name ORed with 0x20 is a lower-case letter only
 * when it was that letter in either case, and is `-` only when it was `-`.
 */
export function nameIs(text: string, from: number, to: number, lower: string): boolean {
  if (to - from !== lower.length) return false;
  for (let k = 0; k < lower.length; k++) if ((text.charCodeAt(from + k) | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

/**
 * A Content-Length value between the colon and the CR as llhttp takes it: leading SP/HTAB, 1 to 15
 * digits, trailing SP only (RFC 9110 §8.6); -1 when it is not one.
 */
export function contentLength(text: string, from: number, to: number): number {
  let p = from;
  while (p < to && (text.charCodeAt(p) === SP || text.charCodeAt(p) === HTAB)) p++;
  const digits = p;
  let n = 0;
  for (let c = text.charCodeAt(p); p < to && c >= 0x30 && c <= 0x39; c = text.charCodeAt(++p)) n = n * 10 + (c - 0x30);
  if (p === digits || p - digits > 15) return -1;
  while (p < to && text.charCodeAt(p) === SP) p++;
  return p === to ? n : -1;
}
