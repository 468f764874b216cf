import t from 'tap';
import { readHlsCues, type HlsCue } from '../../lib/scte35/index.js';
import { fixture } from '../helpers/fixtures.js';
import { header, section, spliceTimeHex, u32 } from '../helpers/scte35.js';

const MEDIATAILOR = '/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoh'; // splice_insert out, event 448, 24 s
const PPO_START = '/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg=='; // 0x34, 307 s
const PPO_END = '/DAvAAAAAAAA///wBQb+dGKQoAAZAhdDVUVJSAAAjn+fCAgAAAAALKChijUCAKnMZ1g='; // 0x35
const PROGRAM = '/DBIAAAAAAAA///wBQb+ek2ItgAyAhdDVUVJSAAAGH+fCAgAAAAALMvDRBEAAAIXQ1VFSUgAABl/nwgIAAAAACyk26AQAACZcuND'; // 0x11 + 0x10
const INSERT_CANCEL = section(header(5, 0x05) + u32(448) + 'ff' + '0000').toString('base64');
const hex = (b64: string) => `0x${Buffer.from(b64, 'base64').toString('hex').toUpperCase()}`;

function all(text: string): (HlsCue & { msn: number })[] {
  const r = readHlsCues(text);
  return [
    ...r.segments.flatMap((s) => s.cues.map((c) => ({ ...c, msn: s.media_sequence }))),
    ...r.pending.map((c) => ({ ...c, msn: -1 })),
  ];
}

const mixed = [
  '#EXTM3U',
  '#EXT-X-TARGETDURATION:6',
  '#EXT-X-MEDIA-SEQUENCE:50',
  '#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z',
  `#EXT-OATCLS-SCTE35:${MEDIATAILOR}`,
  '#EXT-X-CUE-OUT:20.020',
  '#EXTINF:6.0,',
  's50.ts',
  `#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=21,SCTE35=${MEDIATAILOR}`,
  '#EXTINF:6.0,',
  's51.ts',
  '#EXT-X-CUE-OUT-CONT:12/21',
  '#EXTINF:6.0,',
  's52.ts',
  '#EXT-X-CUE-IN',
  '#EXTINF:6.0,',
  's53.ts',
  `#EXT-X-DATERANGE:ID="p1",START-DATE="2026-01-01T00:00:24Z",SCTE35-OUT=${hex(PROGRAM)}`,
  '#EXTINF:6.0,',
  's54.ts',
  `#EXT-X-CUE:ID="a1",TYPE="SpliceOut",DURATION="300",TIME="100",CUE="${PPO_START}"`,
  '#EXTINF:6.0,',
  's55.ts',
  `#EXT-X-SPLICEPOINT-SCTE35:${PPO_END}`,
  '#EXTINF:6.0,',
  's56.ts',
  `#EXT-X-SCTE35:CUE="${INSERT_CANCEL}",CUE-OUT=YES`,
  '#EXTINF:6.0,',
  's57.ts',
  '#EXT-X-SCTE35:CUE-OUT=YES,DURATION=15',
  '#EXTINF:6.0,',
  's58.ts',
  '#EXT-X-DATERANGE:ID="x",START-DATE="2026-01-01T00:00:54Z",SCTE35-IN=0xZZ',
  '#EXT-X-SPLICEPOINT-SCTE35:not-a-cue',
  '#EXTINF:6.0,',
  's59.ts',
  '#EXT-X-CUE-IN',
].join('\n');

