/**
 * ID3 timed metadata in an MPEG-2 transport stream (ISO/IEC 13818-1 §2.4.3 packets, §2.4.3.6 PES;
 * HLS "Timed Metadata for HTTP Live Streaming"; docs/design.md §8): the PMT lists the metadata stream
 * with stream type 0x15 (metadata_descriptor 0x26, format 'ID3 ', PES stream_id 0xBD).
 *
 * mux.js does the packet sync, PAT/PMT and PES reassembly (TransportPacketStream →
 * TransportParseStream → ElementaryStream) and the 33-bit PTS; it is right on every fixture.
 * What it does not do is done here: a tag over 64 KiB spans PES packets (continuations have
 * data_alignment_indicator 0 and no PTS), which mux.js emits as separate PES; and a PES may hold
 * several tags back to back, which its MetadataStream drops, so the ID3 parse is ours.
 * Only PMT/PAT and metadata PES reach ElementaryStream: audio and video are never reassembled.
 */
import m2ts, { type PesEvent, type TsPacketEvent } from 'mux.js/lib/m2ts/m2ts.js';
import { handleRollover } from 'mux.js/lib/m2ts/timestamp-rollover-stream.js';
import { parseId3Tags } from './tag.js';
import { tagResults } from './tag-result.js';
import { PTS_TIMESCALE, type Id3TagResult } from './types.js';

interface Pending {
  pts: number | undefined;
  chunks: Buffer[];
}

function startsWithId3(d: Uint8Array): boolean {
  return d.length >= 3 && d[0] === 0x49 && d[1] === 0x44 && d[2] === 0x33;
}

/** Tags of every metadata PES in the segment, each at the PTS of the PES that carried its start. */
export function tsTimedMetadata(buf: Buffer): Id3TagResult[] {
  const packets = new m2ts.TransportPacketStream();
  const parse = new m2ts.TransportParseStream();
  const elementary = new m2ts.ElementaryStream();
  packets.on('data', (p) => parse.push(p));
  parse.on('data', (d: TsPacketEvent) => {
    if (d.type !== 'pes' || d.streamType === m2ts.METADATA_STREAM_TYPE) elementary.push(d);
  });

  const out: Id3TagResult[] = [];
  const pending = new Map<number, Pending>();
  let reference: number | undefined;
  const finish = (p: Pending) => {
    const bytes = p.chunks.length === 1 ? p.chunks[0]! : Buffer.concat(p.chunks);
    if (p.pts === undefined) return; // no PES of this tag had a PTS: no time to give it
    // Rollover relative to the segment's first metadata PTS, so times stay monotonic across 2^33.
    reference ??= p.pts;
    out.push(
      ...tagResults(parseId3Tags(bytes), {
        timescale: PTS_TIMESCALE,
        presentation_time: handleRollover(p.pts, reference),
      }),
    );
  };
  elementary.on('data', (e: PesEvent) => {
    if (e.type !== 'timed-metadata' || !e.data || e.data.length === 0) return;
    const pid = e.trackId ?? -1;
    const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
    const prev = pending.get(pid);
    const continuation = prev && e.pts === undefined && !(e.dataAlignmentIndicator && startsWithId3(data));
    if (continuation) {
      prev.chunks.push(data);
      return;
    }
    if (prev) finish(prev);
    pending.set(pid, { pts: e.pts ?? prev?.pts, chunks: [data] });
  });

  packets.push(buf);
  packets.flush();
  elementary.flush();
  for (const p of pending.values()) finish(p);
  return out;
}
