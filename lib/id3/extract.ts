/** The one entry point: sniff the container, read its ID3 tags (docs/design.md §8). Never throws. */
import { emsgTags, type IsobmffOptions } from './isobmff.js';
import { packedAudioTags } from './packed-audio.js';
import { sniffContainer } from './sniff.js';
import { tsTimedMetadata } from './ts.js';
import type { ExtractResult, Id3TagResult } from './types.js';

export type ExtractOptions = IsobmffOptions;

export function extractTags(buf: Buffer, opts: ExtractOptions = {}): ExtractResult {
  const container = sniffContainer(buf);
  let tags: Id3TagResult[] = [];
  try {
    if (container === 'ts') tags = tsTimedMetadata(buf);
    else if (container === 'packed-audio') tags = packedAudioTags(buf);
    else if (container === 'isobmff') tags = emsgTags(buf, opts);
  } catch {
    // Every reader checks its bounds; a throw here (mux.js on bytes it never expected) means "no tags".
    tags = [];
  }
  return { container, tags };
}
