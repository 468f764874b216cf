/**
 * The one MPD reader off the hot path (lib/dash/mpd.ts) and the one ISO 8601 duration reader
 * (lib/dash/duration.ts), issue 28 item 3. The stitcher, ID3 inspection and the ladder profile
 * tests pin what each makes of them; these pin the readers themselves.
 */
import t from 'tap';
import {
  formatIsoDuration,
  mpdRootAttribute,
  parseIsoDuration,
  parseXsDuration,
  periodTimings,
  readMpd,
} from '../../lib/dash/index.js';
import { XmlError, attrOf } from '../../lib/xml/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

t.test('ISO 8601 durations: days, hours, minutes, seconds; years, months and empty forms refused', async (t) => {
  t.equal(parseXsDuration('PT1H2M3.5S'), 3723.5);
  t.equal(parseXsDuration(' P1DT1S '), 86401);
  t.equal(parseXsDuration('PT0S'), 0);
  t.equal(parseXsDuration('P2D'), 172800);
  for (const bad of ['P', 'PT', 'P1DT', 'P1Y', 'P1M', '1S', '', 'PT-1S', 'PT1.S'])
    t.ok(Number.isNaN(parseXsDuration(bad)), `NaN: ${JSON.stringify(bad)}`);
  t.ok(Number.isNaN(parseXsDuration(undefined)));
  t.equal(parseIsoDuration('PT6M16S'), 376);
  t.equal(parseIsoDuration('PT'), undefined);
  t.equal(parseIsoDuration(undefined), undefined);
  t.equal(formatIsoDuration(12.3456), 'PT12.346S');
  t.equal(formatIsoDuration(12.3451, 'ceil'), 'PT12.346S', 'ceil: a window never ends inside its first segment');
  t.equal(formatIsoDuration(12, 'ceil'), 'PT12S');
  for (const sec of [0, 0.001, 1.5, 59.999, 3600, 12345.678])
    t.equal(parseXsDuration(formatIsoDuration(sec)), sec, `round trip ${sec}`);
});

const MPD = `<?xml version="1.0"?>
<!-- <MPD type="dynamic"> in a comment is not the root -->
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT60S">
  <Period id="a" start="PT0S" duration="PT10S"/>
  <Period id="b"/>
  <Period id="c" start="PT30S"/>
  <Period id="d"/>
</MPD>`;

t.test('readMpd: an MPD root, or undefined; refused XML is an XmlError', async (t) => {
  const m = readMpd(MPD);
  t.ok(m);
  t.equal(attrOf(m!.root, 'type'), 'static');
  t.equal(readMpd('<VAST version="4.0"/>'), undefined, 'not an MPD');
  t.throws(() => readMpd('<MPD><Period></MPD>'), XmlError);
  t.throws(() => readMpd('<!DOCTYPE MPD><MPD/>'), { name: 'XmlError', code: 'doctype' });
  t.throws(() => readMpd(`<MPD>${' '.repeat(100)}</MPD>`, { maxBytes: 50 }), { code: 'too-large' });
});

t.test(
  'periodTimings: @start, else the previous end; @duration, else to the next @start, else to the end',
  async (t) => {
    const timings = periodTimings(readMpd(MPD)!.root).map((p) => [attrOf(p.el, 'id'), p.start, p.duration]);
    t.same(timings, [
      ['a', 0, 10],
      ['b', 10, 20],
      ['c', 30, 30],
      ['d', 60, 0],
    ]);
    const open = periodTimings(readMpd('<MPD type="dynamic"><Period id="x"/><Period id="y"/></MPD>')!.root);
    t.same(
      open.map((p) => [p.start, p.duration]),
      [
        [0, undefined],
        [NaN, undefined],
      ],
      'nothing says how long a live Period is, nor where the next starts',
    );
  },
);

t.test('mpdRootAttribute: the root element’s attribute with the tag scanner, comments stepped over', async (t) => {
  t.equal(mpdRootAttribute(MPD, 'mediaPresentationDuration'), 'PT60S');
  t.equal(mpdRootAttribute(MPD, 'type'), 'static');
  t.equal(mpdRootAttribute(MPD, 'minBufferTime'), undefined);
  t.equal(mpdRootAttribute('<VAST mediaPresentationDuration="PT1S"/>', 'mediaPresentationDuration'), undefined);
});

t.test('the corpus: the scanner and the document read the same root attributes', async (t) => {
  let n = 0;
  for (const f of fixtureFiles('dash', ['.mpd'])) {
    const text = fixture(f);
    let m;
    try {
      m = readMpd(text);
    } catch {
      continue; // refused XML: the scanner has no document to agree with
    }
    if (!m) continue;
    n++;
    for (const name of ['type', 'mediaPresentationDuration', 'timeShiftBufferDepth', 'minBufferTime'])
      t.equal(mpdRootAttribute(text, name), attrOf(m.root, name), `${f} @${name}`);
  }
  t.ok(n > 40, `${n} MPDs`);
});
