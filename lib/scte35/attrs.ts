/**
 * A lenient attribute-list reader for cue tags. RFC 8216 §4.2 lists are strict, but cue tags in the
 * wild have spaces after commas, curly quotes (“…” ”…”) and unquoted base64 with '=' padding; keys
 * are upper-cased (CUE-OUT-CONT writes ElapsedTime/Duration).
 */
const QUOTES = new Set(['"', '\u201c', '\u201d']);

export function attributeList(list: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  const n = list.length;
  while (i < n) {
    while (i < n && (list[i] === ' ' || list[i] === ',')) i++;
    const eq = list.indexOf('=', i);
    if (eq === -1) break;
    const key = list.slice(i, eq).trim().toUpperCase();
    let j = eq + 1;
    while (j < n && list[j] === ' ') j++;
    let value: string;
    if (j < n && QUOTES.has(list[j]!)) {
      let end = j + 1;
      while (end < n && !QUOTES.has(list[end]!)) end++;
      value = list.slice(j + 1, end);
      i = list.indexOf(',', end);
    } else {
      const comma = list.indexOf(',', j);
      value = list.slice(j, comma === -1 ? n : comma).trim();
      i = comma;
    }
    if (key) out.set(key, value);
    if (i === -1) break;
  }
  return out;
}

/** A decimal number, or undefined (not NaN) when the text is not one. */
export function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = s.trim().replace(/^["\u201c\u201d]|["\u201c\u201d]$/g, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return undefined;
  return Number(t);
}
