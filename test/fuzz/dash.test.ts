/**
 * Property tests of the MPD rewrite (issue 18 item 5): no exception on any input; a well-formed MPD
 * stays well-formed (@xmldom/xmldom, every error fatal) and only the MPD-level Location,
 * PatchLocation and BaseURL change (a BaseURL pinned upstream is added when there is none).
 * 200 runs per property by default; `FUZZ_RUNS=N npx tap -t0 test/fuzz` for a long run, `FUZZ_SEED=S` to replay.
 */
import t from 'tap';
import fc from 'fast-check';
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';
import { rewriteMpd } from '../../lib/dash/index.js';
import { UriRewriter } from '../../lib/hls/uris.js';
import { fixtureTexts, mutated, paramsFor, xmlEscape } from './common.js';

const rules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge.example.net/dai/manifest',
  contentOrigin: 'https://origin.example.org',
  playlistUrl: 'https://dai.example.com/linear/dash/event/EV1/stream/s1:LOC/manifest.mpd?tok=1&x=2',
};
const uris = new UriRewriter(rules);
const fixtures = fixtureTexts('dash', ['.mpd']).map((f) => f.text);

function parseStrict(text: string): Document | undefined {
  try {
    const doc = new DOMParser({
      // Warnings too: xmldom only warns about some ill-formed input (an unquoted attribute value).
      onError: (_level, msg) => {
        throw new Error(msg);
      },
    }).parseFromString(text, 'text/xml');
    return doc.documentElement ? doc : undefined;
  } catch {
    return undefined;
  }
}