t.test('a playlist mixing every dialect', async (t) => {
  const r = readHlsCues(mixed);
  t.equal(r.segments.length, 10);
  t.match(r.segments[0], {
    index: 0,
    media_sequence: 50,
    duration: 6,
    uri: 's50.ts',
    program_date_time_ms: Date.parse('2026-01-01T00:00:00Z'),
  });
  t.equal(r.segments[3]!.program_date_time_ms, Date.parse('2026-01-01T00:00:18Z'), 'PDT carried forward by EXTINF');
  const cues = all(mixed);
  t.same(
    cues.map((c) => [c.msn, c.kind, c.dialect]),
    [
      [50, 'out', 'cue-out'],
      [51, 'cont', 'cue-out-cont'],
      [52, 'cont', 'cue-out-cont'],
      [53, 'in', 'cue-in'],
      [54, 'other', 'daterange'],
      [55, 'out', 'adobe-cue'],
      [56, 'in', 'splicepoint'],
      [57, 'cancel', 'elemental'],
      [58, 'out', 'elemental'],
      [59, 'in', 'daterange'],
      [59, 'other', 'splicepoint'],
      [-1, 'in', 'cue-in'],
    ],
  );
  const [out, cont, cont2, , program, adobe, , , bare, badIn, badOther, pending] = cues;
  t.match(out, {
    binary_tag: `#EXT-OATCLS-SCTE35:${MEDIATAILOR}`,
    duration_sec: 24,
    key: 'splice_insert:448:msn50',
    scte35: { splice_command: { splice_event_id: 448 } },
  });
  t.match(
    cont,
    { elapsed_sec: 6, duration_sec: 24, key: 'splice_insert:448:msn51' },
    'binary duration before the CONT Duration; no PTS: keyed by its segment',
  );
  t.match(cont2, { elapsed_sec: 12, duration_sec: 21, key: 'msn:52:cont' });
  t.match(program, { id: 'p1', key: 'daterange:p1' }, 'a program boundary never triggers even under SCTE35-OUT');
  t.match(
    adobe,
    { id: 'a1', duration_sec: 307, key: 'time_signal:1207959694:1924989008' },
    'binary duration before the tag DURATION',
  );
  t.match(bare, { duration_sec: 15, key: 'msn:58:out' });
  t.match(
    badIn,
    { kind: 'in', error: { code: 'encoding' }, key: 'daterange:x' },
    'the tag says in: undecodable binary does not change that',
  );
  t.match(badOther, { kind: 'other', error: { code: 'encoding' } });
  t.equal(pending!.key, 'msn:60:in', 'a cue after the last URI is keyed with the next media sequence');
});

t.test('CONT never yields out, even with an out binary; bare CUE-OUT forms parse', async (t) => {
  const forms = [
    '#EXT-X-CUE-OUT',
    '#EXT-X-CUE-OUT:20.020',
    '#EXT-X-CUE-OUT:DURATION=20',
    '#EXT-X-CUE-OUT:DURATION="19.0"',
    '#EXT-X-CUE-OUT:"19.0"',
  ];
  const text = [
    '#EXTM3U',
    ...forms.flatMap((f, i) => [f, '#EXTINF:2,', `a${i}.ts`]),
    `#EXT-X-CUE-OUT-CONT:ElapsedTime=2,Duration=24,SCTE35=${MEDIATAILOR}`,
    '#EXTINF:2,',
    'b.ts',
  ].join('\n');
  const cues = all(text);
  t.same(
    cues.map((c) => [c.kind, c.duration_sec]),
    [
      ['out', undefined],
      ['out', 20.02],
      ['out', 20],
      ['out', 19],
      ['out', 19],
      ['cont', 24],
    ],
  );
});

t.test('cancel: splice_event_cancel_indicator and segmentation_event_cancel_indicator', async (t) => {
  const segCancel = section(
    header(5, 0x06) + spliceTimeHex(0) + '000b' + '0209' + u32(0x43554549) + u32(5) + 'ff',
  ).toString('base64');
  const text = [
    '#EXTM3U',
    `#EXT-OATCLS-SCTE35:${INSERT_CANCEL}`,
    '#EXT-X-CUE-OUT:30',
    '#EXTINF:2,',
    'a.ts',
    `#EXT-X-SPLICEPOINT-SCTE35:${segCancel}`,
    '#EXTINF:2,',
    'b.ts',
  ].join('\n');
  t.same(
    all(text).map((c) => c.kind),
    ['cancel', 'cancel'],
  );
});

t.test('real cues mix descriptor types: every one is checked', async (t) => {
  // MediaPackage: SCTE35-CMD with 0x11 program end + 0x10 program start → other; 0x30 provider ad start → out.
  const cues = all(fixture('hls/aws-mediapackage-docs/mediapackage-daterange-scte35-cmd.m3u8'));
  t.same(
    cues.map((c) => c.kind),
    ['out', 'other', 'other', 'other'],
  );
  // Comcast: 0x20 chapter and 0x10 program under SCTE35-OUT never trigger; 0x22 break and 0x30 ad do.
  const comcast = all(fixture('hls/comcast-mamba/hls_variant_playlist_with_daterange_metadata.m3u8'));
  t.same(
    comcast.map((c) => [c.id, c.kind]),
    [
      ['3-0x20-1585221432', 'other'],
      ['1-0x22-1585221985', 'out'],
      ['5-0x30-1585221985', 'out'],
      ['2-0x10-1585219520', 'other'],
      ['1-0x22-1585221985', 'in'],
      ['5-0x30-1585221985', 'in'],
      ['3-0x20-1585222015', 'other'],
    ],
  );
});

