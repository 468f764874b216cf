import t from 'tap';
import { cdata, escapeXml, parseVast, parseXml, resolveAds, writeVast, type DecidedAd } from '../../lib/ads/index.js';

const noFetch = async () => {
  throw new Error('no fetch expected');
};

const full: DecidedAd = {
  adId: 'ad-1',
  creativeId: 'cr-1',
  adSystem: 'squeezeback',
  title: 'Spring sale',
  uri: 'https://cdn.example.com/ads/spring.mp4',
  durationSec: 15.5,
  tracking: {
    impression: ['https://t.example.com/imp?a=1&b=2', 'https://t2.example.com/imp'],
    start: ['https://t.example.com/start'],
    firstQuartile: ['https://t.example.com/q1'],
    midpoint: ['https://t.example.com/mid'],
    thirdQuartile: ['https://t.example.com/q3'],
    complete: ['https://t.example.com/complete', 'https://t2.example.com/complete'],
  },
  clickThrough: 'https://brand.example.com/?utm=x&y=<z>',
  width: 1280,
  height: 720,
  bitrate: 2000,
};

t.test('no ads: the empty VAST 4.0 document', async (t) => {
  t.equal(writeVast([]), '<?xml version="1.0" encoding="UTF-8"?>\n<VAST version="4.0"/>');
  t.same(parseVast(writeVast([])), { version: '4.0', ads: [], errors: [] });
});

t.test('one ad: VAST 4.0 InLine linear with CDATA URLs', async (t) => {
  const xml = writeVast([full]);
  t.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<VAST version="4.0">'));
  t.match(xml, /<Ad id="ad-1" sequence="1">\n\s+<InLine>/);
  t.match(xml, /<Impression><!\[CDATA\[https:\/\/t\.example\.com\/imp\?a=1&b=2\]\]><\/Impression>/);
  t.match(
    xml,
    /<Creative id="cr-1" sequence="1">\n\s+<UniversalAdId idRegistry="unknown" idValue="unknown">unknown<\/UniversalAdId>/,
  );
  t.match(xml, /<Duration>00:00:15\.500<\/Duration>/);
  t.match(xml, /<Tracking event="start"><!\[CDATA\[https:\/\/t\.example\.com\/start\]\]><\/Tracking>/);
  t.match(
    xml,
    /<MediaFile delivery="progressive" type="video\/mp4" width="1280" height="720" bitrate="2000"><!\[CDATA\[https:\/\/cdn\.example\.com\/ads\/spring\.mp4\]\]><\/MediaFile>/,
  );
  const doc = parseVast(xml);
  t.equal(doc.version, '4.0');
  const inl = doc.ads[0]!.inline!;
  t.equal(inl.adSystem, 'squeezeback');
  t.equal(inl.title, 'Spring sale');
  t.same(inl.impressions, full.tracking.impression);
  const lin = inl.linears[0]!;
  t.equal(lin.durationSec, 15.5);
  t.same(lin.tracking.complete, full.tracking.complete);
  t.equal(lin.clickThrough, full.clickThrough);
  t.same(lin.mediaFiles, [
    { uri: full.uri, type: 'video/mp4', width: 1280, height: 720, bitrate: 2000, delivery: 'progressive' },
  ]);
});

t.test('round trip through parseVast and resolveAds, several ads in order', async (t) => {
  const minimal: DecidedAd = {
    adId: 'ad-2',
    adSystem: 'x',
    title: 'Two',
    uri: 'https://cdn.example.com/b.mp4',
    durationSec: 30,
    tracking: {},
  };
  const third: DecidedAd = {
    ...minimal,
    adId: 'ad-3',
    title: 'Three',
    uri: 'https://cdn.example.com/c.mp4',
    durationSec: 6.25,
    tracking: { start: ['https://t.example.com/3'] },
  };
  const xml = writeVast([full, minimal, third]);
  t.same(
    parseVast(xml).ads.map((a) => [a.id, a.sequence]),
    [
      ['ad-1', 1],
      ['ad-2', 2],
      ['ad-3', 3],
    ],
  );
  t.notMatch(
    xml.split('<Ad id="ad-2"')[1]!.split('</Ad>')[0]!,
    /TrackingEvents|Impression|VideoClicks/,
    'empty parts are left out',
  );
  const back = await resolveAds({ text: xml }, noFetch);
  t.equal(back.reason, undefined);
  t.same(back.ads, [full, minimal, third]);
});

t.test('hostile strings cannot break the document', async (t) => {
  const nasty: DecidedAd = {
    adId: `a"d'<&>`,
    creativeId: 'c]]>d',
    adSystem: 'sys]]><Injected/>',
    title: 'T & <b>bold</b> ]]> "q"\u0001\u0000',
    uri: 'https://cdn.example.com/x.mp4?q=]]><MediaFile>https://evil.example/x.mp4</MediaFile><![CDATA[',
    durationSec: 10,
    tracking: { impression: ['https://t.example.com/i?x=]]>&y=<z>'], start: ['https://t.example.com/s]]]]>'] },
  };
  const xml = writeVast([nasty]);
  t.doesNotThrow(() => parseXml(xml));
  t.notOk(xml.includes('\u0000') || xml.includes('\u0001'), 'characters XML forbids are dropped');
  const doc = parseVast(xml);
  t.equal(doc.ads.length, 1);
  t.equal(doc.ads[0]!.id, nasty.adId);
  t.equal(doc.ads[0]!.inline!.title, 'T & <b>bold</b> ]]> "q"');
  t.equal(doc.ads[0]!.inline!.linears[0]!.creativeId, 'c]]>d');
  t.same(
    doc.ads[0]!.inline!.linears[0]!.mediaFiles.map((f) => f.uri),
    [nasty.uri],
  );
  const back = await resolveAds({ text: xml }, noFetch);
  t.same(back.ads[0]!.tracking, nasty.tracking);
  t.equal(back.ads[0]!.uri, nasty.uri);
});

t.test('escape helpers', async (t) => {
  t.equal(escapeXml(`<a href="x">&'</a>`), '&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;');
  t.equal(cdata('a]]>b'), '<![CDATA[a]]]]><![CDATA[>b]]>');
  t.equal(cdata('\ud800x'), '<![CDATA[x]]>', 'a lone surrogate is dropped');
});
