import t from 'tap';
import { AdXmlError, formatVastDuration, isVast, parseVast, parseVastDuration, parseXml } from '../../lib/ads/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

const vast = (rel: string) => parseVast(fixture(`vast/${rel}`));

t.test('VAST 4 inline linear (vast-client-js inline-linear.xml)', async (t) => {
  const doc = vast('vast-client-js/inline-linear.xml');
  t.equal(doc.version, '4.3');
  t.equal(doc.ads.length, 1);
  const ad = doc.ads[0]!;
  t.equal(ad.id, '20001');
  t.equal(ad.sequence, undefined);
  t.notOk(ad.wrapper);
  const inl = ad.inline!;
  t.equal(inl.adSystem, 'iabtechlab');
  t.equal(inl.title, 'iabtechlab video ad');
  t.same(inl.impressions, ['http://example.com/track/impression']);
  t.same(inl.errors, ['http://example.com/error']);
  t.equal(inl.linears.length, 1);
  const lin = inl.linears[0]!;
  t.equal(lin.creativeId, '5480');
  t.equal(lin.sequence, 1);
  t.equal(lin.durationSec, 16);
  t.same(lin.mediaFiles, [
    {
      uri: 'https://iabtechlab.com/wp-content/uploads/2016/07/VAST-4.0-Short-Intro.mp4',
      type: 'video/mp4',
      width: 400,
      height: 300,
      bitrate: 500,
      delivery: 'progressive',
    },
  ]);
  t.same(Object.keys(lin.tracking).sort(), ['complete', 'firstQuartile', 'midpoint', 'start', 'thirdQuartile']);
  t.same(lin.tracking.start, ['http://example.com/tracking/start']);
  t.same(lin.clickTrackings, ['https://iabtechlab.com']);
  t.equal(lin.clickThrough, undefined);
});

t.test('VAST 4.3 sample: pod ad with mixed creatives, stand-alone VPAID ad', async (t) => {
  const doc = vast('vast-client-js/sample.xml');
  t.equal(doc.ads.length, 2);
  const [a, b] = doc.ads as [NonNullable<(typeof doc.ads)[0]>, NonNullable<(typeof doc.ads)[0]>];
  t.equal(a.id, 'ad_id_0001');
  t.equal(a.sequence, 1);
  t.equal(a.inline!.adSystem, 'AdServer');
  t.equal(a.inline!.title, 'Ad title');
  t.equal(a.inline!.impressions.length, 3);
  t.same(a.inline!.errors, ['http://example.com/error_[ERRORCODE]']);
  t.equal(a.inline!.linears.length, 1, 'companion and non-linear creatives are not linear');
  const lin = a.inline!.linears[0]!;
  t.equal(lin.creativeId, 'id130984');
  t.same(
    lin.universalAdId,
    { idRegistry: 'daily-motion-L1', idValue: 'Linear-12345' },
    "VAST 4.1's UniversalAdId: the value is the text",
  );
  t.equal(lin.durationSec, 90.123);
  t.same(
    lin.mediaFiles.map((f) => f.uri),
    ['http://example.com/linear-asset.mp4', 'parser.js?adData=http%3A%2F%2Fad.com%2F%3Fcb%3D%5Btime%5D'],
    'Mezzanine is not a MediaFile',
  );
  t.equal(lin.mediaFiles[0]!.bitrate, 849);
  t.equal(lin.mediaFiles[1]!.apiFramework, 'VPAID');
  t.same(Object.keys(lin.tracking).sort(), [
    'close',
    'complete',
    'firstQuartile',
    'midpoint',
    'progress',
    'start',
    'thirdQuartile',
  ]);
  t.equal(lin.tracking.progress!.length, 2);
  t.equal(lin.clickThrough, 'http://example.com/linear-clickthrough_adplayhead:[ADPLAYHEAD]');
  t.equal(lin.clickTrackings.length, 2);
  t.equal(b.id, 'ad_id_0002');
  t.equal(b.sequence, undefined);
  t.equal(b.inline!.linears[0]!.durationSec, 30, 'a bare number of seconds is read');
});

t.test('default namespace (Eyevinn test-adserver)', async (t) => {
  const doc = vast('eyevinn-test-adserver/test_vast.xml');
  t.equal(doc.version, '4.0');
  const inl = doc.ads[0]!.inline!;
  t.equal(inl.adSystem, undefined);
  t.same(inl.impressions, ['about:blank']);
  const lin = inl.linears[0]!;
  t.equal(lin.durationSec, 16);
  t.same(
    lin.mediaFiles.map((f) => f.bitrate),
    [2000, 1000, 600],
  );
  t.same(
    Object.values(lin.tracking).map((u) => u.length),
    [1, 1, 1, 1, 1],
  );
  t.equal(lin.tracking.midpoint![0], 'http://127.0.0.1:8080/api/v1/sessions/s-169/tracking?adId=12&progress=50');
});

