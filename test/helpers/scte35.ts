/** Builds splice_info_sections for tests: a hex body after section_length, with a correct CRC_32. */
import { crc32Mpeg2 } from '../../lib/scte35/index.js';

export function section(bodyHex: string, opts: { crc?: 'good' | 'bad'; syntaxByte?: number } = {}): Buffer {
  const body = Buffer.from(bodyHex.replace(/\s+/g, ''), 'hex');
  const len = body.length + 4;
  const head = Buffer.from([0xfc, (opts.syntaxByte ?? 0x30) | (len >> 8), len & 0xff]);
  const noCrc = Buffer.concat([head, body]);
  let crc = crc32Mpeg2(noCrc);
  if (opts.crc === 'bad') crc ^= 1;
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc);
  return Buffer.concat([noCrc, tail]);
}

/** protocol_version 0, not encrypted, pts_adjustment, cw_index 0, tier 0xFFF, command length and type. */
export function header(cmdLength: number, cmdType: number, ptsAdjustment = 0): string {
  const b = Buffer.alloc(10);
  b[0] = 0; // protocol_version
  // encrypted_packet 0, encryption_algorithm 0, then pts_adjustment 33 bits: 1 + 6 + 33 = 40 bits
  const hi = Math.floor(ptsAdjustment / 2 ** 32) & 1;
  b[1] = hi;
  b.writeUInt32BE(ptsAdjustment % 2 ** 32, 2);
  b[6] = 0; // cw_index
  b[7] = 0xff; // tier 0xFFF (12) + command length (12)
  b[8] = 0xf0 | (cmdLength >> 8);
  b[9] = cmdLength & 0xff;
  return b.toString('hex') + cmdType.toString(16).padStart(2, '0');
}

/** splice_time() with a 33-bit pts. */
export function spliceTimeHex(pts: number): string {
  const b = Buffer.alloc(5);
  b[0] = 0xfe | Math.floor(pts / 2 ** 32);
  b.writeUInt32BE(pts % 2 ** 32, 1);
  return b.toString('hex');
}

export function u32(v: number): string {
  return v.toString(16).padStart(8, '0');
}
