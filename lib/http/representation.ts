/**
 * What a CDN pulling from us expects of an answer (issue 27; docs/design.md §16; docs/decisions.md
 * "Issue 27"): a strong ETag, `If-None-Match` / `If-Modified-Since` answered 304 without a body,
 * and a gzip (or, for shared bodies, brotli) body when the client's `Accept-Encoding` takes it,
 * with `Vary: Accept-Encoding`.
 *
 * Everything is built once per body version, never per request: the ETag, the compressed bytes and
 * the header sets (identity, gzip, br, and a 304 for each once asked for) of a rendering are kept
 * with it (on the rendering, or in a WeakMap keyed on its body buffer), so a micro-cached manifest
 * is hashed and compressed once however many clients pull it, and forgotten with it. This module is
 * the one place that builds those header sets (an `X-Request-Id` or any other per-answer header
 * is added by the caller, like `Age`).
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { hasCrLf, headerBlock, type Exchange, type HeaderPair, type Headers } from './exchange.js';
import { latin1Bytes, type HttpRequest } from './uws.js';
import { sendSized } from './stream-writer.js';

/** A rendered answer: status, its own headers (Content-Type, Cache-Control), body. */
export interface Body {
  readonly status: number;
  readonly headers: Readonly<Headers>;
  readonly body: Uint8Array;
  /**
   * Where negotiate() keeps this answer's forms, on an object made with the slot (`forms:
   * undefined`: the micro-cached renderings). Others are looked up in a WeakMap by body: a WeakMap
   * entry per distinct rendering cost ~2 µs of the rig's ~40 (issue 31).
   */
  forms?: unknown;
}

/** One form of an answer, ready to write. `vary`: the answer varies by Accept-Encoding. */
export interface Variant extends Body {
  readonly vary?: boolean;
  /** Its headers as one pre-encoded pair (lib/http/exchange.ts headerBlock): one write into uWS, not one per header. */
  readonly block?: HeaderPair;
  /** The last answer head built for it (answerHead): its headers and an extra set, as bytes. */
  head?: AnswerHead | undefined;
}

/** A variant's headers and one extra set up to `X-Request-Id`, as latin1 bytes. */
interface AnswerHead {
  readonly extra: readonly HeaderPair[];
  readonly bytes: ArrayBuffer;
}

export interface FormOptions {
  /** Last-Modified (ms since the epoch): VOD and stitched answers; `If-Modified-Since` is honoured with it. */
  lastModified?: number;
  /**
   * A body many requests share (micro-cached renderings, stitched sessions, static pages):
   * compressed at level 6, since it is done once, and offered as brotli too. Others (one stream's,
   * one request's) gzip only, at level 1.
   */
  shared?: boolean;
  /** false: no ETag and no 304 (answers that are never revalidated: a per-request VAST, `no-store`). */
  validators?: false;
}

/** One encoding of a body: its 200 and, once a revalidation asked for it, its 304 (which carries that encoding's ETag). */
interface Form {
  ok: Variant;
  notModified: Variant | undefined;
}

interface Forms {
  etag: string;
  lastModifiedSec: number | undefined;
  identity: Form;
  /** undefined: not compressed yet; null: not worth it (small, or gzip did not shrink it). */
  gzip: Form | null | undefined;
  /** The same for brotli; only shared bodies ever get one. */
  br: Form | null | undefined;
  shared: boolean;
}

const EMPTY = new Uint8Array(0);
const forms = new WeakMap<Uint8Array, Forms>();

/** What an Accept-Encoding takes, as bits: gzip acceptable, br acceptable, and which one it prefers by q (none: a tie). */
const GZIP = 1;
const BR = 2;
const GZIP_FIRST = 4;
const BR_FIRST = 8;

/** Below this many bytes a body goes out as it is (COMPRESS_MIN_BYTES; gzip's 18-byte frame and the CPU do not pay). */
export const compression = { minBytes: 1024 };

/** Sets the threshold from the configuration (the composition root, once). */
export function configureCompression(minBytes: number): void {
  compression.minBytes = minBytes;
}

/**
 * The form of `r` this request gets: 304 when a validator matches, br or gzip when accepted and
 * worth it (chooseCoding), else identity. Answers other than 200 (errors) are returned as they
 * are: they carry no validators and are never compressed (small problem+json bodies).
 */
