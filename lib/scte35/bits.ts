/**
 * A bounds-checked MSB-first bit reader over a byte range. Values up to 53 bits come back as
 * numbers built by multiplication (33-, 40- and 48-bit fields exceed what `<<` can hold).
 */
import { Scte35Error, type Scte35ErrorCode } from './errors.js';

export class BitReader {
  private bit: number;
  private readonly endBit: number;

  constructor(
    readonly bytes: Uint8Array,
    start: number,
    end: number,
    /** The error code an overrun reports: 'truncated' for the section, 'descriptor-length' inside a descriptor. */
    private readonly overrun: Scte35ErrorCode = 'truncated',
  ) {
    this.bit = start * 8;
    this.endBit = end * 8;
  }

  /** Current byte offset (rounded down). */
  get offset(): number {
    return this.bit >>> 3;
  }

  get bytesLeft(): number {
    return (this.endBit - this.bit) >>> 3;
  }

  bits(n: number): number {
    let pos = this.bit;
    if (pos + n > this.endBit) this.fail(`${n} bits`);
    let v = 0;
    let left = n;
    while (left > 0) {
      const used = pos & 7;
      const avail = 8 - used;
      const take = left < avail ? left : avail;
      const chunk = (this.bytes[pos >>> 3]! >>> (avail - take)) & ((1 << take) - 1);
      v = v * (1 << take) + chunk;
      pos += take;
      left -= take;
    }
    this.bit = pos;
    return v;
  }

  flag(): boolean {
    return this.bits(1) === 1;
  }

  skip(n: number): void {
    if (this.bit + n > this.endBit) this.fail(`${n} bits`);
    this.bit += n;
  }

  /** n whole bytes (the reader must be byte-aligned, as every SCTE 35 byte loop is). */
  bytesOf(n: number): Uint8Array {
    const at = this.bit >>> 3;
    if (this.bit + n * 8 > this.endBit) this.fail(`${n} bytes`);
    this.bit += n * 8;
    return this.bytes.subarray(at, at + n);
  }

  private fail(what: string): never {
    throw new Scte35Error(this.overrun, `needs ${what} past the end`, this.bit >>> 3);
  }
}