t.test('VAST 2.0 response with 21 ads (Eyevinn vast-info)', async (t) => {
  const doc = vast('eyevinn-vast-info/vast.xml');
  t.equal(doc.version, '2.0');
  t.equal(doc.ads.length, 21);
  t.equal(doc.ads.filter((a) => a.wrapper).length, 1);
  t.equal(doc.ads.filter((a) => a.inline).length, 20);
  t.equal(doc.ads[0]!.id, 'bumper_start-vod_tv4_only_bro');
  t.equal(doc.ads[0]!.inline!.impressions.length, 0, 'an empty CDATA impression is dropped');
  t.equal(doc.ads[0]!.inline!.linears[0]!.durationSec, 3);
  t.equal(doc.ads[1]!.inline!.linears[0]!.mediaFiles.length, 21);
  t.equal(doc.ads[1]!.inline!.impressions.length, 5);
  const w = doc.ads[8]!.wrapper!;
  t.equal(w.vastAdTagUri, 'https://track.adform.net/serving/videoad/?bn=32475067&v=2&ord=1570098978284');
});

t.test('wrappers: tag URI, impressions, tracking of every linear creative, VAST 4 attributes', async (t) => {
  const a = vast('vast-client-js/wrapper-a.xml');
  t.equal(a.ads.length, 2);
  const w = a.ads[0]!.wrapper!;
  t.equal(a.ads[0]!.id, '4321');
  t.equal(w.vastAdTagUri, 'wrapper-b.xml');
  t.equal(w.adSystem, 'VAST');
  t.same(w.impressions, ['http://example.com/wrapperA-impression']);
  t.same(w.errors, ['http://example.com/wrapperA-error']);
  t.same(
    w.tracking.start,
    ['http://example.com/wrapperA-linear-start1', 'http://example.com/wrapperA-linear-start2'],
    'non-linear tracking skipped',
  );
  t.same(w.tracking.complete, ['http://example.com/wrapperA-linear-complete']);
  t.equal(w.tracking.progress!.length, 3);
  t.equal(w.clickTrackings.length, 3);
  t.equal(a.ads[1]!.wrapper!.vastAdTagUri, 'vpaid.xml');

  const legacy = vast('vast-client-js/wrapper-legacy.xml');
  t.equal(legacy.ads[0]!.wrapper!.vastAdTagUri, 'inline-linear.xml', 'VAST 1 style VASTAdTagURL/URL');
  t.same(legacy.errors, ['http://example.com/wrapper-error'], 'root-level Error');

  const attrs = vast('vast-client-js/wrapper-attributes-multiple-ads.xml').ads.map((ad) => [
    ad.id,
    ad.wrapper!.allowMultipleAds,
    ad.wrapper!.followAdditionalWrappers,
  ]);
  t.same(attrs, [
    ['201', undefined, undefined],
    ['202', false, false],
    ['203', true, true],
    ['204', true, false],
  ]);
  const multi = vast('vast-client-js/wrapper-multiple-ads.xml');
  t.same(
    multi.ads.map((ad) => ad.sequence),
    [undefined, 1, 2, undefined],
  );
});

t.test('VAST 1 wrapper tracking directly under Wrapper', async (t) => {
  const doc = parseVast(
    '<VAST version="2.0"><Ad id="w"><Wrapper><VASTAdTagURI>http://x/v</VASTAdTagURI><TrackingEvents><Tracking event="start">http://x/s</Tracking></TrackingEvents></Wrapper></Ad></VAST>',
  );
  t.same(doc.ads[0]!.wrapper!.tracking, { start: ['http://x/s'] });
});

t.test('no-ad answers and ads without linear creatives', async (t) => {
  const empty = vast('vast-client-js/empty-no-ad.xml');
  t.equal(empty.ads.length, 0);
  t.same(empty.errors, ['http://example.com/empty-no-ad']);
  t.same(parseVast('<VAST version="4.0"/>'), { version: '4.0', ads: [], errors: [] });
  t.equal(vast('vast-client-js/empty-no-creative.xml').ads[0]!.inline!.linears.length, 0);
  const v1 = vast('vast-client-js/outdated-vast.xml');
  t.equal(v1.version, '1.0');
  t.equal(v1.ads.length, 1);
  t.equal(v1.ads[0]!.inline!.linears.length, 0, 'VAST 1 <Video> is not read');
  t.equal(vast('vast-client-js/vpaid.xml').ads[0]!.inline!.linears[0]!.durationSec, 0, 'missing Duration reads as 0');
  const noKind = parseVast('<VAST version="3.0"><Ad id="odd"/></VAST>');
  t.same(noKind.ads, [{ id: 'odd' }]);
});

