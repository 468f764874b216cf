import t, { type Test } from 'tap';
import {
  decodeSplice,
  Scte35Error,
  tryDecodeSplice,
  type SegmentationDescriptor,
  type SpliceInsert,
} from '../../lib/scte35/index.js';
import { header, section, spliceTimeHex, u32 } from '../helpers/scte35.js';

const seg = (d: unknown) => d as SegmentationDescriptor;

function rejects(t: Test, payload: string | Uint8Array, code: string, offset?: number) {
  try {
    decodeSplice(payload);
    t.fail(`expected ${code}`);
  } catch (e) {
    t.ok(e instanceof Scte35Error, 'a Scte35Error');
    t.equal((e as Scte35Error).code, code);
    if (offset !== undefined) t.equal((e as Scte35Error).offset, offset, 'offset');
  }
  const r = tryDecodeSplice(payload);
  t.equal(r.ok, false);
  if (!r.ok) t.equal(r.error.code, code);
}

t.test(
  'AWS MediaTailor guide: splice_insert, event 448, 24 s, auto_return false, unique_program_id 49152',
  async (t) => {
    const s = decodeSplice('/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoh');
    t.equal(s.table_id, 0xfc);
    t.equal(s.section_length, 33);
    t.equal(s.sap_type, 3);
    t.equal(s.tier, 0xfff);
    t.equal(s.splice_command_length, 16);
    t.equal(s.splice_command_type, 5);
    t.equal(s.crc_32, '0x36e5aa21');
    const c = s.splice_command as SpliceInsert;
    t.match(c, {
      name: 'splice_insert',
      splice_event_id: 448,
      splice_event_cancel_indicator: false,
      out_of_network_indicator: true,
      program_splice_flag: true,
      duration_flag: true,
      splice_immediate_flag: false,
      time_specified_flag: false,
      break_auto_return: false,
      break_duration_ticks: 0x20f580,
      break_duration: 24,
      unique_program_id: 49152,
      avail_num: 0,
      avails_expected: 0,
    });
    t.equal(c.break_duration_ticks, 2160000);
  },
);

t.test('SCTE 35 sample: time_signal, Provider Placement Opportunity Start', async (t) => {
  const s = decodeSplice('/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg==');
  t.equal(s.splice_command_type_name, 'time_signal');
  t.match(s.splice_command, {
    time_specified_flag: true,
    pts_time_ticks: 0x072bd0050,
    pts_time_adjusted_ticks: 1924989008,
  });
  t.equal(s.splice_descriptors.length, 1);
  t.match(seg(s.splice_descriptors[0]), {
    identifier: 'CUEI',
    segmentation_event_id: 0x4800008e,
    segmentation_event_cancel_indicator: false,
    program_segmentation_flag: true,
    delivery_not_restricted_flag: false,
    web_delivery_allowed_flag: false,
    no_regional_blackout_flag: true,
    archive_allowed_flag: true,
    device_restrictions: 3,
    segmentation_duration_ticks: 0x0001a599b0,
    segmentation_duration: 307,
    segmentation_upid_type: 8,
    segmentation_upid_type_name: 'TI',
    segmentation_upid: '0x000000002CA0A18A',
    segmentation_type_id: 0x34,
    segmentation_type_name: 'Provider Placement Opportunity Start',
    segment_num: 2,
    segments_expected: 0,
  });
  t.equal(seg(s.splice_descriptors[0]).segmentation_duration_ticks, 27630000);
  // descriptor_length 28 leaves no room for sub_segment_num: a pre-2016 descriptor, read without them.
  t.equal(seg(s.splice_descriptors[0]).sub_segment_num, undefined);
});

t.test('SCTE 35 sample: time_signal, Provider Placement Opportunity End', async (t) => {
  const s = decodeSplice('/DAvAAAAAAAA///wBQb+dGKQoAAZAhdDVUVJSAAAjn+fCAgAAAAALKChijUCAKnMZ1g=');
  t.match(seg(s.splice_descriptors[0]), {
    segmentation_type_id: 0x35,
    segmentation_event_id: 0x4800008e,
    segmentation_duration_flag: false,
    segment_num: 2,
  });
});

