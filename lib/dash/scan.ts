/**
 * The one tag scanner of MPD text (no DOM): the hot-path trimmer (./trim.ts) walks a dynamic MPD
 * with it, and the MPD reader (./mpd.ts) reads the root's attributes with it without building a
 * document. One tag at a time, quote-aware, comments, CDATA, processing instructions and
 * declarations stepped over; attributes found by walking them in order, so a value never matches.
 */
const LT = 60;
const GT = 62;
const SLASH = 47;
const EQ = 61;

export function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** One tag at a time; its fields are overwritten by each next() (one object per call, no per-tag allocation). */
export class TagScan {
  pos = 0;
  start = 0;
  /** Offset just past '>'. */
  end = 0;
  /** The element's local name (after any prefix), and the offset just past the full name. */
  localStart = 0;
  nameEnd = 0;
  close = false;
  selfClose = false;
  /** An element tag (not a comment, CDATA, PI or declaration). */
  element = false;

  constructor(readonly s: string) {}

  next(): boolean {
    const s = this.s;
    const lt = s.indexOf('<', this.pos);
    if (lt === -1) return false;
    this.start = lt;
    const c = s.charCodeAt(lt + 1);
    if (c === 33 /* ! */ || c === 63 /* ? */) {
      this.element = false;
      const close = s.startsWith('!--', lt + 1)
        ? '-->'
        : s.startsWith('![CDATA[', lt + 1)
          ? ']]>'
          : c === 63
            ? '?>'
            : '>';
      const e = s.indexOf(close, lt + 2);
      this.end = this.pos = e === -1 ? s.length : e + close.length;
      return true;
    }
    this.element = true;
    this.close = c === SLASH;
    let i = this.close ? lt + 2 : lt + 1;
    this.localStart = i;
    for (; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      if (isWs(ch) || ch === GT || ch === SLASH || ch === LT) break;
      if (ch === 58 /* : */) this.localStart = i + 1;
    }
    this.nameEnd = i;
    // Quote-aware: '>' may appear inside an attribute value.
    for (; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      if (ch === 34 || ch === 39) {
        const q = quoteEnd(s, i + 1, ch);
        if (q === -1) break;
        i = q;
      } else if (ch === GT || ch === LT) break;
    }
    if (i >= s.length || s.charCodeAt(i) === LT) {
      // Unterminated: not an element; resume after '<'.
      this.element = false;
      this.end = this.pos = i >= s.length ? s.length : i;
      return true;
    }
    this.end = this.pos = i + 1;
    this.selfClose = s.charCodeAt(i - 1) === SLASH;
    return true;
  }

  is(name: string): boolean {
    return this.nameEnd - this.localStart === name.length && this.s.startsWith(name, this.localStart);
  }

  /** Offset of attribute `name`'s value in this tag, or -1 (walks attributes in order, so value text never matches). */
  attr(name: string): number {
    return attrValue(this.s, this.nameEnd, this.end, name);
  }
}

/** The value offsets of S@t, @d, @r and @n, found in one walk (S is most of a timeline's tags). */
export const sAttrs = { t: -1, d: -1, r: -1, n: -1 };
export function readSAttrs(s: string, from: number, to: number): void {
  sAttrs.t = sAttrs.d = sAttrs.r = sAttrs.n = -1;
  attrValue(s, from, to, '', true);
}

export function attrValue(s: string, from: number, to: number, name: string, sAttr = false): number {
  let i = from;
  while (i < to) {
    while (i < to && isWs(s.charCodeAt(i))) i++;
    const ns = i;
    for (; i < to; i++) {
      const c = s.charCodeAt(i);
      if (c === EQ || isWs(c) || c === GT || c === SLASH) break;
    }
    const ne = i;
    if (ne === ns) return -1;
    while (i < to && isWs(s.charCodeAt(i))) i++;
    if (s.charCodeAt(i) !== EQ) return -1;
    i++;
    while (i < to && isWs(s.charCodeAt(i))) i++;
    const q = s.charCodeAt(i);
    if (q !== 34 && q !== 39) return -1;
    const ve = quoteEnd(s, i + 1, q);
    if (ve === -1 || ve >= to) return -1;
    if (sAttr) {
      if (ne - ns === 1) {
        const c = s.charCodeAt(ns);
        if (c === 116 /* t */) sAttrs.t = i + 1;
        else if (c === 100 /* d */) sAttrs.d = i + 1;
        else if (c === 114 /* r */) sAttrs.r = i + 1;
        else if (c === 110 /* n */) sAttrs.n = i + 1;
      }
    } else if (ne - ns === name.length && s.startsWith(name, ns)) return i + 1;
    i = ve + 1;
  }
  return -1;
}

/**
 * The closing quote from `from` on (-1 when none). A loop, not indexOf: values are a few
 * characters long, and the runtime call costs more than reading them (it was a third of the scan).
 */
export function quoteEnd(s: string, from: number, quote: number): number {
  for (let i = from; i < s.length; i++) if (s.charCodeAt(i) === quote) return i;
  return -1;
}

export function valueEnd(s: string, at: number): number {
  return quoteEnd(s, at, s.charCodeAt(at - 1));
}

/** A non-negative integer written in digits at s[at…] (NaN otherwise); exact up to 2^53. */
export function uintAt(s: string, at: number, from = at): number {
  if (at < 0) return NaN;
  const end = valueEnd(s, at);
  if (end <= from) return NaN;
  let v = 0;
  for (let i = from; i < end; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    v = v * 10 + c;
  }
  return v;
}

export function intAt(s: string, at: number): number {
  return at >= 0 && s.charCodeAt(at) === 45 /* - */ ? -uintAt(s, at, at + 1) : uintAt(s, at);
}
