/**
 * The sources stitched sessions are rendered from (content and ad manifests), by source key, shared
 * by every session that uses them, and the texts rendered from them, by session: both bounded by
 * characters (least recently used first). A source not here is read again (fetched, or read from
 * the conditioning store), a rendering not here is rendered again, by whoever asks.
 */
import type { HlsSource } from './hls/stitch.js';

/** An HLS master with its media playlists, or a DASH MPD with the URL it was read from. */
export type Source = HlsSource | { url: string; mpd: string };

export function sourceChars(s: Source): number {
  if ('mpd' in s) return s.url.length + s.mpd.length;
  let n = s.url.length + s.master.length;
  for (const [u, text] of s.playlists) n += u.length + text.length;
  return n;
}

export function filesChars(files: Record<string, string>): number {
  let n = 0;
  for (const name in files) n += files[name]!.length;
  return n;
}

export class CharLru<V> {
  private readonly entries = new Map<string, { source: V; chars: number }>();
  private chars = 0;

  constructor(
    private readonly maxChars: number,
    private readonly charsOf: (v: V) => number,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key); // Map order is the eviction order: most recently used last
    this.entries.set(key, e);
    return e.source;
  }

  set(key: string, source: V): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.chars -= old.chars;
    }
    const chars = this.charsOf(source);
    this.entries.set(key, { source, chars });
    this.chars += chars;
    for (const [k, e] of this.entries) {
      if (this.chars <= this.maxChars || k === key) break;
      this.entries.delete(k);
      this.chars -= e.chars;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
