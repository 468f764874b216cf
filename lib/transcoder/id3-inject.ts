/**
 * A timed ID3 tag written into an MPEG-TS segment (docs/design.md §8 and §12): ffmpeg's mpegts muxer
 * has no reliable way to carry ID3 timed metadata, so this small TS writer adds it after the fact.
 * Apple "Timed Metadata for HTTP Live Streaming" §2 and ISO/IEC 13818-1: the PMT gets a
 * metadata_pointer_descriptor (0x25) in its program info and a stream of type 0x15 with a
 * metadata_descriptor (0x26, format 'ID3 '); the tag travels in a PES with stream_id 0xBD
 * (private_stream_1), data_alignment_indicator set and a PTS. Pure: bytes in, bytes out.
 */
import { crc32Mpeg2 } from '../scte35/crc.js';

const PACKET = 188;
const SYNC = 0x47;
const METADATA_STREAM_TYPE = 0x15;
const ID3_FORMAT = Buffer.from('ID3 ', 'latin1');

/** ID3v2.4 syncsafe integer (ID3v2.4 structure §6.2). */
function syncsafe(n: number): Buffer {
  return Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
}

function id3Frame(id: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(id, 'latin1'), syncsafe(body.length), Buffer.from([0, 0]), body]);
}

/**
 * An ID3v2.4 tag with `TXXX` (UTF-8, description = owner, value = value) and `PRIV` (owner, the value's
 * UTF-8 bytes): players that look for either find the `com.<brand>.vtg` owner.
 */
export function vtgTag(owner: string, value: string): Buffer {
  const txxx = id3Frame(
    'TXXX',
    Buffer.concat([Buffer.from([3]), Buffer.from(owner, 'utf8'), Buffer.from([0]), Buffer.from(value, 'utf8')]),
  );
  const priv = id3Frame(
    'PRIV',
    Buffer.concat([Buffer.from(owner, 'latin1'), Buffer.from([0]), Buffer.from(value, 'utf8')]),
  );
  const body = Buffer.concat([txxx, priv]);
  return Buffer.concat([Buffer.from('ID3', 'latin1'), Buffer.from([4, 0, 0]), syncsafe(body.length), body]);
}

const pidOf = (ts: Buffer, at: number) => ((ts[at + 1]! & 0x1f) << 8) | ts[at + 2]!;
const startsUnit = (ts: Buffer, at: number) => (ts[at + 1]! & 0x40) !== 0;

/** Offset of the payload in the packet at `at`, after any adaptation field. */
function payloadAt(ts: Buffer, at: number): number {
  const afc = (ts[at + 3]! >> 4) & 0x3;
  return at + 4 + (afc & 0x2 ? 1 + ts[at + 4]! : 0);
}

/** Start offset of the first PSI section of a unit-start packet (after its pointer_field). */
const sectionAt = (ts: Buffer, at: number) => {
  const p = payloadAt(ts, at);
  return p + 1 + ts[p]!;
};

export class TsRewriteError extends Error {
  override name = 'TsRewriteError';
}

function metadataPointerDescriptor(programNumber: number): Buffer {
  const d = Buffer.alloc(17);
  d[0] = 0x25;
  d[1] = 15;
  d.writeUInt16BE(0xffff, 2); // metadata_application_format: see the identifier
  ID3_FORMAT.copy(d, 4);
  d[8] = 0xff; // metadata_format: see the identifier
  ID3_FORMAT.copy(d, 9);
  d[13] = 0; // metadata_service_id
  d[14] = 0x1f; // no locator record, carried in the same TS (MPEG_carriage_flags 0), reserved bits
  d.writeUInt16BE(programNumber, 15);
  return d;
}

function metadataDescriptor(): Buffer {
  const d = Buffer.alloc(15);
  d[0] = 0x26;
  d[1] = 13;
  d.writeUInt16BE(0xffff, 2);
  ID3_FORMAT.copy(d, 4);
  d[8] = 0xff;
  ID3_FORMAT.copy(d, 9);
  d[13] = 0; // metadata_service_id
  d[14] = 0x0f; // decoder_config_flags 0, no DSM-CC, reserved bits
  return d;
}

/** The PMT section at `s` with the metadata stream added; the PID it chose. */
function rewritePmt(section: Buffer): { section: Buffer; pid: number } {
  if (section[0] !== 0x02) throw new TsRewriteError('not a PMT section');
  const length = ((section[1]! & 0x0f) << 8) | section[2]!;
  const end = 3 + length - 4; // before the CRC
  const programNumber = section.readUInt16BE(3);
  const infoLength = ((section[10]! & 0x0f) << 8) | section[11]!;
  const info = section.subarray(12, 12 + infoLength);
  const streams = section.subarray(12 + infoLength, end);
  const used = new Set<number>([((section[8]! & 0x1f) << 8) | section[9]!]);
  for (let i = 0; i + 5 <= streams.length;) {
    if (streams[i] === METADATA_STREAM_TYPE) throw new TsRewriteError('the segment already has a metadata stream');
    used.add(((streams[i + 1]! & 0x1f) << 8) | streams[i + 2]!);
    i += 5 + (((streams[i + 3]! & 0x0f) << 8) | streams[i + 4]!);
  }
  let pid = 0x102;
  while (used.has(pid)) pid++;
  const md = metadataDescriptor();
  const entry = Buffer.concat([
    Buffer.from([METADATA_STREAM_TYPE, 0xe0 | (pid >> 8), pid & 0xff, 0xf0 | (md.length >> 8), md.length & 0xff]),
    md,
  ]);
  const newInfo = Buffer.concat([info, metadataPointerDescriptor(programNumber)]);
  const head = Buffer.from(section.subarray(0, 12));
  head[10] = (head[10]! & 0xf0) | (newInfo.length >> 8);
  head[11] = newInfo.length & 0xff;
  const body = Buffer.concat([head, newInfo, streams, entry]);
  const sectionLength = body.length - 3 + 4;
  body[1] = (body[1]! & 0xf0) | (sectionLength >> 8);
  body[2] = sectionLength & 0xff;
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32Mpeg2(body));
  return { section: Buffer.concat([body, crc]), pid };
}

