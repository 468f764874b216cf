/**
 * What a decoded section means for ad insertion (docs/design.md §10): ad starts are splice_insert with
 * out_of_network_indicator=1 and time_signal segmentation types 0x22/0x30/0x32/0x34/0x36; ends are
 * splice_insert out_of_network=0 and the matching end types; a cancel indicator is 'cancel'.
 * Program, chapter and other types never trigger. Every descriptor is checked: real cues mix types.
 */
import type { SegmentationDescriptor, SpliceInfoSection } from './types.js';

export type CueKind = 'out' | 'cont' | 'in' | 'cancel' | 'other';

const STARTS = new Set([0x22, 0x30, 0x32, 0x34, 0x36]);
const ENDS = new Set([0x23, 0x31, 0x33, 0x35, 0x37]);

export interface Classified {
  /** undefined: the section carries no ad meaning either way (splice_null, a bare time_signal). */
  kind: Exclude<CueKind, 'cont'> | undefined;
  event_id?: number;
  /** The binary's duration in seconds: break_duration, else the deciding segmentation_duration. */
  duration_sec?: number;
}

export function classifySection(s: SpliceInfoSection): Classified {
  const c = s.splice_command;
  if (c.name === 'splice_insert') {
    const kind = c.splice_event_cancel_indicator ? 'cancel' : c.out_of_network_indicator ? 'out' : 'in';
    const out: Classified = { kind, event_id: c.splice_event_id };
    if (c.break_duration !== undefined) out.duration_sec = c.break_duration;
    return out;
  }
  const segs = s.splice_descriptors.filter((d): d is SegmentationDescriptor => d.name === 'segmentation_descriptor');
  if (segs.length === 0) return { kind: undefined };
  // A start wins over an end in the same cue (back-to-back: the previous one ends as the next starts).
  const pick =
    segs.find((d) => !d.segmentation_event_cancel_indicator && STARTS.has(d.segmentation_type_id!)) ??
    segs.find((d) => !d.segmentation_event_cancel_indicator && ENDS.has(d.segmentation_type_id!)) ??
    segs.find((d) => d.segmentation_event_cancel_indicator);
  if (!pick) return { kind: 'other', event_id: segs[0]!.segmentation_event_id };
  const kind = pick.segmentation_event_cancel_indicator
    ? 'cancel'
    : STARTS.has(pick.segmentation_type_id!)
      ? 'out'
      : 'in';
  const out: Classified = { kind, event_id: pick.segmentation_event_id };
  if (pick.segmentation_duration !== undefined) out.duration_sec = pick.segmentation_duration;
  return out;
}

/**
 * The trigger-once key from the binary: command + event id + adjusted PTS. A cue without a PTS
 * (splice_immediate, time_specified_flag 0) takes its segment's media sequence instead: encoders
 * reuse event ids, so id alone would merge two breaks.
 */
export function sectionKey(s: SpliceInfoSection, eventId: number | undefined, mediaSequence: number): string {
  const c = s.splice_command;
  const pts =
    'pts_time_adjusted_ticks' in c && c.pts_time_adjusted_ticks !== undefined
      ? String(c.pts_time_adjusted_ticks)
      : `msn${mediaSequence}`;
  return `${s.splice_command_type_name}:${eventId ?? '-'}:${pts}`;
}