export function negotiate(
  r: Body,
  ifNoneMatch: string,
  ifModifiedSince: string,
  acceptEncoding: string,
  opts?: FormOptions,
): Variant {
  if (r.status !== 200) return r;
  const f = formsOf(r, opts);
  const form = acceptEncoding === '' ? f.identity : chooseCoding(r, f, acceptsOf(acceptEncoding));
  if (f.etag === '') return form.ok; // no validators: only the encoding is negotiated
  // RFC 9110 §13.1.3: If-Modified-Since is ignored when If-None-Match is present.
  if (
    ifNoneMatch
      ? etagMatches(ifNoneMatch, f.etag)
      : ifModifiedSince !== '' && notModifiedSince(ifModifiedSince, f.lastModifiedSec)
  )
    return (form.notModified ??= notModified(form.ok));
  return form.ok;
}

/**
 * Whether an `If-Modified-Since` can decide r's answer: a 200 with validators and a Last-Modified
 * (RFC 9110 §13.1.3: ignored where the resource has no modification date, as live playlists do).
 * The fast lane reads the header only then: a header read is a call into uWS (~250 instructions of
 * a hot answer's ~14,000, issue 31).
 */
export function honoursIfModifiedSince(r: Body, opts?: FormOptions): boolean {
  if (r.status !== 200) return false;
  const f = formsOf(r, opts);
  return f.etag !== '' && f.lastModifiedSec !== undefined;
}

/** The strong ETag of a 200 answer (what negotiate() sends). */
export function etagOf(r: Body, opts?: FormOptions): string {
  return formsOf(r, opts).etag;
}

function formsOf(r: Body, opts: FormOptions | undefined): Forms {
  const held = (r.forms as Forms | undefined) ?? forms.get(r.body);
  if (held) return held;
  const f = build(r, opts);
  if ('forms' in r && Object.isExtensible(r)) (r as { forms?: unknown }).forms = f;
  else forms.set(r.body, f);
  return f;
}

function build(r: Body, opts: FormOptions | undefined): Forms {
  // A hash of the bytes sent: a changed body (a break starting, a trim, an upstream update) always
  // has a new tag, whatever shaped it. SHA-1 through OpenSSL costs ~4 µs for a 3.7 KB playlist and
  // ~170 µs for a 1,200-segment DVR window, once per rendering (docs/decisions.md "Issue 27").
  const etag = opts?.validators === false ? '' : `"${crypto.hash('sha1', r.body, 'base64url').slice(0, 22)}"`;
  const lastModifiedSec = opts?.lastModified === undefined ? undefined : Math.floor(opts.lastModified / 1000);
  // One copy of the rendering's headers, not frozen: built per distinct rendering, and freezing
  // (and a second object for the 304 nobody may ask for) doubled the cost (issue 31).
  const headers: Headers = { ...r.headers };
  if (etag) headers['ETag'] = etag;
  if (lastModifiedSec !== undefined) headers['Last-Modified'] = new Date(lastModifiedSec * 1000).toUTCString();
  return {
    etag,
    lastModifiedSec,
    identity: form(headers, r.body),
    gzip: undefined,
    br: undefined,
    shared: opts?.shared ?? false,
  };
}

function form(headers: Headers, body: Uint8Array): Form {
  return {
    ok: { status: 200, headers, body, vary: true, block: headerBlock(headers), head: undefined },
    notModified: undefined,
  };
}

/** RFC 9110 §15.4.5: the 304 carries the validators and Cache-Control (Vary comes with the caller's extra headers). */
function notModified(ok: Variant): Variant {
  const nm: Headers = {};
  for (const name of ['ETag', 'Last-Modified', 'Cache-Control'])
    if (ok.headers[name] !== undefined) nm[name] = ok.headers[name];
  return { status: 304, headers: nm, body: EMPTY, vary: true, block: headerBlock(nm), head: undefined };
}

/**
 * Which form a request that names codings gets. The coding with the higher q wins; on a tie (the
 * usual `gzip, deflate, br`) the smaller form, so brotli goes out only where it beats gzip (on some
 * playlists of random-looking URIs it does not). A coding whose form is not worth it (small, or not
 * smaller than the body) falls back to the other, then to identity. Only shared bodies have a br form.
 */
