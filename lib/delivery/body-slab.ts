/**
 * Response bodies of rendered manifests, packed into shared slabs.
 *
 * Every rendering is held by the micro-cache for a while, so an allocation of its own per body
 * meant one ArrayBuffer per request for V8 to track and free: under distinct-stream load, freeing
 * them (`sweep_array_buffers`) was 4 ms of each 9–11 ms full-GC pause. Bodies are written one
 * after another into a slab instead; the cache drops entries in about the order they were stored,
 * so a slab's bodies go together and the slab is freed once its last body is dropped. Large
 * bodies (DVR windows) still get their own allocation, where one ArrayBuffer per body is cheap.
 */
export class BodySlab {
  private slab: Buffer | undefined;
  private offset = 0;

  /**
   * @param slabSize bytes per slab
   * @param maxPacked bodies of more UTF-8 bytes than this (at most) get their own allocation
   */
  constructor(
    private readonly slabSize = 512 * 1024,
    private readonly maxPacked = 64 * 1024,
  ) {}

  /** text as UTF-8 bytes, in a slab when it is small. The bytes must not be written to. */
  store(text: string): Buffer {
    const worst = text.length * 3; // UTF-8 bytes per UTF-16 unit, at most
    if (worst > this.maxPacked) return ownBytes(text);
    if (!this.slab || this.offset + worst > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(this.slabSize);
      this.offset = 0;
    }
    const start = this.offset;
    const written = this.slab.write(text, start, 'utf8'); // room for the worst case: never cut short
    this.offset = (start + written + 7) & ~7;
    return this.slab.subarray(start, start + written);
  }
}

/** text's UTF-8 bytes in an allocation of their own (not Node's shared 8 KB pool). */
export function ownBytes(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const bytes = Buffer.allocUnsafeSlow(length);
  bytes.write(text, 0, length, 'utf8');
  return bytes;
}
