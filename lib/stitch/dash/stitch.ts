/** DASH VOD stitching (docs/design.md §11). */
import { StitchError } from '../errors.js';
import type { StitchedPod } from '../hls/stitch.js';

export interface DashPodInput {
  id: string;
  offsetSec: number;
  ads: Array<{ id: string; url: string; mpd: string }>;
}

export interface StitchedDash {
  mpd: string;
  pods: StitchedPod[];
  contentDuration: number;
  skipped: Array<{ podId: string; adId: string; reason: string }>;
}

export function stitchDash(content: { url: string; mpd: string }, pods: DashPodInput[]): StitchedDash {
  void content;
  void pods;
  throw new StitchError('unsupported', 'DASH stitching is not available yet');
}