function chooseCoding(r: Body, f: Forms, acc: number): Form {
  if (acc === 0) return f.identity;
  if (acc & GZIP_FIRST) return gzipOf(r, f) ?? (acc & BR ? brOf(r, f) : null) ?? f.identity;
  if (acc & BR_FIRST) return brOf(r, f) ?? (acc & GZIP ? gzipOf(r, f) : null) ?? f.identity;
  const br = acc & BR ? brOf(r, f) : null;
  const gz = acc & GZIP ? gzipOf(r, f) : null;
  if (br && gz) return br.ok.body.byteLength < gz.ok.body.byteLength ? br : gz;
  return br ?? gz ?? f.identity;
}

function gzipOf(r: Body, f: Forms): Form | null {
  if (f.gzip === undefined) f.gzip = gzipForm(r, f);
  return f.gzip;
}

function brOf(r: Body, f: Forms): Form | null {
  if (!f.shared) return null; // per-stream bodies: gzip only, at a fast level
  if (f.br === undefined) f.br = brForm(r, f);
  return f.br;
}

/**
 * gzip, synchronously: measured cheaper than zlib's async API for these sizes (its thread-pool
 * round trip alone is ~0.5 ms), and done once per body version (docs/decisions.md "Issue 27").
 * A strong tag names one representation (RFC 9110 §8.8.3), so the gzip form's is the identity's
 * with a `-gz` suffix (as Apache httpd does); revalidation accepts either.
 */
function gzipForm(r: Body, f: Forms): Form | null {
  if (r.body.byteLength < compression.minBytes) return null;
  const gz = compressOnce(f.etag, 'gz', () =>
    zlib.gzipSync(r.body, r.body.byteLength <= SMALL ? SMALL_OPTIONS : f.shared ? SHARED_OPTIONS : FAST_OPTIONS),
  );
  if (gz.byteLength >= r.body.byteLength) return null;
  const headers: Headers = { ...f.identity.ok.headers, 'Content-Encoding': 'gzip' };
  if (f.etag) headers['ETag'] = codingTag(f.etag, 'gz');
  return form(headers, gz);
}

/**
 * Brotli for shared bodies, once per body version, at quality 4 in text mode. Measured on the
 * fixtures (docs/decisions.md "Issue 27 (rest)"): quality 4 costs about what gzip level 6 does
 * (25 µs for a 3.4 KB live variant, 240 µs for a 127 KB DVR window) and comes out up to 55 %
 * smaller (2 % larger on playlists of random-looking URIs: gzip goes out there);
 * quality 5–6 costs 1.5–2.5× that for a few % more; 9 and up cost milliseconds. The window is cut
 * to the body (at least 64 KB): brotli's default 4 MB ring buffer alone costs ~15 µs a call.
 */
function brForm(r: Body, f: Forms): Form | null {
  const len = r.body.byteLength;
  if (len < compression.minBytes) return null;
  const br = compressOnce(f.etag, 'br', () =>
    zlib.brotliCompressSync(r.body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: len,
        [zlib.constants.BROTLI_PARAM_LGWIN]: Math.min(24, Math.max(16, Math.ceil(Math.log2(len)))),
      },
    }),
  );
  if (br.byteLength >= len) return null;
  const headers: Headers = { ...f.identity.ok.headers, 'Content-Encoding': 'br' };
  if (f.etag) headers['ETag'] = codingTag(f.etag, 'br');
  return form(headers, br);
}

const BROTLI_QUALITY = 4;

/**
 * Compressed bytes by the identity's strong tag (a hash of its bytes): renderings that are distinct
 * objects but the same bytes share one compression. Every viewer's copy of a live variant outside
 * an ad break is the same upstream playlist rewritten by the same rules, so with distinct stream
 * ids (each its own cache key) a compression per request paid zlib's set-up (~60 µs for a 3 KB
 * playlist) each time; nginx's gzip level 1 costs a fraction of that (issue 27, issue 31). Bounded
 * by count and bytes, oldest first out. An answer without validators is compressed for itself.
 */
const compressedByTag = new Map<string, Uint8Array>();
let compressedBytes = 0;
const COMPRESSED_MAX_ENTRIES = 2048;
const COMPRESSED_MAX_BYTES = 16 * 1024 * 1024;

