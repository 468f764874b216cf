/**
 * The decoded shapes: plain JSON objects whose field names follow SCTE 35 2023 (snake_case), so
 * output compares with threefive and SCTE's own tools. Every 90 kHz time is given twice: `…_ticks`
 * (the integer in the stream) and the bare name in seconds (rounded to the microsecond), as
 * threefive does. Splice times also carry `…_adjusted`: (pts_time + pts_adjustment) mod 2^33.
 */

export interface SpliceTime {
  time_specified_flag: boolean;
  pts_time_ticks?: number;
  pts_time?: number;
  pts_time_adjusted_ticks?: number;
  pts_time_adjusted?: number;
}

export interface BreakDuration {
  break_auto_return?: boolean;
  break_duration_ticks?: number;
  break_duration?: number;
}

export interface SpliceInsertComponent extends SpliceTime {
  component_tag: number;
}

export interface SpliceNull {
  name: 'splice_null';
}

export interface ScheduleEvent {
  splice_event_id: number;
  splice_event_cancel_indicator: boolean;
  event_id_compliance_flag: boolean;
  out_of_network_indicator?: boolean;
  program_splice_flag?: boolean;
  duration_flag?: boolean;
  /** Seconds since 1980-01-06T00:00:00Z GPS epoch (§9.7.2.1), and the same instant as ISO text. */
  utc_splice_time?: number;
  utc_splice_time_iso?: string;
  components?: { component_tag: number; utc_splice_time: number; utc_splice_time_iso: string }[];
  break_auto_return?: boolean;
  break_duration_ticks?: number;
  break_duration?: number;
  unique_program_id?: number;
  avail_num?: number;
  avails_expected?: number;
}

export interface SpliceSchedule {
  name: 'splice_schedule';
  splice_count: number;
  events: ScheduleEvent[];
}

export interface SpliceInsert extends Partial<SpliceTime>, BreakDuration {
  name: 'splice_insert';
  splice_event_id: number;
  splice_event_cancel_indicator: boolean;
  event_id_compliance_flag: boolean;
  out_of_network_indicator?: boolean;
  program_splice_flag?: boolean;
  duration_flag?: boolean;
  splice_immediate_flag?: boolean;
  components?: SpliceInsertComponent[];
  unique_program_id?: number;
  avail_num?: number;
  avails_expected?: number;
}

export interface TimeSignal extends SpliceTime {
  name: 'time_signal';
}

export interface BandwidthReservation {
  name: 'bandwidth_reservation';
}

export interface PrivateCommand {
  name: 'private_command';
  identifier: number;
  /** The identifier as four ASCII characters when printable (e.g. "CUEI"). */
  identifier_ascii?: string;
  private_bytes_hex: string;
  private_bytes_base64: string;
}

export interface UnknownCommand {
  name: 'unknown';
  bytes_hex: string;
}

/** The encrypted part (§11) is not decrypted: its bytes are kept as they are. */
export interface EncryptedCommand {
  name: 'encrypted';
  encrypted_bytes_hex: string;
}

export type SpliceCommand =
  | SpliceNull
  | SpliceSchedule
  | SpliceInsert
  | TimeSignal
  | BandwidthReservation
  | PrivateCommand
  | UnknownCommand
  | EncryptedCommand;

/** A readable UPID value: text, hex, a structure for ATSC/MPU, or for MID the nested UPIDs. */
export type UpidValue = string | AtscUpid | MpuUpid | Upid[];

export interface AtscUpid {
  TSID: number;
  end_of_day: number;
  unique_for: number;
  content_id: string;
}

export interface MpuUpid {
  format_identifier: number;
  format_identifier_ascii?: string;
  private_data_hex: string;
}

export interface Upid {
  segmentation_upid_type: number;
  segmentation_upid_type_name: string;
  segmentation_upid_length: number;
  segmentation_upid: UpidValue;
}

interface DescriptorBase {
  splice_descriptor_tag: number;
  descriptor_length: number;
  identifier: string;
}

export interface AvailDescriptor extends DescriptorBase {
  name: 'avail_descriptor';
  provider_avail_id: number;
}

export interface DtmfDescriptor extends DescriptorBase {
  name: 'DTMF_descriptor';
  /** Tenths of a second (§10.3.2). */
  preroll: number;
  dtmf_count: number;
  dtmf_chars: string;
}

export interface SegmentationComponent {
  component_tag: number;
  pts_offset_ticks: number;
  pts_offset: number;
}

export interface SegmentationDescriptor extends DescriptorBase, Partial<Upid> {
  name: 'segmentation_descriptor';
  segmentation_event_id: number;
  segmentation_event_cancel_indicator: boolean;
  segmentation_event_id_compliance_indicator: boolean;
  program_segmentation_flag?: boolean;
  segmentation_duration_flag?: boolean;
  delivery_not_restricted_flag?: boolean;
  web_delivery_allowed_flag?: boolean;
  no_regional_blackout_flag?: boolean;
  archive_allowed_flag?: boolean;
  device_restrictions?: number;
  device_restrictions_name?: string;
  components?: SegmentationComponent[];
  segmentation_duration_ticks?: number;
  segmentation_duration?: number;
  segmentation_type_id?: number;
  segmentation_type_name?: string;
  segment_num?: number;
  segments_expected?: number;
  sub_segment_num?: number;
  sub_segments_expected?: number;
}

export interface TimeDescriptor extends DescriptorBase {
  name: 'time_descriptor';
  TAI_seconds: number;
  TAI_ns: number;
  UTC_offset: number;
}

export interface AudioDescriptor extends DescriptorBase {
  name: 'audio_descriptor';
  audio_count: number;
  components: {
    component_tag: number;
    ISO_code: string;
    bit_stream_mode: number;
    num_channels: number;
    full_srvc_audio: boolean;
  }[];
}

/** A descriptor this decoder does not interpret (other tags, or an identifier other than CUEI). */
export interface UnknownDescriptor extends DescriptorBase {
  name: 'unknown';
  private_bytes_hex: string;
}

export type SpliceDescriptor =
  AvailDescriptor | DtmfDescriptor | SegmentationDescriptor | TimeDescriptor | AudioDescriptor | UnknownDescriptor;

export interface SpliceInfoSection {
  table_id: number;
  section_syntax_indicator: boolean;
  private_indicator: boolean;
  sap_type: number;
  sap_type_name: string;
  section_length: number;
  protocol_version: number;
  encrypted_packet: boolean;
  encryption_algorithm: number;
  encryption_algorithm_name: string;
  pts_adjustment_ticks: number;
  pts_adjustment: number;
  cw_index: number;
  tier: number;
  splice_command_length: number;
  /** null when the packet is encrypted: the type is inside the encrypted part (§11). */
  splice_command_type: number | null;
  splice_command_type_name: string;
  splice_command: SpliceCommand;
  descriptor_loop_length: number | null;
  splice_descriptors: SpliceDescriptor[];
  /** "0x…", 8 hex digits, as in the stream. */
  crc_32: string;
  crc_ok: boolean;
}
