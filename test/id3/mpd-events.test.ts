import t from 'tap';
import { mpdEvents, mpdEventTags, segmentIndexAt } from '../../lib/id3/index.js';
import { fixture } from '../helpers/fixtures.js';
import { id3, txxx } from '../helpers/id3-writer.js';

t.test('EventStream events of a fixture MPD, with their stream scheme, value and timescale', async (t) => {
  const events = mpdEvents(fixture('dash/androidx-media/sample_mpd_event_stream.mpd'));
  t.equal(events.length, 5);
  t.match(events[0], {
    periodIndex: 0,
    schemeIdUri: 'urn:uuid:XYZY',
    value: 'call',
    timescale: 1000,
    presentationTime: 0,
    duration: 10000,
    id: '0',
    messageData: '+ 1 800 10101010',
  });
  t.match(events[1], {
    schemeIdUri: 'urn:uuid:with-pto',
    presentationTimeOffset: 4000,
    presentationTime: 5000,
    messageData: 'pt=1s',
  });
  t.match(events[2], { schemeIdUri: 'urn:dvb:iptv:cpm:2014', timescale: 1, presentationTime: 300 });
  t.match(events[2]!.messageData, /^<BroadcastEvent>/);
  t.match(events[3]!.messageData, /scte35:Signal/);
  t.same(mpdEventTags(events[0]!), [
    { value: '+ 1 800 10101010', metadata: { timescale: 1000, presentation_time: 0 } },
  ]);
});

t.test('InbandEventStream is not an MPD event; DOCTYPE and garbage give none', async (t) => {
  t.same(mpdEvents(fixture('dash/eyevinn-dash-mpd/go-dash-fixtures/inband_event_stream.mpd')), []);
  t.same(
    mpdEvents(
      '<!DOCTYPE x [<!ENTITY a "b">]><MPD><Period><EventStream schemeIdUri="s"><Event/></EventStream></Period></MPD>',
    ),
    [],
  );
  t.same(mpdEvents('not xml <'), []);
});

t.test('DAI-style ad Period events and base64 ID3 events', async (t) => {
  const tag = id3([txxx('', 'google_1234')]).toString('base64');
  const mpd = `<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011">
    <Period id="dai_pod-0001065804-ad-1"><EventStream schemeIdUri="urn:google:dai:2018" timescale="1000">
      <Event presentationTime="2000" duration="1000" messageData="google_5555"/>
    </EventStream><EventStream schemeIdUri="https://aomedia.org/emsg/ID3" timescale="90000">
      <Event presentationTime="180000" id="9" contentEncoding="base64">${tag}</Event>
      <Event presentationTime="270000" contentEncoding="base64">AAEC</Event>
    </EventStream></Period></MPD>`;
  const events = mpdEvents(mpd);
  t.same(
    events.map((e) => e.periodId),
    ['dai_pod-0001065804-ad-1', 'dai_pod-0001065804-ad-1', 'dai_pod-0001065804-ad-1'],
  );
  t.same(mpdEventTags(events[0]!), [{ value: 'google_5555', metadata: { timescale: 1000, presentation_time: 2000 } }]);
  t.same(mpdEventTags(events[1]!), [
    { frame: 'TXXX', description: '', value: 'google_1234', metadata: { timescale: 90000, presentation_time: 180000 } },
  ]);
  t.same(mpdEventTags(events[2]!), [
    { value: 'AAEC', data: 'AAEC', metadata: { timescale: 90000, presentation_time: 270000 } },
  ]);
});

t.test('an event goes to the segment whose time range holds it', async (t) => {
  const starts = [0, 2000, 4000];
  const durations = [2000, 2000, 2000];
  t.equal(segmentIndexAt(0, starts, durations), 0);
  t.equal(segmentIndexAt(1999, starts, durations), 0);
  t.equal(segmentIndexAt(2000, starts, durations), 1, 'a boundary belongs to the later segment');
  t.equal(segmentIndexAt(5999, starts, durations), 2);
  t.equal(segmentIndexAt(6000, starts, durations), -1);
  t.equal(segmentIndexAt(-1, starts, durations), -1);
});