function compressOnce(etag: string, coding: string, compress: () => Uint8Array): Uint8Array {
  if (etag === '') return compress();
  const key = etag + coding;
  let bytes = compressedByTag.get(key);
  if (bytes) return bytes;
  bytes = compress();
  compressedByTag.set(key, bytes);
  compressedBytes += bytes.byteLength;
  while (compressedByTag.size > COMPRESSED_MAX_ENTRIES || compressedBytes > COMPRESSED_MAX_BYTES) {
    const [oldest, held] = compressedByTag.entries().next().value!;
    compressedByTag.delete(oldest);
    compressedBytes -= held.byteLength;
  }
  return bytes;
}

/**
 * A live variant (a few KB) costs zlib more to set up than to compress: its default 32 KB window
 * and 128 KB hash are allocated per call. An 8 KB window and a small hash compress such a body as
 * well (nothing repeats from further back) at about half the cost (measured: 0.9 KB, ~145 → ~60 µs).
 */
const SMALL = 8 * 1024;
const SMALL_OPTIONS = Object.freeze({ level: 6, windowBits: 13, memLevel: 5 });
const SHARED_OPTIONS = Object.freeze({ level: 6 });
const FAST_OPTIONS = Object.freeze({ level: 1 });

/** A compressed form's tag: the identity's with `-gz` or `-br` (as Apache httpd does). */
function codingTag(etag: string, suffix: 'gz' | 'br'): string {
  return `${etag.slice(0, -1)}-${suffix}"`;
}

/**
 * If-None-Match: `*`, or a list of entity tags compared weakly (RFC 9110 §13.1.2); every form's
 * tag matches (the forms of one body version decode to the same bytes).
 */
export function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const stem = etag.slice(0, -1);
  for (let part of header.split(',')) {
    part = part.trim();
    if (part.startsWith('W/')) part = part.slice(2);
    if (part === etag) return true;
    // `"<stem>-gz"` or `"<stem>-br"`
    if (part.length === etag.length + 3 && part.startsWith(stem) && /^-(?:gz|br)"$/.test(part.slice(stem.length)))
      return true;
  }
  return false;
}

/** If-Modified-Since: true when the answer has a Last-Modified no later than the date (an unparsable date is ignored). */
export function notModifiedSince(header: string, lastModifiedSec: number | undefined): boolean {
  if (lastModifiedSec === undefined) return false;
  const since = Date.parse(header);
  return Number.isFinite(since) && lastModifiedSec <= Math.floor(since / 1000);
}

/** Accept-Encoding values repeat (a CDN sends one or two spellings): parsed once each, a bounded memo. */
const acceptMemo = new Map<string, number>();

function acceptsOf(header: string): number {
  let v = acceptMemo.get(header);
  if (v === undefined) {
    v = parseAccepts(header);
    if (acceptMemo.size >= 256) acceptMemo.clear();
    acceptMemo.set(header, v);
  }
  return v;
}

/** Whether gzip is acceptable (RFC 9110 §12.5.3): `gzip` or `x-gzip` or `*` with q > 0, the most specific entry deciding. */
export function acceptsGzip(header: string): boolean {
  return (acceptsOf(header) & GZIP) !== 0;
}

/** Whether br is acceptable: `br` or `*` with q > 0, the most specific entry deciding. */
export function acceptsBr(header: string): boolean {
  return (acceptsOf(header) & BR) !== 0;
}

function parseAccepts(header: string): number {
  let gzip: number | undefined;
  let br: number | undefined;
  let star: number | undefined;
  if (header.length > 1024) return 0; // hostile: identity
  for (const item of header.split(',')) {
    const [name, ...params] = item.split(';');
    const coding = name!.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, val] = p.split('=');
      if (k!.trim().toLowerCase() === 'q') {
        const n = Number(val?.trim());
        q = /^\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/.test(val ?? '') && Number.isFinite(n) ? n : 0;
      }
    }
    if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip ?? 0, q);
    else if (coding === 'br') br = Math.max(br ?? 0, q);
    else if (coding === '*') star = q;
  }
  const gq = gzip ?? star ?? 0;
  const bq = br ?? star ?? 0;
  return (gq > 0 ? GZIP : 0) | (bq > 0 ? BR : 0) | (gq > bq ? GZIP_FIRST : 0) | (bq > gq ? BR_FIRST : 0);
}

