/** An independent parser (m3u8-parser, video.js) to check what we write. */
import { Parser } from 'm3u8-parser';

export interface Parsed {
  segments: Array<{
    uri: string;
    duration: number;
    discontinuity?: boolean;
    dateTimeString?: string;
    map?: { uri: string };
    key?: { uri: string };
  }>;
  mediaSequence?: number;
  discontinuitySequence?: number;
  targetDuration?: number;
  endList?: boolean;
  playlists?: Array<{ uri: string }>;
  mediaGroups?: Record<string, Record<string, Record<string, { uri?: string }>>>;
}

export function reparse(text: string): Parsed {
  const p = new Parser();
  p.push(text);
  p.end();
  return p.manifest as unknown as Parsed;
}
