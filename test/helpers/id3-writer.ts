/**
 * Small writers for synthetic media in the ID3 tests: ID3v2 tags (ID3v2.4 structure §3–4),
 * PES and MPEG-TS packets (ISO/IEC 13818-1), ISO BMFF boxes and emsg (ISO/IEC 23009-1 §5.10.3.3).
 */

export function syncsafe(n: number): Buffer {
  return Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
}

export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

export function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** Text in an ID3 encoding; encoding 1 takes a BOM in the byte order asked for. */
export function encode(text: string, enc: number, order: 'le' | 'be' = 'le'): Buffer {
  if (enc === 0) return Buffer.from(text, 'latin1');
  if (enc === 3) return Buffer.from(text, 'utf8');
  const le = Buffer.from(text, 'utf16le');
  if (enc === 2) return Buffer.from(le).swap16();
  return order === 'le'
    ? Buffer.concat([Buffer.from([0xff, 0xfe]), le])
    : Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(le).swap16()]);
}

export function nul(enc: number): Buffer {
  return Buffer.alloc(enc === 1 || enc === 2 ? 2 : 1);
}

/** A frame: id(4) size(4) flags(2); size syncsafe for v2.4, plain for v2.3. */
export function frame(id: string, body: Buffer, version = 4, formatFlags = 0): Buffer {
  return Buffer.concat([
    Buffer.from(id, 'latin1'),
    version === 4 ? syncsafe(body.length) : u32(body.length),
    Buffer.from([0, formatFlags]),
    body,
  ]);
}

export function txxx(description: string, value: string, enc = 3, version = 4, order: 'le' | 'be' = 'le'): Buffer {
  return frame(
    'TXXX',
    Buffer.concat([Buffer.from([enc]), encode(description, enc, order), nul(enc), encode(value, enc, order)]),
    version,
  );
}

export function text(id: string, value: string, enc = 3, version = 4): Buffer {
  return frame(id, Buffer.concat([Buffer.from([enc]), encode(value, enc)]), version);
}

export function priv(owner: string, data: Buffer, version = 4): Buffer {
  return frame('PRIV', Buffer.concat([Buffer.from(owner, 'latin1'), Buffer.alloc(1), data]), version);
}

export interface TagOptions {
  version?: number;
  flags?: number;
  /** Extended header bytes, written as given (the caller sets the flag). */
  ext?: Buffer;
  padding?: number;
  footer?: boolean;
}

export function id3(frames: Buffer[], o: TagOptions = {}): Buffer {
  const version = o.version ?? 4;
  const body = Buffer.concat([o.ext ?? Buffer.alloc(0), ...frames, Buffer.alloc(o.padding ?? 0)]);
  const header = Buffer.concat([
    Buffer.from('ID3', 'latin1'),
    Buffer.from([version, 0, o.flags ?? 0]),
    syncsafe(body.length),
  ]);
  const footer = o.footer ? Buffer.concat([Buffer.from('3DI', 'latin1'), header.subarray(3)]) : Buffer.alloc(0);
  return Buffer.concat([header, body, footer]);
}

/** The HLS packed-audio timestamp PRIV (8 bytes, low 33 bits a 90 kHz PTS). */
export function tsTimestamp(pts: number): Buffer {
  return priv('com.apple.streaming.transportStreamTimestamp', u64(pts));
}

// ---- MPEG-TS ----

export function pes(payload: Buffer, o: { pts?: number; aligned?: boolean; streamId?: number } = {}): Buffer {
  const hasPts = o.pts !== undefined;
  const header = Buffer.from([
    0,
    0,
    1,
    o.streamId ?? 0xbd,
    0,
    0,
    0x80 | ((o.aligned ?? hasPts) ? 0x04 : 0),
    hasPts ? 0x80 : 0,
    hasPts ? 5 : 0,
  ]);
  header.writeUInt16BE(3 + (hasPts ? 5 : 0) + payload.length, 4);
  if (!hasPts) return Buffer.concat([header, payload]);
  const p = o.pts!;
  const bits = (shift: number, mask: number) => Math.floor(p / 2 ** shift) & mask; // p is 33 bits: no 32-bit shifts
  const ptsBytes = Buffer.from([
    0x21 | (bits(30, 7) << 1),
    bits(22, 0xff),
    (bits(15, 0x7f) << 1) | 1,
    bits(7, 0xff),
    ((p % 128) << 1) | 1,
  ]);
  return Buffer.concat([header, ptsBytes, payload]);
}

