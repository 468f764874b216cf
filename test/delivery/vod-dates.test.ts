/**
 * The dates of VOD answers (lib/delivery/vod-dates.ts), with the clock passed in: a body version keeps
 * its date, a changed body never gets one a client's If-Modified-Since could match.
 */
import t from 'tap';
import { VodDates } from '../../lib/delivery/vod-dates.js';

const A = Buffer.from('#EXTM3U\n#EXTINF:6,\na.ts\n#EXT-X-ENDLIST\n');
const B = Buffer.from('#EXTM3U\n#EXTINF:6,\nb.ts\n#EXT-X-ENDLIST\n');
const C = Buffer.from('#EXTM3U\n#EXTINF:6,\nc.ts\n#EXT-X-ENDLIST\n');
const START = Date.UTC(2026, 0, 1, 12);

t.test("the upstream's date, never earlier than the state this instance rendered under", async (t) => {
  const d = new VodDates(0, 0, START);
  t.equal(d.dateOf('/v', A, START + 5_500, 0, 0, START + 9_000), START + 5_000, "the upstream's, in whole seconds");
  t.equal(d.dateOf('/v', A, START + 5_500, 0, 0, START + 60_000), START + 5_000, 'the same body keeps it');
  t.equal(d.dateOf('/old', A, START - 86_400_000, 0, 0, START + 9_000), START, 'an older upstream date: the start');
  // The settings change (generation 1) is seen at +70 s: the upstream date stays, the body changed.
  t.equal(d.dateOf('/v', B, START + 5_500, 1, 0, START + 70_400), START + 70_000, 'a state change: when it was seen');
});

t.test('without an upstream date: when this version was first made', async (t) => {
  const d = new VodDates(0, 0, START);
  t.equal(d.dateOf('/m', A, undefined, 0, 0, START + 3_700), START + 3_000);
  t.equal(d.dateOf('/m', A, undefined, 0, 0, START + 50_000), START + 3_000, 'kept while the body is the same');
  t.equal(d.dateOf('/m', B, undefined, 0, 0, START + 51_000), START + 51_000, 'a new body: a new date');
});

t.test('two versions in one second: the second goes out undated, and no later one reuses a date', async (t) => {
  const d = new VodDates(0, 0, START);
  t.equal(d.dateOf('/s', A, undefined, 0, 0, START + 10_100), START + 10_000);
  t.equal(d.dateOf('/s', B, undefined, 0, 0, START + 10_600), undefined, 'same second: no Last-Modified');
  t.equal(d.dateOf('/s', B, undefined, 0, 0, START + 10_900), undefined, 'and it stays undated');
  t.equal(d.dateOf('/s', C, undefined, 0, 0, START + 10_950), undefined, 'a third one in that second too');
  t.equal(d.dateOf('/s', A, undefined, 0, 0, START + 11_200), START + 11_000, 'back to A: a new, later date');
  // An upstream that keeps its date across a change gets no date at or before one already stated.
  const u = new VodDates(0, 0, START);
  t.equal(u.dateOf('/u', A, START + 1_000, 0, 0, START + 2_000), START + 1_000);
  t.equal(u.dateOf('/u', B, START + 1_000, 0, 0, START + 2_500), START + 2_000, 'same upstream date, new body: now');
});
