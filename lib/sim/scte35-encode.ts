/**
 * Builds SCTE-35 splice_info_sections (SCTE 35 2023 §9.6–§10.3.3) for the simulated origin:
 * splice_insert out / in / cancel and time_signal with segmentation descriptors, each with a
 * correct CRC_32. Only what a simulated encoder needs; the decoder is lib/scte35.
 */
import { crc32Mpeg2 } from '../scte35/index.js';

const u32 = (v: number) => v.toString(16).padStart(8, '0');
const u8 = (v: number) => v.toString(16).padStart(2, '0');
const ticks = (sec: number) => Math.round(sec * 90000);
/** A 33-bit value after 7 bits (`flags` in the top bits): splice_time() and break_duration(). */
const bits33 = (flags: number, v: number) => u8(flags | Math.floor(v / 2 ** 32)) + u32(v % 2 ** 32);

function section(commandType: number, commandHex: string, descriptorsHex = ''): Buffer {
  // protocol_version 0, not encrypted, pts_adjustment 0, cw_index 0, tier 0xFFF, splice_command_length.
  const cmdLength = commandHex.length / 2;
  const head = '00' + '0000000000' + '00' + 'fff' + cmdLength.toString(16).padStart(3, '0') + u8(commandType);
  const body = Buffer.from(
    head + commandHex + (descriptorsHex.length / 2).toString(16).padStart(4, '0') + descriptorsHex,
    'hex',
  );
  const len = body.length + 4;
  const noCrc = Buffer.concat([Buffer.from([0xfc, 0x30 | (len >> 8), len & 0xff]), body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32Mpeg2(noCrc));
  return Buffer.concat([noCrc, crc]);
}

/** splice_insert, program splice at `ptsSec`; out of network with a break_duration, or back in. */
export function spliceInsert(eventId: number, ptsSec: number, out: { durationSec: number } | 'in'): Buffer {
  const flags = out === 'in' ? 0x4f : 0xef; // out_of_network, program_splice, duration_flag, splice_immediate 0
  const duration = out === 'in' ? '' : bits33(0xfe, ticks(out.durationSec));
  return section(0x05, u32(eventId) + '7f' + u8(flags) + bits33(0xfe, ticks(ptsSec)) + duration + '0000' + '00' + '00');
}

export function spliceInsertCancel(eventId: number): Buffer {
  return section(0x05, u32(eventId) + 'ff');
}

export interface Segmentation {
  typeId: number;
  eventId: number;
  durationSec?: number;
}

/** time_signal at `ptsSec` with one segmentation_descriptor per entry (program, delivery unrestricted, no UPID). */
export function timeSignal(ptsSec: number, segs: Segmentation[]): Buffer {
  const descriptors = segs
    .map((s) => {
      const duration = s.durationSec === undefined ? '' : u8(0) + u32(ticks(s.durationSec));
      const body =
        u32(0x43554549) +
        u32(s.eventId) +
        '7f' +
        (s.durationSec === undefined ? 'bf' : 'ff') +
        duration +
        '00' +
        '00' +
        u8(s.typeId) +
        '01' +
        '01' +
        (s.typeId === 0x34 || s.typeId === 0x36 ? '0000' : '');
      return '02' + u8(body.length / 2) + body;
    })
    .join('');
  return section(0x06, bits33(0xfe, ticks(ptsSec)), descriptors);
}
