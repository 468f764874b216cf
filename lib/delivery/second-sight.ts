/**
 * Remembers which keys were seen recently: the admission filter of the micro-cache ("cache on the
 * second request", as nginx's `proxy_cache_min_uses 2`).
 *
 * A fixed table of 30-bit key hashes and the second each was seen, indexed by the hash: nothing is
 * allocated per key, so remembering costs the garbage collector nothing (a cached rendering that
 * is never asked for again is an entry, a key string and a body it has to copy and later free).
 * Two keys sharing a slot forget each other (the older is not admitted on its next fetch: one
 * more miss); two keys sharing a hash are taken for one (the second is admitted early: harmless).
 */
export class SecondSight {
  private readonly hashes: Int32Array;
  private readonly seconds: Int32Array;
  private readonly mask: number;

  /**
   * @param windowSec how long a key is remembered
   * @param slotsLog2 table size (2^17 slots: 1 MiB, about 13 s of 10,000 new keys a second)
   */
  constructor(
    private readonly windowSec = 15,
    slotsLog2 = 17,
  ) {
    this.hashes = new Int32Array(1 << slotsLog2);
    this.seconds = new Int32Array(1 << slotsLog2);
    this.mask = (1 << slotsLog2) - 1;
  }

  /** Records key; true when it had been seen within the window (and was not pushed out since). */
  seen(key: string, now = Date.now()): boolean {
    const h = hash30(key) + 1; // 0 marks an empty slot
    const slot = h & this.mask;
    const sec = Math.floor(now / 1000) & 0x3fffffff;
    const hit = this.hashes[slot] === h && sec - this.seconds[slot]! <= this.windowSec;
    this.hashes[slot] = h;
    this.seconds[slot] = sec;
    return hit;
  }
}

/** Code units hashed from a key's end: where the keys of one URL differ (the query, then the stream). */
const TAIL = 64;

/**
 * FNV-1a over the length and the last TAIL UTF-16 code units, folded to 30 bits (a small integer in
 * V8, never boxed). A key is a concatenation V8 keeps unflattened, where each character read walks
 * its parts: hashing all ~150 of a manifest key cost ~4,000 instructions per request (issue 31).
 * Keys that differ only further back share a hash, as any two keys may (see the class).
 */
function hash30(s: string): number {
  let h = Math.imul(0x811c9dc5 ^ s.length, 0x01000193);
  for (let i = Math.max(0, s.length - TAIL); i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 30)) & 0x3fffffff;
}