t.test('redundant tags for one break on one segment share a key (DATERANGE + CUE-OUT)', async (t) => {
  const cues = all(fixture('hls/carlanton-m3u8-parser/media/media-playlist-with-date-range-and-cue-out-cue-in.m3u8'));
  t.same(
    cues.map((c) => [c.kind, c.dialect, c.key, c.duration_sec]),
    [
      ['out', 'daterange', 'daterange:20', 19],
      ['out', 'cue-out', 'daterange:20', 19],
      ['in', 'cue-in', 'msn:4:in', undefined],
    ],
  );
});

t.test('Elemental tags with elided payloads still say out and in', async (t) => {
  t.same(
    all(fixture('hls/kuu-hls-parser/SCTE-35_05.m3u8')).map((c) => [c.kind, c.duration_sec, c.id, c.error?.code]),
    [
      ['out', 15, 'pIViS5', 'encoding'],
      ['in', undefined, 'f6UrRd', 'encoding'],
    ],
  );
});

t.test('keys are stable across refreshes of a live playlist', async (t) => {
  function snapshot(first: number, last: number): string {
    const out = ['#EXTM3U', '#EXT-X-TARGETDURATION:6', `#EXT-X-MEDIA-SEQUENCE:${first}`];
    for (let n = first; n <= last; n++) {
      if (n === 103) out.push('#EXT-X-CUE-OUT:30');
      if (n === 104) out.push(`#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=30`);
      if (n === 105) out.push(`#EXT-OATCLS-SCTE35:${PPO_START}`, '#EXT-X-CUE-OUT:307');
      if (n === 106)
        out.push(
          '#EXT-X-DATERANGE:ID="b7",START-DATE="2026-01-01T00:00:00Z",PLANNED-DURATION=30,SCTE35-OUT=' +
            hex(MEDIATAILOR),
        );
      out.push('#EXTINF:6,', `s${n}.ts`);
    }
    return out.join('\n');
  }
  const keys = (text: string) => new Map(all(text).map((c) => [`${c.msn}/${c.dialect}`, c.key]));
  const a = keys(snapshot(100, 106));
  const b = keys(snapshot(102, 108));
  t.equal(a.size, 4);
  for (const [where, key] of a) t.equal(b.get(where), key, `${where} keeps ${key}`);
  t.same([...a.values()], ['msn:103:out', 'msn:104:cont', 'time_signal:1207959694:1924989008', 'daterange:b7']);
});

t.test('lines as an array, CRLF, empty input', async (t) => {
  t.same(readHlsCues(''), { segments: [], pending: [] });
  const crlf = readHlsCues('#EXTM3U\r\n#EXT-X-CUE-OUT:10\r\n#EXTINF:2,\r\na.ts\r\n');
  t.equal(crlf.segments[0]!.cues[0]!.duration_sec, 10);
  t.same(readHlsCues(['#EXTM3U', '#EXT-X-CUE-IN', '#EXTINF:2,', 'a.ts']).segments[0]!.cues[0]!.kind, 'in');
});

t.test('a reused event id without a PTS does not merge two breaks', async (t) => {
  // splice_insert event 1, splice_immediate: two breaks an hour apart, both event 1 (fixtures reuse ids 1 and 2).
  const imm = section(header(10, 0x05) + u32(1) + '7f' + 'df' + '0000' + '00' + '00' + '0000').toString('base64');
  const text = [
    '#EXTM3U',
    '#EXT-X-MEDIA-SEQUENCE:7',
    `#EXT-X-SPLICEPOINT-SCTE35:${imm}`,
    '#EXTINF:2,',
    'a.ts',
    '#EXTINF:2,',
    'b.ts',
    `#EXT-X-SPLICEPOINT-SCTE35:${imm}`,
    '#EXTINF:2,',
    'c.ts',
  ].join('\n');
  t.same(
    all(text).map((c) => [c.kind, c.key]),
    [
      ['out', 'splice_insert:1:msn7'],
      ['out', 'splice_insert:1:msn9'],
    ],
  );
});
