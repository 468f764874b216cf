/**
 * ID3 frames as inspection-result tags (spec "ID3 inspection result": `value` and `metadata`,
 * plus `frame`, `description` and base64 `data` where the frame has them).
 */
import { isPrintable } from './text.js';
import type { Id3Frame, Id3Tag, Id3TagResult, TagTime } from './types.js';

function stripNuls(s: string): string {
  return s.replace(/\0+$/, '');
}

export function frameResult(f: Id3Frame, time: TagTime): Id3TagResult {
  const out: Id3TagResult = {
    frame: f.id,
    value: f.value ?? '',
    metadata: { timescale: time.timescale, presentation_time: time.presentation_time },
  };
  if (f.description !== undefined) out.description = f.description;
  if (f.data) {
    out.data = f.data.toString('base64');
    if (f.id === 'PRIV') {
      // PRIV bytes are often text (an ad id); when not, the owner says what they are.
      const text = stripNuls(f.data.toString('utf8'));
      out.value = isPrintable(text) ? text : (f.description ?? '');
    }
  }
  return out;
}

/** One result per frame of every tag, all at `time`. */
export function tagResults(tags: Id3Tag[], time: TagTime): Id3TagResult[] {
  const out: Id3TagResult[] = [];
  for (const t of tags) for (const f of t.frames) out.push(frameResult(f, time));
  return out;
}
