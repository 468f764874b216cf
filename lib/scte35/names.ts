/** Names of SCTE 35 enumerated values, as the standard's tables spell them (SCTE 35 2023). */

/** §9.6 Table 5 sap_type. */
export const SAP_TYPES = ['Type 1', 'Type 2', 'Type 3', 'No SAP Type'] as const;

/** §9.7 Table 7 splice_command_type. */
export const COMMAND_NAMES: Record<number, string> = {
  0x00: 'splice_null',
  0x04: 'splice_schedule',
  0x05: 'splice_insert',
  0x06: 'time_signal',
  0x07: 'bandwidth_reservation',
  0xff: 'private_command',
};

/** §10.2 Table 16 splice_descriptor_tag (identifier "CUEI"). */
export const DESCRIPTOR_NAMES: Record<number, string> = {
  0x00: 'avail_descriptor',
  0x01: 'DTMF_descriptor',
  0x02: 'segmentation_descriptor',
  0x03: 'time_descriptor',
  0x04: 'audio_descriptor',
};

/** §11.3 Table 27 encryption_algorithm. */
export const ENCRYPTION_ALGORITHMS: Record<number, string> = {
  0: 'No encryption',
  1: 'DES – ECB mode',
  2: 'DES – CBC mode',
  3: 'Triple DES EDE3 – ECB mode',
};

/** §10.3.3.1 Table 21 device_restrictions. */
export const DEVICE_RESTRICTIONS = [
  'Restrict Group 0',
  'Restrict Group 1',
  'Restrict Group 2',
  'No Restrictions',
] as const;

/** §10.3.3.1 Table 22 segmentation_upid_type. */
export const UPID_TYPE_NAMES: Record<number, string> = {
  0x00: 'Not Used',
  0x01: 'User Defined',
  0x02: 'ISCI',
  0x03: 'Ad-ID',
  0x04: 'UMID',
  0x05: 'ISAN',
  0x06: 'ISAN',
  0x07: 'TID',
  0x08: 'TI',
  0x09: 'ADI',
  0x0a: 'EIDR',
  0x0b: 'ATSC Content Identifier',
  0x0c: 'MPU',
  0x0d: 'MID',
  0x0e: 'ADS Information',
  0x0f: 'URI',
  0x10: 'UUID',
  0x11: 'SCR',
};

/** §10.3.3.1 Table 23 segmentation_type_id. */
export const SEGMENTATION_TYPE_NAMES: Record<number, string> = {
  0x00: 'Not Indicated',
  0x01: 'Content Identification',
  0x02: 'Call Ad Server',
  0x10: 'Program Start',
  0x11: 'Program End',
  0x12: 'Program Early Termination',
  0x13: 'Program Breakaway',
  0x14: 'Program Resumption',
  0x15: 'Program Runover Planned',
  0x16: 'Program Runover Unplanned',
  0x17: 'Program Overlap Start',
  0x18: 'Program Blackout Override',
  0x19: 'Program Start – In Progress',
  0x20: 'Chapter Start',
  0x21: 'Chapter End',
  0x22: 'Break Start',
  0x23: 'Break End',
  0x24: 'Opening Credit Start',
  0x25: 'Opening Credit End',
  0x26: 'Closing Credit Start',
  0x27: 'Closing Credit End',
  0x30: 'Provider Advertisement Start',
  0x31: 'Provider Advertisement End',
  0x32: 'Distributor Advertisement Start',
  0x33: 'Distributor Advertisement End',
  0x34: 'Provider Placement Opportunity Start',
  0x35: 'Provider Placement Opportunity End',
  0x36: 'Distributor Placement Opportunity Start',
  0x37: 'Distributor Placement Opportunity End',
  0x38: 'Provider Overlay Placement Opportunity Start',
  0x39: 'Provider Overlay Placement Opportunity End',
  0x3a: 'Distributor Overlay Placement Opportunity Start',
  0x3b: 'Distributor Overlay Placement Opportunity End',
  0x3c: 'Provider Promo Start',
  0x3d: 'Provider Promo End',
  0x3e: 'Distributor Promo Start',
  0x3f: 'Distributor Promo End',
  0x40: 'Unscheduled Event Start',
  0x41: 'Unscheduled Event End',
  0x42: 'Alternate Content Opportunity Start',
  0x43: 'Alternate Content Opportunity End',
  0x44: 'Provider Ad Block Start',
  0x45: 'Provider Ad Block End',
  0x46: 'Distributor Ad Block Start',
  0x47: 'Distributor Ad Block End',
  0x50: 'Network Start',
  0x51: 'Network End',
};

/** Types that carry sub_segment_num / sub_segments_expected (§10.3.3.1, when the descriptor has room). */
export const SUB_SEGMENT_TYPES = new Set([0x34, 0x36, 0x38, 0x3a]);

export function nameOr(table: Record<number, string>, v: number): string {
  return table[v] ?? 'Reserved';
}