t.test('SCTE 35 sample: program boundary, 0x11 end and 0x10 start in one cue', async (t) => {
  // As transcribed in the issue, section_length (0x046) and descriptor_loop_length (0x030) are 2 short
  // of the 75 bytes given: 2 bytes after the CRC. With 0x048 and 0x032 the CRC checks.
  rejects(
    t,
    '/DBGAAAAAAAA///wBQb+ek2ItgAwAhdDVUVJSAAAGH+fCAgAAAAALMvDRBEAAAIXQ1VFSUgAABl/nwgIAAAAACyk26AQAACZcuND',
    'too-long',
    73,
  );
  const s = decodeSplice(
    '/DBIAAAAAAAA///wBQb+ek2ItgAyAhdDVUVJSAAAGH+fCAgAAAAALMvDRBEAAAIXQ1VFSUgAABl/nwgIAAAAACyk26AQAACZcuND',
  );
  t.equal(s.crc_ok, true);
  t.equal(s.descriptor_loop_length, 50);
  t.same(
    s.splice_descriptors.map((d) => [
      seg(d).segmentation_type_id,
      seg(d).segmentation_type_name,
      seg(d).segmentation_event_id,
    ]),
    [
      [0x11, 'Program End', 0x48000018],
      [0x10, 'Program Start', 0x48000019],
    ],
  );
});

