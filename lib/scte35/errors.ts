/** The one exception type the SCTE-35 decoder lets escape: a code to branch on and the byte offset. */
export type Scte35ErrorCode =
  | 'encoding' // not base64, not hex, or empty
  | 'truncated' // fewer bytes than section_length (or a field) needs
  | 'too-long' // bytes after the section's CRC_32 (section_length + 3)
  | 'table-id' // table_id is not 0xFC
  | 'crc' // CRC-32/MPEG-2 over the section is not zero
  | 'command-length' // splice_command_length disagrees with the command read
  | 'command-type' // an unknown splice_command_type whose length is not given
  | 'descriptor-length' // a descriptor (or the loop) overruns its stated length
  | 'internal'; // tryDecodeSplice only: a decoder fault that was not a Scte35Error (a bug)

export class Scte35Error extends Error {
  override readonly name = 'Scte35Error';
  constructor(
    readonly code: Scte35ErrorCode,
    message: string,
    /** Byte offset into the decoded section where the problem was found. */
    readonly offset: number,
  ) {
    super(`${message} (at byte ${offset})`);
  }

  toJSON(): { code: Scte35ErrorCode; message: string; offset: number } {
    return { code: this.code, message: this.message, offset: this.offset };
  }
}
