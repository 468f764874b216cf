/**
 * Micro benchmarks of the rewrite itself, raced against the typical alternative (hls-parser
 * parse → modify → stringify) on the same input: a 6 KB live variant and a 1,200-segment DVR window.
 */
import { parse, stringify } from 'hls-parser';
import type { MediaPlaylist as HlsParserMedia } from 'hls-parser/types.js';
import { rewritePlaylist, trimText, type UriRules } from '../lib/hls/index.js';
import { livePlaylist, defaultShape } from '../lib/sim/live-playlist.js';

const rules: UriRules = { daiHost: 'https://dai.example.com', proxyBase: 'https://edge.example.net/dai/manifest', contentOrigin: 'https://origin.example.org', playlistUrl: 'https://dai.example.com/linear/hls/event/E/stream/S/variant/720p.m3u8' };
const trim = { windowSegments: 10, delaySegments: 2 };

export function ours(text: string, opts = trim): string {
  const out = rewritePlaylist(text, rules).text;
  return trimText(out, opts) ?? out;
}

export function typical(text: string): string {
  const p = parse(text) as HlsParserMedia;
  for (const s of p.segments) if (s.uri.startsWith('/')) s.uri = rules.contentOrigin + s.uri;
  const keep = p.segments.slice(0, p.segments.length - trim.delaySegments);
  const dropped = Math.max(0, keep.length - trim.windowSegments);
  p.segments = keep.slice(dropped);
  p.mediaSequenceBase = (p.mediaSequenceBase ?? 0) + dropped;
  return stringify(p);
}

function opsPerSec(fn: (s: string) => string, input: string, minMs: number): number {
  for (let i = 0; i < 20; i++) fn(input); // warm up
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while ((elapsed = performance.now() - start) < minMs) {
    for (let i = 0; i < 10; i++) fn(input);
    n += 10;
  }
  return (n / elapsed) * 1000;
}

export interface MicroResult {
  name: string;
  bytes: number;
  ours: number;
  typical: number;
  ratio: number;
}

export function runMicro(quick: boolean): MicroResult[] {
  const now = defaultShape.epochMs + 100_000 * 6000;
  const inputs = [
    { name: 'live variant (30 segments)', text: livePlaylist('s1', now, { ...defaultShape, windowSegments: 30 }) },
    { name: 'DVR window (1,200 segments)', text: livePlaylist('s1', now, { ...defaultShape, windowSegments: 1200 }) },
  ];
  return inputs.map(({ name, text }) => {
    const a = opsPerSec(ours, text, quick ? 400 : 2000);
    const b = opsPerSec(typical, text, quick ? 400 : 2000);
    return { name, bytes: Buffer.byteLength(text), ours: Math.round(a), typical: Math.round(b), ratio: +(a / b).toFixed(1) };
  });
}