t.test('hex (0x and bare), Buffer and URL-safe base64 give the same section', async (t) => {
  const b64 = '/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoh';
  const bytes = Buffer.from(b64, 'base64');
  const want = decodeSplice(b64);
  t.same(decodeSplice(`0x${bytes.toString('hex').toUpperCase()}`), want);
  t.same(decodeSplice(bytes.toString('hex')), want);
  t.same(decodeSplice(new Uint8Array(bytes)), want);
  t.same(decodeSplice(b64.replace(/\//g, '_').replace(/\+/g, '-')), want);
  t.same(decodeSplice(`  ${b64}\n`), want, 'surrounding whitespace');
});

t.test('splice_null and bandwidth_reservation', async (t) => {
  t.match(decodeSplice(section(header(0, 0x00) + '0000')), {
    splice_command_type_name: 'splice_null',
    splice_command: { name: 'splice_null' },
    descriptor_loop_length: 0,
  });
  t.match(decodeSplice(section(header(0, 0x07) + '0000')), { splice_command: { name: 'bandwidth_reservation' } });
});

t.test('splice_schedule: program mode with break duration', async (t) => {
  const ev = u32(1) + '7f' + 'ff' + u32(1388145600) + 'fe' + '00' + '2932e0' + '0001' + '01' + '01';
  const s = decodeSplice(section(header(1 + ev.length / 2, 0x04) + '01' + ev + '0000'));
  t.match(s.splice_command, {
    name: 'splice_schedule',
    splice_count: 1,
    events: [
      {
        splice_event_id: 1,
        out_of_network_indicator: true,
        program_splice_flag: true,
        utc_splice_time: 1388145600,
        break_auto_return: true,
        break_duration_ticks: 2700000,
        break_duration: 30,
        unique_program_id: 1,
        avail_num: 1,
        avails_expected: 1,
      },
    ],
  });
  t.equal(
    (s.splice_command as { events: { utc_splice_time_iso: string }[] }).events[0]!.utc_splice_time_iso,
    '2024-01-01T12:00:00.000Z',
  );
});

t.test('splice_insert component mode; pts_adjustment applied modulo 2^33', async (t) => {
  const adj = 100;
  const pts = 2 ** 33 - 10;
  const body =
    u32(16) + '7f' + '8f' + '02' + '01' + spliceTimeHex(pts) + '02' + spliceTimeHex(5) + '0000' + '00' + '00';
  const s = decodeSplice(section(header(body.length / 2, 0x05, adj) + body + '0000'));
  t.equal(s.pts_adjustment_ticks, 100);
  const c = s.splice_command as SpliceInsert;
  t.equal(c.program_splice_flag, false);
  t.same(c.components, [
    {
      component_tag: 1,
      time_specified_flag: true,
      pts_time_ticks: pts,
      pts_time: 95443.717578,
      pts_time_adjusted_ticks: 90,
      pts_time_adjusted: 0.001,
    },
    {
      component_tag: 2,
      time_specified_flag: true,
      pts_time_ticks: 5,
      pts_time: 0.000056,
      pts_time_adjusted_ticks: 105,
      pts_time_adjusted: 0.001167,
    },
  ]);
});

t.test('splice_insert: splice_immediate, component immediate, cancel', async (t) => {
  const imm = u32(7) + '7f' + 'df' + '0005' + '01' + '02';
  t.match(decodeSplice(section(header(imm.length / 2, 0x05) + imm + '0000')).splice_command, {
    splice_immediate_flag: true,
    time_specified_flag: undefined,
    unique_program_id: 5,
    avail_num: 1,
    avails_expected: 2,
  });
  const compImm = u32(8) + '7f' + '9f' + '01' + '07' + '0000' + '00' + '00';
  t.same(
    (decodeSplice(section(header(compImm.length / 2, 0x05) + compImm + '0000')).splice_command as SpliceInsert)
      .components,
    [{ component_tag: 7, time_specified_flag: false }],
  );
  const cancel = u32(9) + 'ff';
  t.same(decodeSplice(section(header(5, 0x05) + cancel + '0000')).splice_command, {
    name: 'splice_insert',
    splice_event_id: 9,
    splice_event_cancel_indicator: true,
    event_id_compliance_flag: true,
  });
});

t.test('private_command keeps identifier and bytes', async (t) => {
  const s = decodeSplice(section(header(8, 0xff) + u32(0x43554549) + 'deadbeef' + '0000'));
  t.same(s.splice_command, {
    name: 'private_command',
    identifier: 0x43554549,
    identifier_ascii: 'CUEI',
    private_bytes_hex: 'deadbeef',
    private_bytes_base64: '3q2+7w==',
  });
});

t.test(
  'descriptors: avail, DTMF, time, audio, segmentation with MID, components, restrictions, sub-segments; unknown kept raw',
  async (t) => {
    const cuei = u32(0x43554549);
    const avail = '00' + '08' + cuei + u32(42);
    const dtmf = '01' + '08' + cuei + 'c8' + '5f' + Buffer.from('*5').toString('hex');
    const time = '03' + '10' + cuei + '000065920080' + u32(500) + '0025';
    const audio = '04' + '0a' + cuei + '10' + '01' + Buffer.from('eng').toString('hex') + '05';
    const uuid = '00112233445566778899aabbccddeeff';
    const eidr = '147b' + '0e4f2a3b4c5d6e7f8091';
    const mid =
      '03' +
      '0c' +
      Buffer.from('ABCD01234567').toString('hex') +
      '0f' +
      '05' +
      Buffer.from('urn:x').toString('hex') +
      '10' +
      '10' +
      uuid +
      '0a' +
      '0c' +
      eidr;
    const segBody =
      cuei +
      u32(0x63) +
      '7f' +
      '5a' +
      '01' +
      '01' +
      'fe' +
      '00015f90' +
      '0200000005' +
      '0d' +
      (mid.length / 2).toString(16).padStart(2, '0') +
      mid +
      '36' +
      '01' +
      '02' +
      '03' +
      '04';
    const segd = '02' + (segBody.length / 2).toString(16).padStart(2, '0') + segBody;
    const unknown = '99' + '06' + Buffer.from('ABCD').toString('hex') + 'beef';
    const loop = avail + dtmf + time + audio + segd + unknown;
    const s = decodeSplice(
      section(header(5, 0x06) + spliceTimeHex(900000) + (loop.length / 2).toString(16).padStart(4, '0') + loop),
    );
    const [a, d, ti, au, sg, u] = s.splice_descriptors;
    t.match(a, { name: 'avail_descriptor', provider_avail_id: 42, identifier: 'CUEI' });
    t.match(d, { name: 'DTMF_descriptor', preroll: 200, dtmf_count: 2, dtmf_chars: '*5' });
    t.match(ti, { name: 'time_descriptor', TAI_seconds: 0x65920080, TAI_ns: 500, UTC_offset: 37 });
    t.match(au, {
      name: 'audio_descriptor',
      audio_count: 1,
      components: [{ component_tag: 1, ISO_code: 'eng', bit_stream_mode: 0, num_channels: 2, full_srvc_audio: true }],
    });
    t.match(sg, {
      segmentation_event_id: 0x63,
      program_segmentation_flag: false,
      segmentation_duration_flag: true,
      delivery_not_restricted_flag: false,
      web_delivery_allowed_flag: true,
      no_regional_blackout_flag: true,
      archive_allowed_flag: false,
      device_restrictions: 2,
      device_restrictions_name: 'Restrict Group 2',
      components: [{ component_tag: 1, pts_offset_ticks: 90000, pts_offset: 1 }],
      segmentation_duration_ticks: 2 ** 33 + 5,
      segmentation_upid_type: 0x0d,
      segmentation_upid_type_name: 'MID',
      segmentation_type_id: 0x36,
      segmentation_type_name: 'Distributor Placement Opportunity Start',
      segment_num: 1,
      segments_expected: 2,
      sub_segment_num: 3,
      sub_segments_expected: 4,
    });
    t.same(seg(sg).segmentation_upid, [
      {
        segmentation_upid_type: 3,
        segmentation_upid_type_name: 'Ad-ID',
        segmentation_upid_length: 12,
        segmentation_upid: 'ABCD01234567',
      },
      {
        segmentation_upid_type: 0x0f,
        segmentation_upid_type_name: 'URI',
        segmentation_upid_length: 5,
        segmentation_upid: 'urn:x',
      },
      {
        segmentation_upid_type: 0x10,
        segmentation_upid_type_name: 'UUID',
        segmentation_upid_length: 16,
        segmentation_upid: '00112233-4455-6677-8899-aabbccddeeff',
      },
      {
        segmentation_upid_type: 0x0a,
        segmentation_upid_type_name: 'EIDR',
        segmentation_upid_length: 12,
        segmentation_upid: '10.5243/0E4F-2A3B-4C5D-6E7F-8091',
      },
    ]);
    t.same(u, {
      splice_descriptor_tag: 0x99,
      descriptor_length: 6,
      identifier: 'ABCD',
      name: 'unknown',
      private_bytes_hex: 'beef',
    });
    t.doesNotThrow(() => JSON.stringify(s), 'plain JSON');
  },
);

t.test('ATSC, ISAN and cancelled segmentation descriptors', async (t) => {
  const cuei = u32(0x43554549);
  const atsc = '0001' + '0000' + Buffer.from('id-7').toString('hex'); // TSID 1, end_of_day 0, unique_for 0
  const b1 = cuei + u32(1) + '7f' + 'bf' + '0b' + '08' + atsc + '10' + '01' + '01';
  const b2 = cuei + u32(2) + '7f' + 'bf' + '06' + '0c' + '0000000123450000abcd0001' + '30' + '00' + '00';
  const b3 = cuei + u32(3) + 'ff';
  const loop = [
    '02' + (b1.length / 2).toString(16).padStart(2, '0') + b1,
    '02' + (b2.length / 2).toString(16).padStart(2, '0') + b2,
    '02' + (b3.length / 2).toString(16).padStart(2, '0') + b3,
  ].join('');
  const s = decodeSplice(
    section(header(5, 0x06) + spliceTimeHex(0) + (loop.length / 2).toString(16).padStart(4, '0') + loop),
  );
  t.same(seg(s.splice_descriptors[0]).segmentation_upid, { TSID: 1, end_of_day: 0, unique_for: 0, content_id: 'id-7' });
  t.equal(seg(s.splice_descriptors[1]).segmentation_upid, '0000-0001-2345-0000-ABCD-0001');
  t.match(seg(s.splice_descriptors[2]), {
    segmentation_event_id: 3,
    segmentation_event_cancel_indicator: true,
    segmentation_type_id: undefined,
  });
});

t.test('encrypted packet: clear header decoded, the command reported as encrypted', async (t) => {
  const body = '00' + '82' + '00000000' + '05' + 'fff' + '005' + 'aabbccddee112233' + '0000';
  const s = decodeSplice(section(body));
  t.match(s, {
    encrypted_packet: true,
    encryption_algorithm: 1,
    cw_index: 5,
    splice_command_type: null,
    splice_command: { name: 'encrypted', encrypted_bytes_hex: 'aabbccddee1122330000' },
    descriptor_loop_length: null,
    splice_descriptors: [],
  });
});

t.test('errors: a typed Scte35Error with a code and an offset, never anything else', async (t) => {
  const good = section(header(0, 0x00) + '0000');
  rejects(t, Buffer.concat([Buffer.from([0xfd]), good.subarray(1)]), 'table-id', 0);
  rejects(t, good.subarray(0, good.length - 1), 'truncated', good.length - 1);
  rejects(t, good.subarray(0, 2), 'truncated');
  rejects(t, Buffer.concat([good, Buffer.from([0])]), 'too-long', good.length);
  rejects(t, section(header(0, 0x00) + '0000', { crc: 'bad' }), 'crc', good.length - 4);
  rejects(t, 'not base64!', 'encoding');
  rejects(t, '0xABC', 'encoding');
  rejects(t, '', 'encoding');
  rejects(t, '/DAh=AAA', 'encoding');
  rejects(t, section(header(6, 0x05) + u32(9) + 'ff' + '00' + '0000'), 'command-length');
  rejects(t, section(header(4, 0x05) + u32(9) + '0000'), 'command-length');
  rejects(t, section(header(0, 0x00) + '000a' + '0008' + u32(0x43554549)), 'descriptor-length');
  rejects(t, section(header(0, 0x00) + '0006' + '0004' + u32(0x43554549)), 'descriptor-length', 22);
  rejects(t, section(header(0xfff, 0xff) + u32(1) + '0000'), 'command-length');
  rejects(t, section(header(0xfff, 0x42) + '0000'), 'command-type');
  const bad = tryDecodeSplice('0xFC');
  t.same(bad.ok ? null : bad.error.toJSON(), {
    code: 'truncated',
    message: '1 bytes: no section header (at byte 1)',
    offset: 1,
  });
});

t.test('checkCrc: false decodes a section with a bad CRC and reports it', async (t) => {
  const s = decodeSplice(section(header(0, 0x00) + '0000', { crc: 'bad' }), { checkCrc: false });
  t.equal(s.crc_ok, false);
});

t.test('splice_command_length 0xFFF (legacy, unknown) reads the command by its syntax', async (t) => {
  const s = decodeSplice(section(header(0xfff, 0x06) + spliceTimeHex(90000) + '0000'));
  t.match(s.splice_command, { name: 'time_signal', pts_time: 1 });
});
