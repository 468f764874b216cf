/** The cue monitor's pure trigger logic: what a sequence of playlist refreshes starts, ends and ignores. */
import t from 'tap';
import { readHlsCues } from '../../../lib/scte35/index.js';
import { cueActions, segmentStart, sequenceOffsetMs, type CueAction } from '../../../lib/squeeze/monitor/trigger.js';
import { spliceInsert, spliceInsertCancel } from '../../../lib/sim/scte35-encode.js';

const EPOCH = Date.UTC(2026, 0, 1);
const rules = (nowMs: number) => ({ nowMs, defaultDurationSec: 120, maxDurationSec: 600 });
/** splice_insert out of network, event 7, at a PTS, 30 s. */
const INSERT_OUT = spliceInsert(7, 10, { durationSec: 30 }).toString('base64');
const PROGRAM = '/DBIAAAAAAAA///wBQb+ek2ItgAyAhdDVUVJSAAAGH+fCAgAAAAALMvDRBEAAAIXQ1VFSUgAABl/nwgIAAAAACyk26AQAACZcuND';
const INSERT_CANCEL = spliceInsertCancel(448).toString('base64');

/** A live window of 1 s segments [first, last] with cue lines before chosen sequences. */
function playlist(first: number, last: number, cues: Record<number, string[]>, pdt = true): string {
  const out = ['#EXTM3U', '#EXT-X-TARGETDURATION:1', `#EXT-X-MEDIA-SEQUENCE:${first}`];
  for (let s = first; s <= last; s++) {
    out.push(...(cues[s] ?? []));
    if (pdt) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(EPOCH + s * 1000).toISOString()}`);
    out.push('#EXTINF:1.000,', `seg_${s}.ts`);
  }
  return out.join('\n') + '\n';
}

const brief = (a: CueAction) =>
  `${a.type}${a.type === 'ignore' ? `:${a.reason}` : ''}@${a.segment.media_sequence}${a.type === 'start' ? `/${a.durationSec}s` : ''}`;

t.test('refreshes of a live window: each cue acts once, in playlist order', async (t) => {
  const cues: Record<number, string[]> = {
    12: [`#EXT-OATCLS-SCTE35:${INSERT_OUT}`, '#EXT-X-CUE-OUT:30'],
    13: ['#EXT-X-CUE-OUT-CONT:ElapsedTime=1,Duration=30'],
    15: ['#EXT-X-CUE-IN'],
    18: [
      `#EXT-X-DATERANGE:ID="p1",START-DATE="2026-01-01T00:00:18Z",SCTE35-OUT=0x${Buffer.from(PROGRAM, 'base64').toString('hex')}`,
    ],
    20: ['#EXT-X-CUE-OUT:DURATION=8'],
    22: [`#EXT-X-SCTE35:CUE="${INSERT_CANCEL}"`],
  };
  let seen = new Set<string>();
  const log: string[][] = [];
  for (let last = 10; last <= 25; last++) {
    const r = cueActions(
      readHlsCues(playlist(Math.max(0, last - 8), last, cues)),
      seen,
      rules(EPOCH + (last + 1) * 1000),
    );
    seen = r.seen;
    log.push(r.actions.map(brief));
  }
  t.same(
    log.flat(),
    ['start@12/30s', 'ignore:cont@13', 'end@15', 'ignore:other@18', 'start@20/8s', 'end@22'],
    'every cue once, whatever the number of refreshes',
  );
  const start = cueActions(readHlsCues(playlist(10, 12, cues)), new Set(), rules(EPOCH + 13_000)).actions[0]!;
  t.match(
    start,
    {
      type: 'start',
      atMs: EPOCH + 12_000,
      estimated: false,
      durationSec: 30,
      cue: { dialect: 'cue-out', key: 'splice_insert:7:900000' },
    },
    'the binary’s duration and key; the segment’s PDT',
  );
  t.ok(seen.size <= 9 * 2, 'claims that left the window are forgotten');
});

t.test('a restarted monitor re-reads every cue of the window (the Postgres claim keeps it once)', async (t) => {
  const cues = { 5: ['#EXT-X-CUE-OUT:20'], 6: ['#EXT-X-CUE-OUT-CONT:1/20'] };
  const text = playlist(0, 8, cues);
  const first = cueActions(readHlsCues(text), new Set(), rules(EPOCH + 9000));
  const again = cueActions(readHlsCues(text), new Set(), rules(EPOCH + 9000));
  t.same(
    first.actions.map((a) => a.claim),
    again.actions.map((a) => a.claim),
    'the same claims: keys do not depend on the process',
  );
  t.same(first.actions.map(brief), ['start@5/20s', 'ignore:cont@6']);
});

