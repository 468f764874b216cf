/** splice_descriptor() loop (SCTE 35 2023 §10). Each descriptor is read inside its own length. */
import { BitReader } from './bits.js';
import { Scte35Error } from './errors.js';
import { DEVICE_RESTRICTIONS, nameOr, SEGMENTATION_TYPE_NAMES, SUB_SEGMENT_TYPES } from './names.js';
import { seconds } from './times.js';
import type { SegmentationComponent, SegmentationDescriptor, SpliceDescriptor } from './types.js';
import { fourCc, upid } from './upid.js';

const CUEI = 0x43554549;
const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** §10.3.3.1 segmentation_descriptor(), after identifier. */
function segmentation(
  r: BitReader,
  base: { splice_descriptor_tag: number; descriptor_length: number; identifier: string },
): SegmentationDescriptor {
  const d: SegmentationDescriptor = {
    splice_descriptor_tag: base.splice_descriptor_tag,
    descriptor_length: base.descriptor_length,
    identifier: base.identifier,
    name: 'segmentation_descriptor',
    segmentation_event_id: r.bits(32),
    segmentation_event_cancel_indicator: r.flag(),
    segmentation_event_id_compliance_indicator: r.flag(),
  };
  r.skip(6);
  if (d.segmentation_event_cancel_indicator) return d;
  d.program_segmentation_flag = r.flag();
  d.segmentation_duration_flag = r.flag();
  d.delivery_not_restricted_flag = r.flag();
  if (!d.delivery_not_restricted_flag) {
    d.web_delivery_allowed_flag = r.flag();
    d.no_regional_blackout_flag = r.flag();
    d.archive_allowed_flag = r.flag();
    d.device_restrictions = r.bits(2);
    d.device_restrictions_name = DEVICE_RESTRICTIONS[d.device_restrictions];
  } else {
    r.skip(5);
  }
  if (!d.program_segmentation_flag) {
    const count = r.bits(8);
    const components: SegmentationComponent[] = [];
    for (let i = 0; i < count; i++) {
      const component_tag = r.bits(8);
      r.skip(7);
      const ticks = r.bits(33);
      components.push({ component_tag, pts_offset_ticks: ticks, pts_offset: seconds(ticks) });
    }
    d.components = components;
  }
  if (d.segmentation_duration_flag) {
    d.segmentation_duration_ticks = r.bits(40);
    d.segmentation_duration = seconds(d.segmentation_duration_ticks);
  }
  const upidType = r.bits(8);
  const upidLength = r.bits(8);
  Object.assign(d, upid(upidType, r.bytesOf(upidLength)));
  d.segmentation_type_id = r.bits(8);
  d.segmentation_type_name = nameOr(SEGMENTATION_TYPE_NAMES, d.segmentation_type_id);
  d.segment_num = r.bits(8);
  d.segments_expected = r.bits(8);
  // Encoders before SCTE 35 2016 omit the sub-segment fields: read them only when the descriptor has room.
  if (SUB_SEGMENT_TYPES.has(d.segmentation_type_id) && r.bytesLeft >= 2) {
    d.sub_segment_num = r.bits(8);
    d.sub_segments_expected = r.bits(8);
  }
  return d;
}

function descriptor(r: BitReader, tag: number, length: number, identifier: number): SpliceDescriptor {
  const base = {
    splice_descriptor_tag: tag,
    descriptor_length: length,
    identifier: fourCc(identifier) ?? `0x${identifier.toString(16).padStart(8, '0')}`,
  };
  if (identifier === CUEI) {
    switch (tag) {
      case 0x00: // §10.3.1
        return {
          splice_descriptor_tag: base.splice_descriptor_tag,
          descriptor_length: base.descriptor_length,
          identifier: base.identifier,
          name: 'avail_descriptor',
          provider_avail_id: r.bits(32),
        };
      case 0x01: {
        // §10.3.2
        const preroll = r.bits(8);
        const dtmf_count = r.bits(3);
        r.skip(5);
        const chars = r.bytesOf(dtmf_count);
        return {
          splice_descriptor_tag: base.splice_descriptor_tag,
          descriptor_length: base.descriptor_length,
          identifier: base.identifier,
          name: 'DTMF_descriptor',
          preroll,
          dtmf_count,
          dtmf_chars: Buffer.from(chars).toString('latin1'),
        };
      }
      case 0x02:
        return segmentation(r, base);
      case 0x03: // §10.3.4
        return {
          splice_descriptor_tag: base.splice_descriptor_tag,
          descriptor_length: base.descriptor_length,
          identifier: base.identifier,
          name: 'time_descriptor',
          TAI_seconds: r.bits(48),
          TAI_ns: r.bits(32),
          UTC_offset: r.bits(16),
        };
      case 0x04: {
        // §10.3.5
        const audio_count = r.bits(4);
        r.skip(4);
        const components = [];
        for (let i = 0; i < audio_count; i++) {
          const component_tag = r.bits(8);
          const iso = r.bytesOf(3);
          const bit_stream_mode = r.bits(3);
          const num_channels = r.bits(4);
          const full_srvc_audio = r.flag();
          components.push({
            component_tag,
            ISO_code: Buffer.from(iso).toString('latin1'),
            bit_stream_mode,
            num_channels,
            full_srvc_audio,
          });
        }
        return {
          splice_descriptor_tag: base.splice_descriptor_tag,
          descriptor_length: base.descriptor_length,
          identifier: base.identifier,
          name: 'audio_descriptor',
          audio_count,
          components,
        };
      }
    }
  }
  return {
    splice_descriptor_tag: base.splice_descriptor_tag,
    descriptor_length: base.descriptor_length,
    identifier: base.identifier,
    name: 'unknown',
    private_bytes_hex: hex(r.bytesOf(r.bytesLeft)),
  };
}

/** The descriptor loop of descriptor_loop_length bytes starting at `start` (§9.6). */
export function readDescriptors(bytes: Uint8Array, start: number, end: number): SpliceDescriptor[] {
  const out: SpliceDescriptor[] = [];
  let at = start;
  while (at < end) {
    if (at + 2 > end) throw new Scte35Error('descriptor-length', 'descriptor header past the descriptor loop', at);
    const tag = bytes[at]!;
    const length = bytes[at + 1]!;
    const stop = at + 2 + length;
    if (stop > end)
      throw new Scte35Error(
        'descriptor-length',
        `descriptor 0x${tag.toString(16)} of ${length} bytes overruns the loop`,
        at,
      );
    if (length < 4)
      throw new Scte35Error('descriptor-length', `descriptor 0x${tag.toString(16)} shorter than its identifier`, at);
    const r = new BitReader(bytes, at + 2, stop, 'descriptor-length');
    const identifier = r.bits(32);
    out.push(descriptor(r, tag, length, identifier));
    // Bytes a known descriptor leaves unread are skipped: later versions may extend it (§10.1).
    at = stop;
  }
  return out;
}
