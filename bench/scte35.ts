/**
 * SCTE-35 decode rate: every valid cue of the HLS and DASH fixtures, decoded in a loop for ~2 s.
 * Target (issue 15): ≥ 200,000 typical cues per second on one core.
 * Run: `npm run build && node dist/bench/scte35.js [ms]`; `scte35Rate()` is for the bench runner.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../lib/paths.js';
import { readHlsCues, tryDecodeSplice } from '../lib/scte35/index.js';

function files(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p, ext));
    else if (name.endsWith(ext)) out.push(p);
  }
  return out;
}

/** The distinct valid base64/hex payloads in test/fixtures, as they appear in the manifests. */
export function fixtureCues(): string[] {
  const root = path.join(projectRoot, 'test', 'fixtures');
  const found = new Set<string>();
  for (const f of files(path.join(root, 'hls'), '.m3u8')) {
    const r = readHlsCues(readFileSync(f, 'utf8'));
    for (const c of [...r.segments.flatMap((s) => s.cues), ...r.pending]) {
      const m =
        c.scte35 &&
        /(?:SCTE35(?:-OUT|-IN|-CMD)?=|CUE=")?([A-Za-z0-9+/=]{16,}|0x[0-9A-Fa-f]+)"?$/.exec(
          (c.binary_tag ?? c.tag).split(/[:,]/).pop() ?? '',
        );
      if (m) found.add(m[1]!);
    }
  }
  for (const f of files(path.join(root, 'dash'), '.mpd')) {
    for (const m of readFileSync(f, 'utf8').matchAll(/<(?:scte35:)?binary>\s*([^<\s]+)\s*</gi)) found.add(m[1]!);
  }
  return [...found].filter((s) => tryDecodeSplice(s).ok);
}

export function scte35Rate(ms = 2000): { cues: number; distinct: number; perSecond: number } {
  const cues = fixtureCues();
  for (let i = 0; i < 20000; i++) tryDecodeSplice(cues[i % cues.length]!); // warm up the JIT
  let n = 0;
  let sink = 0;
  const start = performance.now();
  let elapsed = 0;
  while ((elapsed = performance.now() - start) < ms) {
    for (let i = 0; i < cues.length; i++) {
      const r = tryDecodeSplice(cues[i]!);
      if (r.ok) sink += r.value.section_length;
    }
    n += cues.length;
  }
  if (sink === 0) throw new Error('nothing decoded');
  return { cues: n, distinct: cues.length, perSecond: Math.round((n / elapsed) * 1000) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const r = scte35Rate(Number(process.argv[2]) || 2000);
  console.log(
    `scte35 decode: ${r.perSecond.toLocaleString('en')} cues/s (${r.distinct} distinct fixture cues, ${r.cues.toLocaleString('en')} decodes, one core)`,
  );
}
