/** splice_command() bodies (SCTE 35 2023 §9.7) and the splice_time()/break_duration() they share (§9.8). */
import type { BitReader } from './bits.js';
import { adjust, gpsIso, seconds } from './times.js';
import type {
  BreakDuration,
  PrivateCommand,
  ScheduleEvent,
  SpliceInsert,
  SpliceInsertComponent,
  SpliceTime,
  TimeSignal,
} from './types.js';
import { fourCc } from './upid.js';

/** §9.8.1 splice_time(): time_specified_flag, then 6 reserved bits and a 33-bit pts_time, or 7 reserved bits. */
export function spliceTime(r: BitReader, adjustment: number): SpliceTime {
  if (!r.flag()) {
    r.skip(7);
    return { time_specified_flag: false };
  }
  r.skip(6);
  const ticks = r.bits(33);
  const adjusted = adjust(ticks, adjustment);
  return {
    time_specified_flag: true,
    pts_time_ticks: ticks,
    pts_time: seconds(ticks),
    pts_time_adjusted_ticks: adjusted,
    pts_time_adjusted: seconds(adjusted),
  };
}

/** §9.8.2 break_duration(): auto_return, 6 reserved bits, 33-bit duration. */
function breakDuration(r: BitReader): BreakDuration {
  const auto = r.flag();
  r.skip(6);
  const ticks = r.bits(33);
  return { break_auto_return: auto, break_duration_ticks: ticks, break_duration: seconds(ticks) };
}

/** §9.7.3 splice_insert(). */
export function spliceInsert(r: BitReader, adjustment: number): SpliceInsert {
  const c: SpliceInsert = {
    name: 'splice_insert',
    splice_event_id: r.bits(32),
    splice_event_cancel_indicator: r.flag(),
    event_id_compliance_flag: r.flag(),
  };
  r.skip(6);
  if (c.splice_event_cancel_indicator) return c;
  c.out_of_network_indicator = r.flag();
  c.program_splice_flag = r.flag();
  c.duration_flag = r.flag();
  c.splice_immediate_flag = r.flag();
  r.skip(4);
  if (c.program_splice_flag && !c.splice_immediate_flag) Object.assign(c, spliceTime(r, adjustment));
  if (!c.program_splice_flag) {
    const count = r.bits(8);
    const components: SpliceInsertComponent[] = [];
    for (let i = 0; i < count; i++) {
      const component_tag = r.bits(8);
      components.push(
        c.splice_immediate_flag
          ? { component_tag, time_specified_flag: false }
          : Object.assign({ component_tag }, spliceTime(r, adjustment)),
      );
    }
    c.components = components;
  }
  if (c.duration_flag) Object.assign(c, breakDuration(r));
  c.unique_program_id = r.bits(16);
  c.avail_num = r.bits(8);
  c.avails_expected = r.bits(8);
  return c;
}

/** §9.7.2 splice_schedule(): times are utc_splice_time, GPS seconds (not corrected for leap seconds in the ISO form). */
export function spliceSchedule(r: BitReader): {
  name: 'splice_schedule';
  splice_count: number;
  events: ScheduleEvent[];
} {
  const count = r.bits(8);
  const events: ScheduleEvent[] = [];
  for (let i = 0; i < count; i++) {
    const e: ScheduleEvent = {
      splice_event_id: r.bits(32),
      splice_event_cancel_indicator: r.flag(),
      event_id_compliance_flag: r.flag(),
    };
    r.skip(6);
    if (!e.splice_event_cancel_indicator) {
      e.out_of_network_indicator = r.flag();
      e.program_splice_flag = r.flag();
      e.duration_flag = r.flag();
      r.skip(5);
      if (e.program_splice_flag) {
        e.utc_splice_time = r.bits(32);
        e.utc_splice_time_iso = gpsIso(e.utc_splice_time);
      } else {
        const n = r.bits(8);
        e.components = [];
        for (let k = 0; k < n; k++) {
          const component_tag = r.bits(8);
          const t = r.bits(32);
          e.components.push({ component_tag, utc_splice_time: t, utc_splice_time_iso: gpsIso(t) });
        }
      }
      if (e.duration_flag) Object.assign(e, breakDuration(r));
      e.unique_program_id = r.bits(16);
      e.avail_num = r.bits(8);
      e.avails_expected = r.bits(8);
    }
    events.push(e);
  }
  return { name: 'splice_schedule', splice_count: count, events };
}

/** §9.7.4 time_signal(): a splice_time() only; its meaning is in the descriptors. */
export function timeSignal(r: BitReader, adjustment: number): TimeSignal {
  return Object.assign({ name: 'time_signal' as const }, spliceTime(r, adjustment));
}

/** §9.7.6 private_command(): identifier, then the rest of splice_command_length as private bytes. */
export function privateCommand(r: BitReader, length: number): PrivateCommand {
  const identifier = r.bits(32);
  const bytes = r.bytesOf(Math.max(0, length - 4));
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const c: PrivateCommand = {
    name: 'private_command',
    identifier,
    private_bytes_hex: buf.toString('hex'),
    private_bytes_base64: buf.toString('base64'),
  };
  const ascii = fourCc(identifier);
  if (ascii) c.identifier_ascii = ascii;
  return c;
}
