/** segmentation_upid() values in readable form (SCTE 35 2023 §10.3.3.1 Table 22, §10.3.3.2–3). */
import { nameOr, UPID_TYPE_NAMES } from './names.js';
import type { AtscUpid, MpuUpid, Upid, UpidValue } from './types.js';

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** Text UPIDs are ASCII in the standard; anything unprintable is shown as hex instead of mangled. */
function text(b: Uint8Array): string {
  for (const c of b) if (c < 0x20 || c > 0x7e) return `0x${hex(b)}`;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/** Four printable ASCII characters of a 32-bit identifier, if they are printable. */
export function fourCc(v: number): string | undefined {
  const s = String.fromCharCode((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
  return /^[\x20-\x7e]{4}$/.test(s) ? s : undefined;
}

function grouped(h: string, size: number, sep: string): string {
  const parts: string[] = [];
  for (let i = 0; i < h.length; i += size) parts.push(h.slice(i, i + size));
  return parts.join(sep);
}

/** §10.3.3.2 ATSC Content Identifier (A/57B): TSID 16, reserved 2, end_of_day 5, unique_for 9, content_id. */
function atsc(b: Uint8Array): AtscUpid | string {
  if (b.length < 4) return `0x${hex(b)}`;
  return {
    TSID: (b[0]! << 8) | b[1]!,
    end_of_day: (b[2]! >>> 1) & 0x1f,
    unique_for: ((b[2]! & 1) << 8) | b[3]!,
    content_id: text(b.subarray(4)),
  };
}

/** §10.3.3.3 MPU: format_identifier 32 + private_data. */
function mpu(b: Uint8Array): MpuUpid | string {
  if (b.length < 4) return `0x${hex(b)}`;
  const id = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  const ascii = fourCc(id);
  const m: MpuUpid = { format_identifier: id, private_data_hex: hex(b.subarray(4)) };
  if (ascii) m.format_identifier_ascii = ascii;
  return m;
}

/** §10.3.3.4 MID: a loop of (segmentation_upid_type 8, segmentation_upid_length 8, upid) filling the bytes. */
function mid(b: Uint8Array): Upid[] | string {
  const out: Upid[] = [];
  let i = 0;
  while (i < b.length) {
    if (i + 2 > b.length || i + 2 + b[i + 1]! > b.length) return `0x${hex(b)}`; // malformed: keep it whole
    const type = b[i]!;
    const len = b[i + 1]!;
    out.push(upid(type, b.subarray(i + 2, i + 2 + len)));
    i += 2 + len;
  }
  return out;
}

function value(type: number, b: Uint8Array): UpidValue {
  switch (type) {
    case 0x00:
      return '';
    case 0x01: // user defined
    case 0x02: // ISCI
    case 0x03: // Ad-ID
    case 0x07: // TID
    case 0x09: // ADI
    case 0x0e: // ADS information
    case 0x0f: // URI
    case 0x11: // SCR
      return text(b);
    case 0x04: // UMID (SMPTE 330M): 32 bytes shown as dotted groups of 4 bytes, as threefive does
      return grouped(hex(b), 8, '.');
    case 0x05: // ISAN (deprecated 8 bytes) and 0x06 V-ISAN (12 bytes): hex in groups of four, check chars not computed
    case 0x06:
      return grouped(hex(b).toUpperCase(), 4, '-');
    case 0x08: // TI: a 64-bit AiringID, shown as hex
      return `0x${hex(b).toUpperCase()}`;
    case 0x0a: // EIDR (compact binary, SMPTE RP 2079): 16-bit DOI suffix + 80-bit ID; check char not computed
      if (b.length !== 12) return `0x${hex(b)}`;
      return `10.${(b[0]! << 8) | b[1]!}/${grouped(hex(b.subarray(2)).toUpperCase(), 4, '-')}`;
    case 0x0b:
      return atsc(b);
    case 0x0c:
      return mpu(b);
    case 0x0d:
      return mid(b);
    case 0x10: // UUID (RFC 4122)
      if (b.length !== 16) return `0x${hex(b)}`;
      {
        const h = hex(b);
        return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
      }
    default:
      return `0x${hex(b)}`;
  }
}

export function upid(type: number, bytes: Uint8Array): Upid {
  return {
    segmentation_upid_type: type,
    segmentation_upid_type_name: nameOr(UPID_TYPE_NAMES, type),
    segmentation_upid_length: bytes.length,
    segmentation_upid: value(type, bytes),
  };
}