let cc = 0;
/** A PES or PSI payload cut into 188-byte packets; the last padded by an adaptation field. */
export function packets(pid: number, payload: Buffer, psi = false): Buffer[] {
  const out: Buffer[] = [];
  const data = psi ? Buffer.concat([Buffer.alloc(1), payload]) : payload; // pointer_field 0
  for (let p = 0, first = true; p < data.length || first; first = false) {
    const chunk = data.subarray(p, p + 184);
    p += chunk.length;
    const head = Buffer.from([0x47, (first ? 0x40 : 0) | (pid >> 8), pid & 0xff, 0x10 | (cc++ & 0x0f)]);
    if (chunk.length === 184) {
      out.push(Buffer.concat([head, chunk]));
      continue;
    }
    if (psi) {
      out.push(Buffer.concat([head, chunk, Buffer.alloc(184 - chunk.length, 0xff)]));
      continue;
    }
    head[3] = 0x30 | (head[3]! & 0x0f);
    const afLen = 183 - chunk.length;
    const af = afLen === 0 ? Buffer.from([0]) : Buffer.concat([Buffer.from([afLen, 0]), Buffer.alloc(afLen - 1, 0xff)]);
    out.push(Buffer.concat([head, af, chunk]));
  }
  return out;
}

const PMT_PID = 0x1000;

export function pat(): Buffer {
  const s = Buffer.from([0x00, 0xb0, 13, 0, 1, 0xc1, 0, 0, 0, 1, 0xe0 | (PMT_PID >> 8), PMT_PID & 0xff, 0, 0, 0, 0]);
  return packets(0, s, true)[0]!;
}

/** A PMT with one metadata stream: type 0x15 and a metadata_descriptor (0x26) of format 'ID3 '. */
export function pmt(pid: number, streamType = 0x15): Buffer {
  const desc = Buffer.concat([
    Buffer.from([0x26, 13, 0xff, 0xff]),
    Buffer.from('ID3 '),
    Buffer.from([0xff]),
    Buffer.from('ID3 '),
    Buffer.from([0, 0x0f]),
  ]);
  const es = Buffer.concat([Buffer.from([streamType, 0xe0 | (pid >> 8), pid & 0xff, 0xf0, desc.length]), desc]);
  const body = Buffer.concat([
    Buffer.from([0, 1, 0xc1, 0, 0, 0xe0 | (pid >> 8), pid & 0xff, 0xf0, 0]),
    es,
    Buffer.alloc(4),
  ]);
  const s = Buffer.concat([Buffer.from([0x02, 0xb0 | (body.length >> 8), body.length & 0xff]), body]);
  return packets(PMT_PID, s, true)[0]!;
}

/** PAT, PMT, then the PES payloads on `pid`. */
export function tsSegment(pesList: Buffer[], pid = 0x102): Buffer {
  return Buffer.concat([pat(), pmt(pid), ...pesList.flatMap((p) => packets(pid, p))]);
}

// ---- ISO BMFF ----

export function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
}

export function largeBox(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(1), Buffer.from(type, 'latin1'), u64(16 + body.length), body]);
}

const cstr = (s: string) => Buffer.concat([Buffer.from(s, 'utf8'), Buffer.alloc(1)]);

export function emsgV0(
  scheme: string,
  value: string,
  timescale: number,
  delta: number,
  data: Buffer,
  id = 1,
  duration = 0,
): Buffer {
  return box(
    'emsg',
    Buffer.from([0, 0, 0, 0]),
    cstr(scheme),
    cstr(value),
    u32(timescale),
    u32(delta),
    u32(duration),
    u32(id),
    data,
  );
}

export function emsgV1(
  scheme: string,
  value: string,
  timescale: number,
  time: number,
  data: Buffer,
  id = 1,
  duration = 0,
): Buffer {
  return box(
    'emsg',
    Buffer.from([1, 0, 0, 0]),
    u32(timescale),
    u64(time),
    u32(duration),
    u32(id),
    cstr(scheme),
    cstr(value),
    data,
  );
}

export function moof(baseMediaDecodeTime: number): Buffer {
  const tfdt = box('tfdt', Buffer.from([1, 0, 0, 0]), u64(baseMediaDecodeTime));
  return box('moof', box('mfhd', Buffer.alloc(8)), box('traf', box('tfhd', Buffer.from([0, 0, 0, 0]), u32(1)), tfdt));
}

export const AOM_ID3 = 'https://aomedia.org/emsg/ID3';
