/**
 * CRC-32/MPEG-2 (ISO/IEC 13818-1 Annex A; SCTE 35 2023 §9.6 CRC_32): poly 0x04C11DB7, init
 * 0xFFFFFFFF, MSB first, no reflection, no final xor. Run over a whole section it gives 0.
 */
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    t[i] = c >>> 0;
  }
  return t;
})();

export function crc32Mpeg2(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = ((crc << 8) ^ TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!) >>> 0;
  return crc >>> 0;
}