t.test('an out/in pair sharing a DATERANGE ID: two claims', async (t) => {
  const hex = (b64: string) => `0x${Buffer.from(b64, 'base64').toString('hex')}`;
  const text = playlist(0, 6, {
    2: [`#EXT-X-DATERANGE:ID="b1",START-DATE="2026-01-01T00:00:02Z",PLANNED-DURATION=30,SCTE35-OUT=${hex(INSERT_OUT)}`],
    4: [
      `#EXT-X-DATERANGE:ID="b1",START-DATE="2026-01-01T00:00:02Z",SCTE35-IN=${hex(spliceInsert(7, 14, 'in').toString('base64'))}`,
    ],
  });
  const { actions } = cueActions(readHlsCues(text), new Set(), rules(EPOCH + 7000));
  t.same(
    actions.map((a) => a.claim),
    ['daterange:b1|out', 'daterange:b1|in'],
  );
  t.equal(actions[0]!.type, 'start');
  t.equal(actions[1]!.type, 'end', 'the IN ends the break');
});

t.test('durations: bounded by the API, a bare CUE-OUT takes the default, a stale cue starts nothing', async (t) => {
  const text = playlist(100, 110, { 101: ['#EXT-X-CUE-OUT'], 103: ['#EXT-X-CUE-OUT:5000'], 104: ['#EXT-X-CUE-OUT:2'] });
  const { actions } = cueActions(readHlsCues(text), new Set(), rules(EPOCH + 111_000));
  t.same(actions.map(brief), ['start@101/120s', 'start@103/600s', 'ignore:stale@104']);
});

t.test('bad and unknown cues are ignored, never thrown', async (t) => {
  const text = playlist(0, 4, {
    1: ['#EXT-OATCLS-SCTE35:/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoX', '#EXT-X-CUE-OUT:30'],
    2: ['#EXT-X-SPLICEPOINT-SCTE35:not-a-cue'],
    3: ['#EXT-X-SPLICEPOINT-SCTE35:/DARAAAAAAAAAP/wAAAAAHpPv/8='],
  });
  const { actions } = cueActions(readHlsCues(text), new Set(), rules(EPOCH + 5000));
  t.same(
    actions.map(brief),
    ['ignore:error@1', 'ignore:error@2', 'ignore:other@3'],
    'a bad CRC under a CUE-OUT starts nothing; a splice_null means nothing',
  );
  t.equal(actions[0]!.cue.error?.code, 'crc');
});

t.test('no program date-time: the segment start is counted back from the live edge', async (t) => {
  const text = playlist(50, 59, { 55: ['#EXT-X-CUE-OUT:10'] }, false);
  const reading = readHlsCues(text);
  const now = 1_000_000;
  t.same(
    segmentStart(reading.segments, 5, now),
    { atMs: now - 5000, estimated: true },
    'five 1 s segments from it to the edge',
  );
  const { actions } = cueActions(reading, new Set(), rules(now));
  t.match(actions, [{ type: 'start', atMs: now - 5000, estimated: true, durationSec: 10 }]);
});

t.test('cues after the last segment wait for their segment', async (t) => {
  const text = playlist(0, 3, {}) + '#EXT-X-CUE-OUT:10\n';
  const r = cueActions(readHlsCues(text), new Set(), rules(EPOCH + 4000));
  t.same(r.actions, []);
  t.equal(r.seen.size, 0);
});

t.test('sequenceOffsetMs: a cue-in placed by EXTINF durations from the break’s first segment (no PDT)', async (t) => {
  const text = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:6',
    '#EXT-X-MEDIA-SEQUENCE:50',
    ...[6, 4, 5, 6, 3].flatMap((d, i) => [`#EXTINF:${d},`, `s${50 + i}.ts`]),
    '',
  ].join('\n');
  const segments = readHlsCues(text).segments;
  t.equal(sequenceOffsetMs(segments, 51, 54), 15_000, '4 + 5 + 6 s after the break’s first segment');
  t.equal(sequenceOffsetMs(segments, 51, 51), 0);
  t.equal(sequenceOffsetMs(segments, 52, 51), -4000, 'before the start: negative');
  t.equal(sequenceOffsetMs(segments, 40, 54), undefined, 'the first segment left the playlist: unknown');
});
