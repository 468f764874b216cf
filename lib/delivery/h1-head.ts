/**
 * An HTTP/1.x response head read in one pass over its bytes, as the upstream client does for every
 * response (issue 31: the head is read per distinct request; a regular expression with a
 * backtracking entry per byte, the head decoded to a string, `toLowerCase` copies and `Number` of
 * slices cost more than the rest of the response's parse). Each function states the grammar it
 * accepts; test/delivery/h1-head.test.ts holds them to the regular expressions they replaced, and
 * h1-pool-differential.test.ts holds the client to llhttp.
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

/** A view for reading four bytes at once, kept while reads come into one buffer (the pool's shared one). */
let lastView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

function viewOf(buf: Buffer): DataView<ArrayBufferLike> {
  if (lastView.buffer !== buf.buffer) lastView = new DataView(buf.buffer);
  return lastView;
}

/**
 * Where the field value starting at buf[p] ends (the first byte at or after p that is not a VALUE
 * byte, or stop); view reads buf's memory, buf[i] being view's byte at + i. Four bytes at a time
 * while none is below SP or DEL (a test per word: a byte loop cost ~20 instructions a byte in
 * TurboFan's code, and values are most of a head); the word holding HTAB or the line's CR, and the
 * tail, go byte by byte. The word test is exact ("determine if a word has a byte less than n" and
 * "has a zero byte", Sean Anderson's Bit Twiddling Hacks): bytes ≥ 0x80 pass, as VALUE lets them.
 */
function valueEnd(buf: Buffer, view: DataView<ArrayBufferLike>, at: number, p: number, stop: number): number {
  for (; p + 4 <= stop; p += 4) {
    const w = view.getInt32(at + p, true);
    const del = w ^ 0x7f7f7f7f;
    if ((((w - 0x20202020) & ~w) | ((del - 0x01010101) & ~del)) & 0x80808080) break;
  }
  while (p < stop && VALUE[buf[p]!] === 1) p++;
  return p;
}

const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;

/**
 * The one Transfer-Encoding this client reads (any other coding is refused: it would need decoding).
 * Trailing spaces but not tabs, as llhttp: it reads `chunked<TAB>` as an unknown coding.
 */
const CHUNKED = /^[\t ]*chunked *$/i;

/** What readHead found in a head. */
export interface HeadFields {
  /** The status code; -1 when the head's syntax is refused. */
  status: number;
  http10: boolean;
  /** Content-Length, or -1 when absent. */
  length: number;
  chunked: boolean;
  /** The last Connection field names `close` (in any case; false when absent). */
  connectionClose: boolean;
  /** The last Connection field names `keep-alive` (in any case; false when absent). */
  connectionKeepAlive: boolean;
  /** The Last-Modified value, trimmed, when sent. */
  lastModified: string | undefined;
  /** Why the head is refused, '' when it is not: its syntax (status -1), else the first framing fault. */
  fault: string;
}

/** One result object, reused: reads run one at a time on this thread and the caller is done with it before the next. */
const fields: HeadFields = {
  status: 0,
  http10: false,
  length: -1,
  chunked: false,
  connectionClose: false,
  connectionKeepAlive: false,
  lastModified: undefined,
  fault: '',
};

/** The last head read (when it was at most LAST_HEAD_MAX bytes), whose reading `fields` still holds. */
const LAST_HEAD_MAX = 1024;
const lastHead = Buffer.allocUnsafeSlow(LAST_HEAD_MAX);
let lastHeadLength = -1;

/**
 * Reads the response head in buf[from, end), end being just past its blank line, checking it as
 * llhttp's strict mode does (RFC 9112 §2.1, §4, §5): `HTTP/1.0` or `HTTP/1.1`, SP, a 3-digit
 * status, an optional SP and a reason free of CR and LF, CRLF; then lines of a token name, `:` and
 * a value of VALUE bytes, each ended CRLF; then CRLF. A bare LF or CR, obs-fold (a line starting
 * with whitespace), a space before the colon or a 4-digit status fail it. Of the fields only the
 * framing ones and Last-Modified are read, and only their values become strings. The result is
 * valid until the next call.
 *
 * A head the same, byte for byte, as the one before is not read again: what was read in it is the
 * answer (it depends on the bytes alone). Heads repeat whenever one upstream resource is fetched
 * many times within a second (the Date field's grain), as a playlist is by streams with distinct
 * queries (the render memo's case): reading one cost ~7,000 instructions, comparing it ~500; a
 * head that differs pays the comparison and a copy.
 */
export function readHead(buf: Buffer, from: number, end: number): HeadFields {
  const n = end - from;
  if (n === lastHeadLength && buf.compare(lastHead, 0, n, from, end) === 0) return fields;
  lastHeadLength = -1;
  parseHead(buf, from, end);
  if (n <= LAST_HEAD_MAX) {
    buf.copy(lastHead, 0, from, end);
    lastHeadLength = n;
  }
  return fields;
}

