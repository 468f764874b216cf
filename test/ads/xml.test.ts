import t from 'tap';
import {
  AdXmlError,
  attrOf,
  boolAttr,
  childElement,
  childElements,
  elementsAt,
  intAttr,
  localNameOf,
  parseXml,
  textOf,
  XML_MAX_BYTES,
} from '../../lib/ads/xml.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AdXmlError ? err.code : `not an AdXmlError: ${String(err)}`;
  }
  return undefined;
}

const BILLION_LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<VAST version="4.0"><Ad id="x"><InLine><AdTitle>&lol9;</AdTitle></InLine></Ad></VAST>`;

t.test('a small document parses; a leading BOM is stripped', async (t) => {
  const doc = parseXml('\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<VAST version="4.0"><Ad id="1"/></VAST>');
  t.equal(doc.documentElement!.nodeName, 'VAST');
  t.equal(childElements(doc.documentElement!, 'Ad').length, 1);
});

t.test('size cap counts UTF-8 bytes', async (t) => {
  t.equal(XML_MAX_BYTES, 2 * 1024 * 1024);
  const body = '<a>' + 'é'.repeat(600) + '</a>'; // 607 UTF-16 units, 1207 bytes
  t.equal(
    code(() => parseXml(body, { maxBytes: 1000 })),
    'too-large',
  );
  t.equal(
    code(() => parseXml(body, { maxBytes: 1207 })),
    undefined,
  );
  t.equal(
    code(() => parseXml('<a>' + 'x'.repeat(XML_MAX_BYTES) + '</a>')),
    'too-large',
    'default cap',
  );
});

t.test('DOCTYPE refused before parsing, in any case and after a prolog', async (t) => {
  const started = process.hrtime.bigint();
  t.equal(
    code(() => parseXml(BILLION_LAUGHS)),
    'doctype',
    'billion laughs',
  );
  t.ok(Number(process.hrtime.bigint() - started) / 1e6 < 100, 'no entity was expanded');
  t.equal(
    code(() => parseXml('<!doctype vast><VAST/>')),
    'doctype',
  );
  t.equal(
    code(() =>
      parseXml('<?xml version="1.0"?>\n<!-- c --><?pi x?>\n  <!DocType VAST SYSTEM "http://evil/x.dtd"><VAST/>'),
    ),
    'doctype',
  );
  t.equal(
    code(() => parseXml('<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><VAST>&xxe;</VAST>')),
    'doctype',
    'XXE',
  );
  t.equal(
    code(() => parseXml('<VAST/><!DOCTYPE x>')),
    'malformed',
    'after the root: xmldom refuses it',
  );
  const quoted = parseXml('<VAST><Ad><HTMLResource><![CDATA[<!DOCTYPE html><p>hi</p>]]></HTMLResource></Ad></VAST>');
  t.equal(
    textOf(elementsAt(quoted.documentElement!, 'Ad', 'HTMLResource')[0]),
    '<!DOCTYPE html><p>hi</p>',
    'a DOCTYPE quoted in CDATA is content',
  );
});

t.test('malformed input is an AdXmlError, never a crash', async (t) => {
  for (const bad of [
    '',
    '   ',
    '{ vast: null }',
    '<VAST><Ad></VAST>',
    '<VAST>&nope;</VAST>',
    '<VAST/><VAST/>',
    '<VAST/> trailing',
    '<VAST a="1" a="2"/>',
    '<<<>>>',
    '<VAST><![CDATA[x</VAST>',
    '\u0000<VAST/>',
  ]) {
    t.equal(
      code(() => parseXml(bad)),
      'malformed',
      JSON.stringify(bad),
    );
  }
  t.equal(
    code(() => parseXml(42 as unknown as string)),
    'malformed',
    'not a string',
  );
});

t.test('depth cap', async (t) => {
  const nest = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
  t.equal(
    code(() => parseXml(nest(64))),
    undefined,
  );
  t.equal(
    code(() => parseXml(nest(65))),
    'too-large',
  );
  t.equal(
    code(() => parseXml(nest(10), { maxDepth: 5 })),
    'too-large',
  );
  t.match(
    code(() => parseXml(nest(50_000))),
    /^(too-large|malformed)$/,
    'very deep input fails cleanly',
  );
});

t.test('undeclared prefixes are tolerated and names match by local name', async (t) => {
  const doc = parseXml(
    '<vmap:VMAP version="1.0"><vmap:AdBreak xsi:type="x" breakId="b1"><vmap:AdSource/></vmap:AdBreak><other:AdBreak/></vmap:VMAP>',
  );
  const root = doc.documentElement!;
  t.equal(localNameOf(root), 'VMAP');
  t.equal(childElements(root, 'AdBreak').length, 2);
  const br = childElement(root, 'AdBreak')!;
  t.equal(attrOf(br, 'breakId'), 'b1');
  t.equal(attrOf(br, 'type'), 'x', 'prefixed attribute by local name');
  t.equal(attrOf(br, 'missing'), undefined);
  t.ok(childElement(br, 'AdSource'));
  const declared = parseXml('<v:VMAP xmlns:v="http://www.iab.net/videosuite/vmap"><v:AdBreak/></v:VMAP>');
  t.equal(declared.documentElement!.namespaceURI, 'http://www.iab.net/videosuite/vmap', 'declared namespaces are kept');
  t.equal(childElements(declared.documentElement!, 'AdBreak').length, 1);
});

t.test('text helpers read text and CDATA, trimmed, without comments or child text', async (t) => {
  const doc = parseXml('<r><u>\n  <![CDATA[ http://a/b?x=1&y=2 ]]> <!-- c --></u><v>a<b>nested</b>c</v><w/></r>');
  const r = doc.documentElement!;
  t.equal(textOf(childElement(r, 'u')), 'http://a/b?x=1&y=2');
  t.equal(textOf(childElement(r, 'v')), 'ac');
  t.equal(textOf(childElement(r, 'w')), '');
  t.equal(textOf(undefined), '');
});

t.test('boolean and integer attributes', async (t) => {
  const el = parseXml('<a t="True" o="1" f="false" z="0" x="maybe" n="849" d="1000.4" neg="-3"/>').documentElement!;
  t.same(
    ['t', 'o', 'f', 'z', 'x', 'none'].map((n) => boolAttr(el, n)),
    [true, true, false, false, undefined, undefined],
  );
  t.same(
    ['n', 'd', 'neg', 'none'].map((n) => intAttr(el, n)),
    [849, 1000, undefined, undefined],
  );
});