t.test('UniversalAdId: 4.0 attribute or 4.1 text, "unknown" is no id, the first real one wins', async (t) => {
  const creative = (ids: string) =>
    parseVast(
      `<VAST version="4.1"><Ad id="a"><InLine><AdSystem>x</AdSystem><AdTitle>t</AdTitle><Impression>https://i.example/</Impression><Creatives><Creative id="c">${ids}<Linear><Duration>00:00:10</Duration><MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="640" height="360">https://m.example/a.mp4</MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>`,
    ).ads[0]!.inline!.linears[0]!.universalAdId;
  t.same(
    creative('<UniversalAdId idRegistry="Ad-ID" idValue="ABCD0001000H">ABCD0001000H</UniversalAdId>'),
    { idRegistry: 'Ad-ID', idValue: 'ABCD0001000H' },
    '4.0: attribute and text',
  );
  t.same(
    creative('<UniversalAdId idRegistry="Ad-ID" idValue="ABCD0001000H"/>'),
    { idRegistry: 'Ad-ID', idValue: 'ABCD0001000H' },
    '4.0: the attribute alone',
  );
  t.same(
    creative('<UniversalAdId idRegistry="clearcast.co.uk"> <![CDATA[AAA/BBBB123/030]]> </UniversalAdId>'),
    { idRegistry: 'clearcast.co.uk', idValue: 'AAA/BBBB123/030' },
    '4.1: the text, trimmed',
  );
  t.equal(
    creative('<UniversalAdId idRegistry="unknown" idValue="unknown">unknown</UniversalAdId>'),
    undefined,
    '"unknown" (what our own VAST writer sends) is not an id',
  );
  t.equal(
    creative('<UniversalAdId idRegistry="Ad-ID">unknown</UniversalAdId>'),
    undefined,
    'nor is an unknown value in a known registry',
  );
  t.equal(creative('<UniversalAdId>8465</UniversalAdId>'), undefined, 'a value without a registry is not reliable');
  t.same(
    creative(
      '<UniversalAdId idRegistry="unknown">unknown</UniversalAdId><UniversalAdId idRegistry="Ad-ID">8465</UniversalAdId>',
    ),
    { idRegistry: 'Ad-ID', idValue: '8465' },
    'the first real one of several (4.1 allows more than one)',
  );
  t.equal(
    creative(`<UniversalAdId idRegistry="Ad-ID">${'x'.repeat(300)}</UniversalAdId>`),
    undefined,
    'an over-long value is not taken as an id',
  );
  t.equal(creative(''), undefined, 'none: absent');
});

t.test('refused documents', async (t) => {
  t.throws(() => vast('vast-client-js/invalid-xmlfile.xml'), { name: 'AdXmlError', code: 'malformed' });
  t.throws(() => parseVast('<VMAP/>'), { name: 'AdXmlError', code: 'malformed' });
  t.throws(() => parseVast('<!DOCTYPE VAST><VAST/>'), { name: 'AdXmlError', code: 'doctype' });
  t.notOk(isVast(parseXml('<vmap:VMAP/>')));
  t.ok(isVast(parseXml('<VAST/>')));
});

t.test('durations', async (t) => {
  t.equal(parseVastDuration('00:00:16'), 16);
  t.equal(parseVastDuration(' 01:02:03.250 '), 3723.25);
  t.equal(parseVastDuration('30'), 30);
  t.equal(parseVastDuration('15.5'), 15.5);
  for (const bad of ['', 'abc', '00:16', '-1', '00:00:xx', undefined])
    t.equal(parseVastDuration(bad), undefined, String(bad));
  t.equal(formatVastDuration(16), '00:00:16.000');
  t.equal(formatVastDuration(90.123), '00:01:30.123');
  t.equal(formatVastDuration(59.9996), '00:01:00.000');
  t.equal(formatVastDuration(3723.25), '01:02:03.250');
  t.equal(formatVastDuration(Number.NaN), '00:00:00.000');
});

// Every VAST fixture copied into the project. The IAB samples of ../shared/fixtures are not copyable
// (their LICENSE grants nothing: test/fixtures/SOURCES.md); the copied set spans VAST 2.0 to 4.x.
t.test('every VAST fixture parses or is refused cleanly', async (t) => {
  const files = fixtureFiles('vast', ['.xml']);
  t.equal(files.length, 18, 'VAST fixtures read');
  const refused: string[] = [];
  for (const name of files) {
    try {
      t.ok(Array.isArray(parseVast(fixture(name)).ads), name);
    } catch (err) {
      t.ok(err instanceof AdXmlError, `${name} refused with AdXmlError`);
      refused.push(name);
    }
  }
  t.same(refused, ['vast/vast-client-js/invalid-xmlfile.xml'], 'only the intentionally invalid file is refused');
});
