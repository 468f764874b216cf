import t from 'tap';
import type { Element } from '@xmldom/xmldom';
import { AdXmlError, isVast, isVmap, localNameOf, parseVast, parseVmap, parseXml } from '../../lib/ads/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

t.test('VMAP 1.0 with inline VAST and an ad tag (vmap-js correct-vmap.xml)', async (t) => {
  const doc = parseXml(fixture('vmap/vmap-js/correct-vmap.xml'));
  t.ok(isVmap(doc));
  t.notOk(isVast(doc));
  const vmap = parseVmap(doc);
  t.equal(vmap.version, '1.0');
  t.same(
    vmap.breaks.map((b) => [b.breakId, b.breakType, b.timeOffset]),
    [
      ['mypre', 'linear', 'start'],
      ['myid', 'linear', '00:10:23.125'],
      ['mypost', 'linear', 'end'],
    ],
  );
  const pre = vmap.breaks[0]!;
  t.same(
    { ...pre.adSource, vastXml: undefined },
    { id: '1', allowMultipleAds: true, followRedirects: true, vastXml: undefined },
  );
  const inline = pre.adSource!.vastXml as Element;
  t.equal(localNameOf(inline), 'VAST', 'VASTAdData holds the VAST element');
  t.same(parseVast(inline), { version: '3.0', ads: [], errors: [] });
  t.same(pre.tracking, {
    breakStart: ['http://server.com/breakstart'],
    breakEnd: ['http://server.com/breakend', 'http://server.com/breakend2'],
    error: ['http://server.com/error?[ERRORCODE]'],
  });
  t.same(vmap.breaks[1]!.tracking, { breakStart: ['http://server.com/breakstart'] });
  const post = vmap.breaks[2]!.adSource!;
  t.equal(post.adTagUri, 'http://server.com/vast.xml');
  t.equal(post.vastXml, undefined);
});

t.test('extensions are skipped (correct-vmap-with-extension.xml)', async (t) => {
  const vmap = parseVmap(fixture('vmap/vmap-js/correct-vmap-with-extension.xml'));
  t.equal(vmap.breaks.length, 1);
  t.equal(localNameOf(vmap.breaks[0]!.adSource!.vastXml as Element), 'VAST');
  t.equal(vmap.breaks[0]!.tracking.breakEnd!.length, 2);
});

t.test('a real VMAP with four breaks of inline VAST 2.0 (Eyevinn vast-info)', async (t) => {
  const vmap = parseVmap(fixture('vmap/eyevinn-vast-info/vmap.xml'));
  t.same(
    vmap.breaks.map((b) => b.timeOffset),
    ['00:00:00', '00:10:55.56', '00:21:57.52', '00:36:23.72'],
  );
  t.equal(vmap.breaks[0]!.breakId, undefined, 'empty breakId reads as absent');
  t.equal(vmap.breaks[0]!.adSource!.allowMultipleAds, true);
  const vasts = vmap.breaks.map((b) => parseVast(b.adSource!.vastXml as Element));
  t.same(
    vasts.map((v) => v.version),
    ['2.0', '2.0', '2.0', '2.0'],
  );
  t.equal(
    vasts.reduce((n, v) => n + v.ads.length, 0),
    39,
  );
  t.equal(
    vasts.reduce((n, v) => n + v.ads.filter((a) => a.wrapper).length, 0),
    12,
  );
});

t.test('refused VMAP documents', async (t) => {
  const wrong = parseXml(fixture('vmap/vmap-js/incorrect-vmap.xml'));
  t.notOk(isVmap(wrong));
  t.throws(() => parseVmap(wrong), { name: 'AdXmlError', code: 'malformed' });
  t.throws(
    () => parseVmap(fixture('vmap/vmap-js/parsing-example.xml')),
    { name: 'AdXmlError', code: 'malformed' },
    'a bare Extension is not a VMAP',
  );
  t.throws(() => parseVmap('<VAST version="4.0"/>'), { name: 'AdXmlError', code: 'malformed' });
  t.throws(() => parseVmap('<vmap:VMAP><vmap:AdBreak></vmap:VMAP>'), { name: 'AdXmlError', code: 'malformed' });
  t.throws(() => parseVmap('<!DOCTYPE vmap:VMAP><vmap:VMAP/>'), { name: 'AdXmlError', code: 'doctype' });
});

t.test('lenient shapes: no namespace, other prefixes, CDATA-wrapped VAST, template type', async (t) => {
  const vmap = parseVmap(`<VMAP version="1.0">
  <AdBreak breakType="linear,nonlinear" timeOffset="#2" repeatAfter="00:05:00">
    <AdSource><VASTAdData><![CDATA[<VAST version="4.0"><Ad id="c"/></VAST>]]></VASTAdData></AdSource>
  </AdBreak>
  <x:AdBreak timeOffset="50%" breakType="linear"><x:AdSource allowMultipleAds="false" followRedirects="0"><x:AdTagURI templateType="vast4"> <![CDATA[https://ads.example/v?a=1&b=2]]> </x:AdTagURI></x:AdSource></x:AdBreak>
  <AdBreak timeOffset="end"/>
</VMAP>`);
  t.equal(vmap.breaks.length, 3);
  const [a, b, c] = vmap.breaks;
  t.equal(a!.breakType, 'linear,nonlinear');
  t.equal(a!.repeatAfter, '00:05:00');
  t.equal(typeof a!.adSource!.vastXml, 'string');
  t.equal(parseVast(a!.adSource!.vastXml as string).ads[0]!.id, 'c');
  t.same(b!.adSource, {
    allowMultipleAds: false,
    followRedirects: false,
    adTagUri: 'https://ads.example/v?a=1&b=2',
    templateType: 'vast4',
  });
  t.same(c, { breakType: '', timeOffset: 'end', tracking: {} });
});

t.test('every VMAP fixture parses or is refused cleanly', async (t) => {
  const files = fixtureFiles('vmap', ['.xml']);
  t.equal(files.length, 5, 'VMAP fixtures read');
  const refused: string[] = [];
  for (const name of files) {
    try {
      const vmap = parseVmap(fixture(name));
      for (const b of vmap.breaks) {
        const x = b.adSource?.vastXml;
        if (x !== undefined) t.ok(Array.isArray(parseVast(x).ads), `${name} inline VAST`);
      }
      t.ok(vmap.breaks.length > 0, `${name}: ${vmap.breaks.length} breaks`);
    } catch (err) {
      t.ok(err instanceof AdXmlError, `${name} refused with AdXmlError`);
      refused.push(name);
    }
  }
  t.same(
    refused,
    ['vmap/vmap-js/incorrect-vmap.xml', 'vmap/vmap-js/parsing-example.xml'],
    'only the two samples that are no VMAP are refused',
  );
});