const local = (n: Node) => n.nodeName.slice(n.nodeName.indexOf(':') + 1);
const children = (n: Node) => {
  const out: Node[] = [];
  for (let c = n.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
};
const textOf = (n: Node) =>
  children(n)
    .filter((c) => c.nodeType === 3 || c.nodeType === 4)
    .map((c) => c.nodeValue)
    .join('')
    .trim();

/** A canonical form: names, sorted attributes, children with whitespace-only text dropped and text trimmed. */
function canon(n: Node): string {
  if (n.nodeType === 3 || n.nodeType === 4) return (n.nodeValue ?? '').trim();
  if (n.nodeType === 8) return `<!--${n.nodeValue}-->`;
  if (n.nodeType !== 1) return '';
  const el = n as Element;
  const attrs: string[] = [];
  for (let i = 0; i < el.attributes.length; i++) {
    const a = el.attributes.item(i)!;
    attrs.push(`${a.name}=${JSON.stringify(a.value)}`);
  }
  let body = '';
  let text = '';
  for (const c of children(n)) {
    if (c.nodeType === 3 || c.nodeType === 4) text += c.nodeValue ?? '';
    else {
      if (text.trim()) body += JSON.stringify(text.trim());
      text = '';
      body += canon(c);
    }
  }
  if (text.trim()) body += JSON.stringify(text.trim());
  return `<${el.nodeName} ${attrs.sort().join(' ')}>${body}</${el.nodeName}>`;
}

const AFTER_BASEURL = [
  'Location',
  'PatchLocation',
  'ServiceDescription',
  'InitializationSet',
  'InitializationGroup',
  'InitializationPresentation',
  'ContentProtection',
  'Period',
];

/** The canonical form the rewrite should give: MPD-level Location/PatchLocation via master(), BaseURL via media(), or one BaseURL added. */
function expected(doc: Document, xml: string): string {
  const root = doc.documentElement!.cloneNode(true) as Element;
  // A self-closing MPD has no segments to pin: it stays as it is.
  if (!root.firstChild && /<([A-Za-z_][\w.-]*:)?MPD\b(?:[^>"']|"[^"]*"|'[^']*')*\/>/.test(xml)) return canon(root);
  const kids = children(root).filter((c) => c.nodeType === 1) as Element[];
  const firstPeriod = kids.findIndex((k) => local(k) === 'Period');
  const level = firstPeriod === -1 ? kids : kids.slice(0, firstPeriod);
  for (const k of level) {
    const text = textOf(k);
    // Mapped: plain text, or one CDATA section with only whitespace around it; other mixes are left alone.
    const kidsOf = children(k);
    const cdata = kidsOf.filter((c) => c.nodeType === 4);
    const onlyText =
      kidsOf.every((c) => c.nodeType === 3) ||
      (cdata.length === 1 &&
        kidsOf.every((c) => c.nodeType === 4 || (c.nodeType === 3 && !(c.nodeValue ?? '').trim())));
    const name = local(k);
    if (!onlyText || !text) continue;
    if (name === 'Location' || name === 'PatchLocation') setText(k, uris.master(text));
    else if (name === 'BaseURL') setText(k, uris.media(text));
  }
  if (!level.some((k) => local(k) === 'BaseURL')) {
    const base = doc.createElement('BaseURL');
    base.appendChild(doc.createTextNode(uris.media('./')));
    root.insertBefore(base, kids.find((k) => AFTER_BASEURL.includes(local(k))) ?? null);
  }
  pinRootRelative(root);
  return canon(root);
}

/** Issue 25.3: root-relative segment URLs (BaseURL at any level, segment attributes) get the content origin. */
function pinRootRelative(el: Element): void {
  const rootRelative = (v: string) => v.startsWith('/') && !v.startsWith('//');
  for (const c of children(el)) {
    if (c.nodeType !== 1) continue;
    const k = c as Element;
    if (local(k) === 'BaseURL') {
      const kidsOf = children(k);
      const cdata = kidsOf.filter((x) => x.nodeType === 4);
      const onlyText =
        kidsOf.every((x) => x.nodeType === 3) ||
        (cdata.length === 1 &&
          kidsOf.every((x) => x.nodeType === 4 || (x.nodeType === 3 && !(x.nodeValue ?? '').trim())));
      const text = textOf(k);
      if (onlyText && rootRelative(text)) setText(k, rules.contentOrigin + text);
    }
    for (const name of ['media', 'initialization', 'sourceURL', 'index']) {
      const v = k.getAttribute(name);
      if (k.hasAttribute(name) && v !== null && rootRelative(v)) k.setAttribute(name, rules.contentOrigin + v);
    }
    pinRootRelative(k);
  }
}

function setText(el: Element, text: string): void {
  while (el.firstChild) el.removeChild(el.firstChild);
  el.appendChild(el.ownerDocument!.createTextNode(text));
}

// Generated MPDs: prefixes, BaseURL forms, Location/PatchLocation, odd whitespace and entities.
const urlText = fc.constantFrom(
  'https://dai.example.com/linear/dash/event/EV1/manifest.mpd?a=1&b=2',
  'HTTPS://DAI.EXAMPLE.COM/m.mpd',
  'http://dai.example.com/x/',
  'https://cdn.other.net/dash/',
  '/root/relative/',
  'relative/dir/',
  './dot/',
  '../up/',
  '//cdn.other.net/pr/',
  'https://dai.example.com/seg/?t=a&b',
);
const encodedUrl = fc
  .tuple(urlText, fc.constantFrom('', ' ', '\n  ', '\t'), fc.constantFrom('escape', 'numeric', 'cdata'))
  .map(([u, pad, how]) => `${pad}${how === 'cdata' ? `<![CDATA[${u}]]>` : xmlEscape(u, how === 'numeric')}${pad}`);
const genMpd = fc
  .record({
    decl: fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>\n', '<?xml version="1.0"?><!-- generated -->\n'),
    prefix: fc.constantFrom('', '', 'mpd:', 'dash:'),
    type: fc.constantFrom('static', 'dynamic'),
    gtInAttr: fc.boolean(),
    program: fc.boolean(),
    bases: fc.array(encodedUrl, { maxLength: 2 }),
    locations: fc.array(encodedUrl, { maxLength: 2 }),
    patch: fc.option(encodedUrl, { nil: undefined }),
    service: fc.boolean(),
    periods: fc.array(
      fc.record({ base: fc.option(encodedUrl, { nil: undefined }), sets: fc.integer({ min: 1, max: 3 }) }),
      { minLength: 0, maxLength: 3 },
    ),
    selfClosing: fc.boolean(),
    comment: fc.constantFrom(
      '',
      '<!-- comment -->',
      '<!-- a <Period> in a comment -->',
      '<!-- <BaseURL>x</BaseURL> -->',
    ),
    utc: fc.boolean(),
  })
  .map((r) => {
    const p = r.prefix;
    const ns = p ? `xmlns:${p.slice(0, -1)}="urn:mpeg:dash:schema:mpd:2011"` : 'xmlns="urn:mpeg:dash:schema:mpd:2011"';
    const el = (name: string, body: string, attrs = '') => `<${p}${name}${attrs}>${body}</${p}${name}>`;
    let s = `${r.decl}<${p}MPD ${ns} xmlns:scte35="urn:scte:scte35:2014:xml+bin" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="${r.type}"${r.gtInAttr ? ' data="a>b"' : ''} minBufferTime="PT2S">\n`;
    if (r.program) s += `  ${el('ProgramInformation', el('Title', 'T &amp; x'))}\n`;
    s += r.comment;
    for (const b of r.bases) s += `  ${el('BaseURL', b)}\n`;
    for (const l of r.locations) s += `  ${el('Location', l)}\n`;
    if (r.patch) s += `  ${el('PatchLocation', r.patch, ' ttl="60"')}\n`;
    if (r.service) s += `  ${el('ServiceDescription', el('Latency', '', ' target="3000"'), ' id="0"')}\n`;
    r.periods.forEach((per, i) => {
      s += `  <${p}Period id="p${i}" start="PT${i * 30}S">`;
      if (per.base) s += el('BaseURL', per.base);
      for (let a = 0; a < per.sets; a++)
        s += el(
          'AdaptationSet',
          `<${p}SegmentTemplate media="seg_$Number$.m4s?a=1&amp;b=2" initialization="init.mp4" startNumber="1"/>` +
            el('Representation', '', ` id="r${a}" bandwidth="${1000 * (a + 1)}"`),
          ` id="${a}" mimeType="video/mp4"`,
        );
      s += `</${p}Period>\n`;
    });
    if (r.utc)
      s += `  <${p}UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="https://time.example.com/?iso"/>\n`;
    // An MPD without a Period is not valid DASH, but well-formed: a self-closing one too.
    if (r.selfClosing && !r.periods.length) return `${s.slice(0, s.indexOf('>\n', s.indexOf('MPD ')))}/>\n`;
    return `${s}</${p}MPD>\n`;
  });

t.test('no exception escapes rewriteMpd, on any input', async () => {
  const anyText = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.string({
      unit: fc.constantFrom(
        '<',
        '>',
        '/',
        'MPD',
        'Period',
        'BaseURL',
        'Location',
        'PatchLocation',
        ' ',
        'x',
        ':',
        '"',
        '</',
      ),
      maxLength: 60,
    }),
    mutated(fc.constantFrom(...fixtures)),
    mutated(genMpd),
  );
  fc.assert(
    fc.property(anyText, (xml) => {
      const r = rewriteMpd(xml, rules);
      if (typeof r.text !== 'string' || typeof r.valid !== 'boolean') throw new Error('bad result');
      if (!r.valid && r.text !== xml) throw new Error('an invalid MPD must come back as it was');
    }),
    paramsFor(1),
  );
});

t.test(
  'a well-formed MPD stays well-formed and only the MPD-level Location, PatchLocation and BaseURL and root-relative segment URLs change',
  async () => {
    const mpds = fc.oneof(genMpd, fc.constantFrom(...fixtures), mutated(genMpd));
    fc.assert(
      fc.property(mpds, (xml) => {
        const before = parseStrict(xml);
        if (!before || local(before.documentElement!) !== 'MPD') return true; // only well-formed MPDs have this contract
        const r = rewriteMpd(xml, rules);
        if (!r.valid) throw new Error('a parsed MPD was found invalid');
        const after = parseStrict(r.text);
        if (!after) throw new Error(`output is not well-formed:\n${r.text}`);
        const want = expected(before, xml);
        const got = canon(after.documentElement!);
        if (got !== want)
          throw new Error(`unexpected change:\n--- got\n${got}\n--- expected\n${want}\n--- output\n${r.text}`);
        return true;
      }),
      paramsFor(1),
    );
  },
);