/** A PSI packet holding one section, the rest stuffed with 0xFF (§2.4.4). */
function psiPacket(header: Buffer, section: Buffer): Buffer {
  if (section.length + 1 > PACKET - 4) throw new TsRewriteError('the PMT does not fit one packet');
  const p = Buffer.alloc(PACKET, 0xff);
  header.copy(p, 0, 0, 4);
  p[3] = (p[3]! & 0xcf) | 0x10; // payload only
  p[4] = 0; // pointer_field
  section.copy(p, 5);
  return p;
}

/** A 33-bit PTS in the 5-byte PES form with the given 4-bit prefix (§2.4.3.7). */
function ptsBytes(pts: number, prefix: number): Buffer {
  const v = BigInt(Math.round(pts)) & 0x1ffffffffn;
  return Buffer.from([
    (prefix << 4) | (Number(v >> 29n) & 0x0e) | 1,
    Number(v >> 22n) & 0xff,
    (Number(v >> 14n) & 0xfe) | 1,
    Number(v >> 7n) & 0xff,
    (Number(v << 1n) & 0xfe) | 1,
  ]);
}

/** The metadata PES (stream_id 0xBD, data aligned, PTS only) cut into TS packets of `pid`. */
function pesPackets(tag: Buffer, pts: number, pid: number): Buffer[] {
  const header = Buffer.concat([Buffer.from([0, 0, 1, 0xbd, 0, 0, 0x84, 0x80, 5]), ptsBytes(pts, 0x2)]);
  const pesLength = header.length - 6 + tag.length;
  if (pesLength > 0xffff) throw new TsRewriteError('the ID3 tag is too large for one PES');
  header.writeUInt16BE(pesLength, 4);
  const pes = Buffer.concat([header, tag]);
  const out: Buffer[] = [];
  for (let at = 0, cc = 0; at < pes.length; cc = (cc + 1) & 0x0f) {
    const chunk = pes.subarray(at, at + PACKET - 4);
    const p = Buffer.alloc(PACKET, 0xff);
    p[0] = SYNC;
    p[1] = (at === 0 ? 0x40 : 0) | (pid >> 8);
    p[2] = pid & 0xff;
    const stuffing = PACKET - 4 - chunk.length;
    if (stuffing === 0) {
      p[3] = 0x10 | cc;
      chunk.copy(p, 4);
    } else {
      // Short last packet: an adaptation field fills the gap (§2.4.3.5), 0xFF stuffing after its flags.
      p[3] = 0x30 | cc;
      p[4] = stuffing - 1;
      if (stuffing > 1) p[5] = 0;
      chunk.copy(p, 4 + stuffing);
    }
    out.push(p);
    at += chunk.length;
  }
  return out;
}

/**
 * The segment with an ID3 timed-metadata stream: every PMT rewritten to announce it, the tag's PES
 * (at `pts`, 90 kHz) right after the first PMT. Throws TsRewriteError on a segment it cannot rewrite.
 */
export function injectTimedId3(ts: Buffer, tag: Buffer, pts: number): Buffer {
  if (ts.length % PACKET !== 0 || ts.length === 0) throw new TsRewriteError('not a whole number of 188-byte packets');
  let pmtPid = -1;
  let rewritten: { section: Buffer; pid: number } | undefined;
  const out: Buffer[] = [];
  let inserted = false;
  for (let at = 0; at < ts.length; at += PACKET) {
    if (ts[at] !== SYNC) throw new TsRewriteError(`lost sync at byte ${at}`);
    const pid = pidOf(ts, at);
    let packet = ts.subarray(at, at + PACKET);
    if (pid === 0 && pmtPid < 0 && startsUnit(ts, at)) {
      const s = sectionAt(ts, at);
      // First program with a non-zero number (0 points to the NIT).
      for (let i = s + 8; i + 4 <= s + 3 + (((ts[s + 1]! & 0x0f) << 8) | ts[s + 2]!) - 4; i += 4) {
        if (ts.readUInt16BE(i) !== 0) {
          pmtPid = ts.readUInt16BE(i + 2) & 0x1fff;
          break;
        }
      }
    } else if (pid === pmtPid && startsUnit(ts, at)) {
      if (!rewritten) {
        const s = sectionAt(ts, at);
        const length = ((ts[s + 1]! & 0x0f) << 8) | ts[s + 2]!;
        if (s + 3 + length > at + PACKET) throw new TsRewriteError('the PMT spans packets');
        rewritten = rewritePmt(ts.subarray(s, s + 3 + length));
      }
      packet = psiPacket(packet, rewritten.section);
      out.push(packet);
      if (!inserted) {
        out.push(...pesPackets(tag, pts, rewritten.pid));
        inserted = true;
      }
      continue;
    }
    out.push(packet);
  }
  if (!inserted) throw new TsRewriteError('no PAT/PMT found');
  return Buffer.concat(out);
}
