/**
 * Renderings of identical upstream playlists, shared by the streams that fetched them (issue 31).
 *
 * A live event's viewers pull per-stream URLs (a stream or session id in the path, a token in the
 * query) whose upstream answers are, outside ad breaks, the same bytes: one window of the same
 * content segments. Trimming, rewriting, storing and hashing (the ETag) those bytes again for every
 * request was most of a distinct request's own work. A rendering depends on the upstream bytes,
 * the event's settings (window, live-edge delay, content origin: one settings object per version)
 * and the proxy's fixed rules; on the playlist's own URL only where a document-relative URI was
 * resolved against it, and such renderings are not kept. Break substitution (per stream, timed)
 * is applied after the memo, on every request.
 *
 * A fingerprint (a hash of the length and the last bytes, where a live playlist changes) finds a
 * candidate, and the bytes are compared whole, so a rendering is reused only for equal input. An entry is made
 * on its fingerprint's second sighting (the first costs a map slot, no copy), so per-session
 * playlists that never repeat cost a lookup and no copies; the memo is bounded by count and bytes
 * (all events together) and emptied when full.
 */
import type { Rendered } from './manifest-cache.js';

const MAX_ENTRIES = 1024;
const MAX_BYTES = 32 * 1024 * 1024;
/** Larger upstream playlists are not kept (a DVR window is ~120 KB; this is eight of them). */
const MAX_INPUT = 1024 * 1024;
/** Trailing bytes in the fingerprint: the last segment's URI line, where a sliding window differs. */
const TAIL = 48;

/** What a fingerprint seen once is counted as against MAX_BYTES (a map slot). */
const SLOT_BYTES = 32;

/** Break substitutions of one entry kept at most (the break assignments in play for one window). */
const MAX_VARIANTS = 16;

/** One upstream playlist's rendering before break substitution, and the whole renderings once made. */
export class MemoEntry {
  /** The rendering answered when no break changed the text (set by the first such request). */
  rendered: Rendered | undefined;
  /** Renderings of the texts breaks made of this one, by text: a rendering is a function of its text. */
  variants: Map<string, Rendered> | undefined;

  constructor(
    readonly raw: Buffer,
    readonly text: string,
  ) {}
}

export class RenderMemo {
  /** A number per scope (settings object) for the fingerprints; the scope itself is not held. */
  private readonly scopes = new WeakMap<object, number>();
  private nextScope = 0;
  /** By fingerprint: the entry, or null for a fingerprint seen once. One bound for all scopes. */
  private readonly entries = new Map<number, MemoEntry | null>();
  private bytes = 0;
  hits = 0;

  /**
   * The entry for these bytes under scope (the event's settings object), or, when there is none,
   * the fingerprint to keep() them under.
   */
  find(scope: object, raw: Buffer): MemoEntry | number {
    let id = this.scopes.get(scope);
    if (id === undefined) this.scopes.set(scope, (id = this.nextScope++));
    const fingerprint = fingerprintOf(id, raw);
    const entry = this.entries.get(fingerprint);
    if (entry && entry.raw.equals(raw)) {
      this.hits++;
      return entry;
    }
    return fingerprint;
  }

  /** Keeps text as the rendering of raw when its fingerprint (from find) was seen before; the entry, if one was made. */
  keep(fingerprint: number, raw: Buffer, text: string): MemoEntry | undefined {
    if (raw.length > MAX_INPUT) return undefined;
    if (this.entries.get(fingerprint) === undefined) {
      this.reserve(SLOT_BYTES);
      this.entries.set(fingerprint, null);
      return undefined;
    }
    const copy = Buffer.allocUnsafeSlow(raw.length); // its own memory: never a view of a shared read buffer
    raw.copy(copy);
    const entry = new MemoEntry(copy, text);
    // The input, its text, and the rendered body to come (about the text's size).
    this.reserve(raw.length + 3 * text.length);
    this.entries.set(fingerprint, entry);
    return entry;
  }

  /**
   * Keeps the rendering of a break's substitution of entry's text. The break source hands back the
   * same string for the same input and assignment, so a later lookup hashes no new text.
   */
  keepVariant(entry: MemoEntry, text: string, rendered: Rendered): void {
    entry.variants ??= new Map();
    if (entry.variants.size >= MAX_VARIANTS) entry.variants.clear();
    this.reserve(2 * text.length + rendered.body.byteLength);
    entry.variants.set(text, rendered);
  }

  private reserve(bytes: number): void {
    if (this.entries.size >= MAX_ENTRIES || this.bytes + bytes > MAX_BYTES) {
      this.entries.clear();
      this.bytes = 0;
    }
    this.bytes += bytes;
  }
}

/**
 * FNV-1a over the scope's number, the length and the last TAIL bytes, folded to 30 bits: a small
 * integer, so the lookup hashes no string (a string key was built, flattened and hashed per
 * request, issue 31). Two inputs may share one; find() compares the bytes, so they never share a
 * rendering, only a slot.
 */
function fingerprintOf(scope: number, raw: Buffer): number {
  let h = Math.imul(0x811c9dc5 ^ scope, 0x01000193);
  h = Math.imul(h ^ raw.length, 0x01000193);
  for (let i = Math.max(0, raw.length - TAIL); i < raw.length; i++) h = Math.imul(h ^ raw[i]!, 0x01000193);
  return (h ^ (h >>> 30)) & 0x3fffffff;
}