/** `Vary: Accept-Encoding` merged into a precomputed CORS set (one `Vary: Origin, Accept-Encoding` header), memoized per set. */
const varied = new Map<readonly HeaderPair[], readonly HeaderPair[]>();

export function withVary(pairs: readonly HeaderPair[]): readonly HeaderPair[] {
  let out = varied.get(pairs);
  if (!out) {
    let merged = false;
    const list: HeaderPair[] = pairs.map(([n, v]) => {
      if (n.toLowerCase() !== 'vary') return [n, v] as const;
      merged = true;
      return [n, `${v}, Accept-Encoding`] as const;
    });
    if (!merged) list.push(['Vary', 'Accept-Encoding']);
    out = Object.freeze(list);
    if (varied.size < 1024) varied.set(pairs, out);
  }
  return out;
}

/** The extra headers a variant goes out with: the caller's (CORS), with Vary merged when the answer varies. */
export function extraFor(v: Variant, pairs: readonly HeaderPair[]): readonly HeaderPair[] {
  return v.vary ? withVary(pairs) : pairs;
}

const PRINTABLE_ASCII = /^[\t\r\n\x20-\x7e]*$/;

/**
 * Every header of an answer but the request id's value, as the name of one `writeHeader(head, id)`
 * call: uWS writes a name as given, then `: `, the value and CRLF. A string argument is converted to
 * UTF-8 per call (`Utf8Length` + `WriteUtf8`, the largest user-space entries of a hot answer's
 * profile, issue 31); bytes are passed by pointer. Built once per variant and extra set (the last
 * one used is kept: a route has one). undefined: the variant has no block (a header value with
 * CR or LF), so its headers are written one by one.
 */
export function answerHead(v: Variant, extra: readonly HeaderPair[]): ArrayBuffer | undefined {
  const held = v.head;
  if (held !== undefined && held.extra === extra) return held.bytes;
  if (!v.block || !('head' in v)) return undefined;
  let text = `${v.block[0]}: ${v.block[1]}\r\n`;
  for (const [name, value] of extra) {
    if (hasCrLf(name) || hasCrLf(value)) return undefined;
    text += `${name}: ${value}\r\n`;
  }
  // Bytes are written as they are: a value beyond ASCII (a configured origin, say) keeps the string path, which uWS sends as UTF-8.
  if (!PRINTABLE_ASCII.test(text)) return undefined;
  const bytes = latin1Bytes(`${text}X-Request-Id`);
  v.head = { extra, bytes };
  return bytes;
}

/** The request headers negotiation reads, copied in the uWS callback (the request is gone after it). */
export interface Conditions {
  ifNoneMatch: string;
  ifModifiedSince: string;
  acceptEncoding: string;
}

/** The names conditionsOf reads, as bytes (latin1Bytes). */
export const CONDITION_HEADERS = Object.freeze({
  ifNoneMatch: latin1Bytes('if-none-match'),
  ifModifiedSince: latin1Bytes('if-modified-since'),
  acceptEncoding: latin1Bytes('accept-encoding'),
});

export function conditionsOf(req: HttpRequest): Conditions {
  return {
    ifNoneMatch: req.getHeader(CONDITION_HEADERS.ifNoneMatch),
    ifModifiedSince: req.getHeader(CONDITION_HEADERS.ifModifiedSince),
    acceptEncoding: req.getHeader(CONDITION_HEADERS.acceptEncoding),
  };
}

/**
 * Answers a rendering on an exchange in the form the request negotiated (a 304, gzip or identity),
 * with `Age` when served from a cache. headers must be the service's own (sendSized writes them unchecked).
 */
export function sendNegotiated(ex: Exchange, r: Body, c: Conditions, ageSec?: number, opts?: FormOptions): void {
  if (ex.aborted) return;
  const v = negotiate(r, c.ifNoneMatch, c.ifModifiedSince, c.acceptEncoding, opts);
  ex.extra = extraFor(v, ex.extra);
  const headers = ageSec ? { ...v.headers, Age: String(ageSec) } : v.headers;
  const block = ageSec ? undefined : v.block;
  // One call into uWS for every header, as the hot lane answers (a distinct request is answered here).
  const head = block && answerHead(v, ex.extra);
  if (ex.isHead || v.status === 304) ex.send(v.status, headers, v.body, block, head);
  else sendSized(ex, v.status, headers, v.body, block, head);
}
