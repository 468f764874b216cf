/**
 * Golden tests over every SCTE-35 payload in the copied fixtures (test/fixtures, openly licensed
 * rows of the shared fixture set): each valid one decodes with a good CRC and its durations agree
 * with the tags that carry them; the malformed ones are rejected with a typed error.
 */
import t from 'tap';
import {
  classifySection,
  decodeSplice,
  readHlsCues,
  Scte35Error,
  tryDecodeSplice,
  type SpliceInsert,
} from '../../lib/scte35/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { header, section, spliceTimeHex, u32 } from '../helpers/scte35.js';

/** Every binary-carrying tag attribute of the HLS dialects (docs/design.md §10). */
const HLS_PAYLOAD =
  /^(?:#EXT-OATCLS-SCTE35:|#EXT-X-SPLICEPOINT-SCTE35:|#EXT-X-DATERANGE:.*SCTE35-(?:OUT|IN|CMD)=|#EXT-X-CUE-OUT-CONT:.*SCTE35=|#EXT-X-CUE:.*CUE=|#EXT-X?-SCTE35:.*CUE=)/;

/** Upstream samples that are not valid sections, and why (checked byte by byte). */
const MALFORMED: Record<string, string> = {
  // RFC 8216 §8.10's illustrative cue: 49 bytes for a section_length of 47 (+3), and a zero CRC.
  'hls/kuu-hls-parser/8.10-EXT-X-DATERANGE-carrying-SCTE-35-tags.m3u8': 'truncated',
  // CRC field written as FFFFFFFF with a stray fifth FF byte after it.
  'hls/carlanton-m3u8-parser/media/media-playlist-with-date-range.m3u8': 'too-long',
  // section_length 8 (a truncated sample) followed by more bytes.
  'hls/grafov-m3u8/media-playlist-with-scte35.m3u8': 'too-long',
  'hls/grafov-m3u8/media-playlist-with-scte35-1.m3u8': 'too-long',
  // The payload is elided in the sample ("/DA0AAAA+…AAg+2UBNAAANvrtoQ==").
  'hls/kuu-hls-parser/SCTE-35_05.m3u8': 'encoding',
};
/** A file with both valid and elided payloads: the CONT line's is elided. */
const ELIDED_IN = 'hls/kuu-hls-parser/SCTE-35_04.m3u8';

/** Tag and binary durations that disagree upstream (binary preferred, docs/design.md §10). */
const DISAGREE = new Set([
  // OATCLS segmentation_duration 201.467 s under CUE-OUT:DURATION=15 and CONT Duration=25: a made-up sample.
  'hls/kuu-hls-parser/SCTE-35_04.m3u8',
]);

t.test('HLS fixtures: every SCTE-35 payload decodes or is a known malformed sample', async (t) => {
  const files = fixtureFiles('hls', ['.m3u8']).filter((f) =>
    fixture(f)
      .split('\n')
      .some((l) => HLS_PAYLOAD.test(l)),
  );
  let payloads = 0;
  let valid = 0;
  let rejected = 0;
  let compared = 0;
  const distinct = new Set<string>();
  for (const f of files) {
    const text = fixture(f);
    const expectLines = text.split('\n').filter((l) => HLS_PAYLOAD.test(l)).length;
    const r = readHlsCues(text);
    const cues = [...r.segments.flatMap((s) => s.cues), ...r.pending].filter((c) => c.scte35 || c.error);
    // An OATCLS merged into its CUE-OUT/IN is still one cue for its one payload line.
    t.equal(cues.length, expectLines, `${f}: one cue per payload line`);
    for (const c of cues) {
      payloads++;
      if (c.error) {
        rejected++;
        const want = MALFORMED[f] ?? (f === ELIDED_IN ? 'encoding' : undefined);
        t.equal(c.error.code, want, `${f}:${c.line + 1} rejected as ${want}`);
        continue;
      }
      valid++;
      const s = c.scte35!;
      t.equal(s.crc_ok, true, `${f}:${c.line + 1} CRC`);
      distinct.add(s.crc_32 + s.section_length);
      const bin = classifySection(s).duration_sec;
      const tagDur = tagDuration(c.tag);
      if (bin !== undefined && tagDur !== undefined && tagDur > 0) {
        compared++;
        const agrees = Math.abs(bin - tagDur) <= 1.05; // tags round (CUE-OUT:20.020 / Duration=21 over a 20 s break)
        t.equal(agrees, !DISAGREE.has(f), `${f}:${c.line + 1} binary ${bin} s vs tag ${tagDur} s`);
      }
    }
  }
  t.equal(files.length, 19, 'playlists with payloads');
  t.equal(payloads, 46, 'payload tags read');
  t.equal(valid, 39);
  t.equal(rejected, 7);
  t.equal(distinct.size, 20, 'distinct valid sections');
  t.equal(compared, 19, 'binary durations compared with tag durations');
});

/** The duration a tag states itself (CUE-OUT value, DURATION/PLANNED-DURATION, CONT Duration). */
function tagDuration(tag: string): number | undefined {
  const m =
    /(?:PLANNED-DURATION|DURATION|Duration)=["\u201c\u201d]?([\d.]+)/.exec(tag) ??
    /^#EXT-X-CUE-OUT:["]?([\d.]+)/.exec(tag);
  return m ? Number(m[1]) : undefined;
}

t.test(
  'DASH fixtures: every Binary section decodes with a good CRC; durations agree with Event@duration',
  async (t) => {
    const files = fixtureFiles('dash', ['.mpd']);
    t.equal(files.length, 83, 'MPD fixtures read');
    let payloads = 0;
    let compared = 0;
    const disagree: string[] = [];
    for (const f of files) {
      const text = fixture(f);
      let timescale = 1;
      let eventDuration: number | undefined;
      for (const m of text.matchAll(/<EventStream\b([^>]*)>|<Event\b([^>]*)>|<(?:scte35:)?binary>([^<]*)</gi)) {
        if (m[1] !== undefined) {
          timescale = Number(/timescale="(\d+)"/.exec(m[1])?.[1] ?? 1);
        } else if (m[2] !== undefined) {
          const d = /duration="(\d+)"/.exec(m[2])?.[1];
          eventDuration = d === undefined ? undefined : Number(d) / timescale;
        } else {
          payloads++;
          const r = tryDecodeSplice(m[3]!);
          if (f === 'dash/androidx-media/sample_mpd_event_stream.mpd') {
            // The same truncated sample as grafov's (section_length 8, more bytes after).
            t.equal(r.ok ? 'ok' : r.error.code, 'too-long', `${f}: malformed sample rejected`);
            continue;
          }
          t.ok(r.ok, `${f}: ${m[3]} decodes`);
          if (!r.ok) continue;
          t.equal(r.value.crc_ok, true);
          const bin = classifySection(r.value).duration_sec;
          if (bin !== undefined && eventDuration !== undefined) {
            compared++;
            if (Math.abs(bin - eventDuration) > 0.05) disagree.push(`${f}: binary ${bin} s, Event ${eventDuration} s`);
          }
        }
      }
    }
    t.equal(payloads, 31, 'Binary payloads read');
    t.equal(compared, 7, 'durations compared');
    // eyevinn signal_binary_xmlbin: Event@duration 12650 at timescale 10^7 (1.265 ms) for a 253 s segmentation_duration.
    t.same(disagree, ['dash/eyevinn-dash-mpd/scte35/signal_binary_xmlbin.mpd: binary 253 s, Event 0.001265 s']);
  },
);

t.test('DASH fixture details', async (t) => {
  const admanager = fixture('dash/dash-mpd-rs/admanager.mpd');
  const [out, back] = [...admanager.matchAll(/<Binary>([^<]*)</g)].map((m) => decodeSplice(m[1]!));
  t.match(out!.splice_command, {
    name: 'splice_insert',
    splice_event_id: 4002,
    out_of_network_indicator: true,
    break_duration: 30,
    break_auto_return: true,
  });
  t.match(back!.splice_command, { name: 'splice_insert', splice_event_id: 4002, out_of_network_indicator: false });
  const xmlbin = decodeSplice(
    /<Binary>([^<]*)</.exec(fixture('dash/eyevinn-dash-mpd/scte35/signal_binary_xmlbin.mpd'))![1]!,
  );
  t.match(xmlbin.splice_descriptors[0], {
    segmentation_upid_type: 0x0c,
    segmentation_upid_type_name: 'MPU',
    segmentation_upid: {
      format_identifier_ascii: 'TVST',
      private_data_hex: Buffer.from(':france2_20260604_1020').toString('hex'),
    },
    segmentation_type_id: 0x34,
    segmentation_duration: 253,
  });
});

t.test('mp2ts-tools golden: the splice_insert it reports, rebuilt and decoded field by field', async (t) => {
  // The golden file holds mp2ts-tools' decoded JSON, not the section bytes: rebuild one from its fields.
  const lines = fixture('media/mp2ts-tools/golden_avc_with_scte35.txt')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const cmds = lines.filter((l) => l.spliceCommand).map((l) => l.spliceCommand);
  t.equal(cmds.length, 1, 'one cue in the golden file');
  const g = cmds[0];
  const dur = Buffer.alloc(5);
  dur[0] = 0xfe;
  dur.writeUInt32BE(g.duration, 1);
  const body = u32(g.eventId) + '7f' + 'ef' + spliceTimeHex(g.pts) + dur.toString('hex') + '0000' + '00' + '00';
  const c = decodeSplice(section(header(body.length / 2, 0x05) + body + '0000')).splice_command as SpliceInsert;
  t.equal(c.splice_event_id, 255);
  t.equal(c.pts_time_ticks, 1032000);
  t.equal(c.break_duration_ticks, 1800000);
  t.equal(c.out_of_network_indicator, g.outOfNetwork);
});

t.test('a Scte35Error is what the malformed samples raise', async (t) => {
  t.throws(
    () =>
      decodeSplice(
        '0xFC002F0000000000FF000014056FFFFFF000E011622DCAFF000052636200000000000A0008029896F50000008700000000',
      ),
    Scte35Error,
  );
});

t.test(
  'Orange DASH cue: ad end 0x31, Call Ad Server 0x02 and ad start 0x30 in one cue → out (a start wins)',
  async (t) => {
    const b = /<Binary>([^<]*)</.exec(fixture('dash/dash-mpd-rs/orange.mpd'))![1]!;
    const s = decodeSplice(b);
    t.same(
      s.splice_descriptors.map((d) => (d.name === 'segmentation_descriptor' ? d.segmentation_type_id : -1)),
      [0x30, 0x02, 0x31],
    );
    t.same(classifySection(s), { kind: 'out', event_id: 391691, duration_sec: 30 });
  },
);