function parseHead(buf: Buffer, from: number, end: number): HeadFields {
  const f = fields;
  f.status = 0;
  f.http10 = false;
  f.length = -1;
  f.chunked = false;
  f.connectionClose = false;
  f.connectionKeepAlive = false;
  f.lastModified = undefined;
  f.fault = '';
  if (end - from < 16 || !startsHttp1(buf, from)) return refuse(f, buf, from); // "HTTP/1.1 200" CRLF CRLF
  const minor = buf[from + 7];
  if (minor !== 0x30 && minor !== 0x31) return refuse(f, buf, from);
  if (buf[from + 8] !== SP || !isDigit(buf[from + 9]) || !isDigit(buf[from + 10]) || !isDigit(buf[from + 11]))
    return refuse(f, buf, from);
  f.http10 = minor === 0x30;
  f.status = (buf[from + 9]! - 0x30) * 100 + (buf[from + 10]! - 0x30) * 10 + (buf[from + 11]! - 0x30);
  let p = from + 12;
  if (buf[p] === SP) while (p < end && buf[p] !== CR && buf[p] !== LF) p++;
  if (buf[p] !== CR || buf[p + 1] !== LF) return refuse(f, buf, from);
  p += 2;
  const blank = end - 2;
  const view = viewOf(buf);
  const at = buf.byteOffset;
  let fault = '';
  while (p < blank) {
    const name = p;
    while (p < blank && TCHAR[buf[p]!] === 1) p++;
    if (p === name || buf[p] !== 0x3a) return refuse(f, buf, from);
    const colon = p++;
    p = valueEnd(buf, view, at, p, blank);
    if (buf[p] !== CR || buf[p + 1] !== LF) return refuse(f, buf, from);
    if (!fault) fault = field(f, buf, name, colon, p);
    p += 2;
  }
  if (p !== blank || buf[p] !== CR || buf[p + 1] !== LF) return refuse(f, buf, from);
  f.fault = fault || (f.chunked && f.length !== -1 ? 'both Transfer-Encoding and Content-Length' : '');
  return f;
}

function startsHttp1(buf: Uint8Array, from: number): boolean {
  for (let k = 0; k < 7; k++) if (buf[from + k] !== HTTP_1[k]) return false;
  return true;
}

function refuse(f: HeadFields, buf: Uint8Array, from: number): HeadFields {
  f.status = -1;
  f.fault = startsHttp1(buf, from) ? 'a malformed response head' : 'the answer is not HTTP/1.x';
  return f;
}

/** Reads one field (its name in buf[name, colon), its value up to stop) into f: a framing fault, or ''. */
function field(f: HeadFields, buf: Buffer, name: number, colon: number, stop: number): string {
  if (nameIs(buf, name, colon, 'content-length')) {
    // Two Content-Length lines are refused even when equal, as llhttp does (RFC 9112 §6.3 allows either).
    const n = contentLength(buf, colon + 1, stop);
    if (n === -1 || f.length !== -1) return 'a malformed or repeated Content-Length';
    f.length = n;
  } else if (nameIs(buf, name, colon, 'transfer-encoding')) {
    const value = latin1(buf, colon + 1, stop);
    if (!CHUNKED.test(value) || f.chunked) return `an unsupported Transfer-Encoding: ${value.slice(0, 40)}`;
    f.chunked = true;
  } else if (nameIs(buf, name, colon, 'connection')) {
    f.connectionClose = holds(buf, colon + 1, stop, 'close');
    f.connectionKeepAlive = holds(buf, colon + 1, stop, 'keep-alive');
  } else if (nameIs(buf, name, colon, 'last-modified')) f.lastModified = latin1(buf, colon + 1, stop).trim();
  return '';
}

/** Whether buf[from, to) holds `lower` (ASCII, given in lower case) in any case, as a lower-cased string's `includes` finds it, without making the string. */
function holds(buf: Uint8Array, from: number, to: number, lower: string): boolean {
  for (let at = from; at + lower.length <= to; at++) {
    let k = 0;
    while (k < lower.length && asciiLower(buf[at + k]!) === lower.charCodeAt(k)) k++;
    if (k === lower.length) return true;
  }
  return false;
}

/** A–Z to a–z; every other byte as it is (a Latin-1 capital lowers to a byte no ASCII needle holds). */
const asciiLower = (b: number) => (b >= 0x41 && b <= 0x5a ? b | 0x20 : b);

function latin1(buf: Buffer, from: number, to: number): string {
  return buf.toString('latin1', from, to);
}

/**
 * Whether buf[from, to) is the field name `lower` (given in lower case) in any case (RFC 9110
 * §5.1), without making a string. A byte of a valid name ORed with 0x20 is a lower-case letter only
 * when it was that letter in either case, and is `-` only when it was `-`.
 */
export function nameIs(buf: Uint8Array, from: number, to: number, lower: string): boolean {
  if (to - from !== lower.length) return false;
  for (let k = 0; k < lower.length; k++) if ((buf[from + k]! | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

/**
 * A Content-Length value between the colon and the CR as llhttp takes it: leading SP/HTAB, 1 to 15
 * digits, trailing SP only (RFC 9110 §8.6); -1 when it is not one.
 */
export function contentLength(buf: Uint8Array, from: number, to: number): number {
  let p = from;
  while (p < to && (buf[p] === SP || buf[p] === HTAB)) p++;
  const digits = p;
  let n = 0;
  for (; p < to && isDigit(buf[p]); p++) n = n * 10 + (buf[p]! - 0x30);
  if (p === digits || p - digits > 15) return -1;
  while (p < to && buf[p] === SP) p++;
  return p === to ? n : -1;
}
