/**
 * A squeeze break whose ads sum to less than the break (issue 30.5: ads are fitted, never more than
 * the break) is filled as the brand configures, `squeeze_fill.mode`:
 * - `loop` (default, what composition always did): the decided ads play again over the rest of
 *   the break (plan.ts placeOnTimeline), no tracking fired for the repeat;
 * - `slate`: the brand's slate MP4 fills the rest of the ad box, as an untracked entry after the
 *   ads (in pieces of `slate_duration_sec` each played from its start, when given);
 * - `content`: the break ends when its longest pod ends (whole segments), and content returns.
 * Decided once, when the break starts; the break's record then says what was chosen.
 */
import type { DecidedAd } from '../../ads/types.js';
import type { Decision } from './decide.js';
import { assignmentKey } from './plan.js';
import type { SqueezeFill } from '../config/types.js';

export type { SqueezeFill };

/** A gap shorter than this is rounding, not a shortfall (the same 0.5 s the stitcher's slate uses). */
export const MIN_GAP_SEC = 0.5;

export const SLATE_AD_ID = 'slate';

const total = (ads: DecidedAd[]) => ads.reduce((s, a) => s + a.durationSec, 0);

export interface Filled {
  decision: Decision;
  /** The break's duration: shortened by `content`, otherwise as asked. */
  durationSec: number;
  /** What was done, for the break's reason (undefined: nothing to fill, or loop). */
  note?: string;
}

/** The slate entries that cover `gap` seconds. */
function slateFor(uri: string, gap: number, pieceSec: number | undefined): DecidedAd[] {
  const out: DecidedAd[] = [];
  const piece = pieceSec && pieceSec > 0 ? pieceSec : gap;
  for (let left = gap; left > 1e-3; left -= piece)
    out.push({
      adId: SLATE_AD_ID,
      creativeId: SLATE_AD_ID,
      uri,
      durationSec: +Math.min(piece, left).toFixed(3),
      tracking: {},
      slate: true,
    });
  return out;
}

export function fillShortfall(
  decision: Decision,
  durationSec: number,
  fill: SqueezeFill | undefined,
  fallbackSlateUri?: string,
): Filled {
  const gaps = decision.assignments.map((a) => durationSec - total(a.ads));
  if (!fill || fill.mode === 'loop' || !decision.assignments.length || gaps.every((g) => g < MIN_GAP_SEC))
    return { decision, durationSec };
  if (fill.mode === 'content') {
    const longest = Math.max(...decision.assignments.map((a) => total(a.ads)));
    if (!(longest > 0)) return { decision, durationSec };
    return {
      decision,
      durationSec: longest,
      note: `break shortened from ${durationSec} s to its ads (${longest} s): squeeze_fill content`,
    };
  }
  const uri = fill.slate_uri ?? fallbackSlateUri;
  if (!uri)
    return { decision, durationSec, note: 'squeeze_fill slate without a slate_uri (nor stitch_slate): the ads loop' };
  const rekey = new Map<string, string>();
  const assignments = decision.assignments.map((a, i) => {
    if (gaps[i]! < MIN_GAP_SEC) return a;
    const ads = [...a.ads, ...slateFor(uri, +gaps[i]!.toFixed(3), fill.slate_duration_sec)];
    const key = assignmentKey(ads);
    rekey.set(a.key, key);
    return { ...a, key, ads };
  });
  const to = (k: string) => rekey.get(k) ?? k;
  const filled: Decision = {
    ...decision,
    assignments,
    defaultKey: decision.defaultKey === undefined ? undefined : to(decision.defaultKey),
    streamAssignments: Object.fromEntries(Object.entries(decision.streamAssignments).map(([s, k]) => [s, to(k)])),
  };
  return {
    decision: filled,
    durationSec,
    note: `${Math.max(...gaps).toFixed(1)} s of shortfall filled with the slate`,
  };
}
