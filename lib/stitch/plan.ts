/**
 * From the VMAP's breaks to pods on the content timeline (VMAP 1.0.1 §2.4 timeOffset): `start`,
 * `end`, `HH:MM:SS(.mmm)`, `n%` of the content, and `#n`, the n-th break opportunity, counted over
 * the pre-roll, the catalog item's cue points and the post-roll. Pure.
 */
import { parseVastDuration } from '../ads/vast.js';
import type { DecidedAd } from '../ads/types.js';

export type BreakType = 'pre' | 'mid' | 'post';

/** Content seconds of a VMAP timeOffset, or undefined when it cannot be placed. */
export function breakOffset(timeOffset: string, contentSec: number, cuePoints: number[]): number | undefined {
  const t = timeOffset.trim();
  if (t === 'start') return 0;
  if (t === 'end') return contentSec;
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(t);
  if (pct) return (Math.min(100, Number(pct[1])) * contentSec) / 100;
  const pos = /^#(\d+)$/.exec(t);
  if (pos) {
    const opportunities = [...new Set([0, ...cuePoints.filter((c) => c > 0 && c < contentSec), contentSec])];
    return opportunities[Number(pos[1]) - 1];
  }
  const sec = /^\d{1,3}:\d{1,2}:\d{1,2}(\.\d+)?$/.test(t) ? parseVastDuration(t) : undefined;
  return sec === undefined ? undefined : Math.min(sec, contentSec);
}

export function breakType(offsetSec: number, contentSec: number): BreakType {
  if (offsetSec <= 1e-3) return 'pre';
  return offsetSec >= contentSec - 1e-3 ? 'post' : 'mid';
}

export interface PlannedPod {
  id: string;
  offsetSec: number;
  ads: DecidedAd[];
}

/**
 * Groups decided ads by their VMAP break and places each break. Ads of a break that cannot be
 * placed are reported; a plain VAST answer (no VMAP break) is a pre-roll.
 */
export function planPods(
  ads: DecidedAd[],
  contentSec: number,
  cuePoints: number[],
): { pods: PlannedPod[]; warnings: string[] } {
  const byBreak = new Map<number, { id: string; timeOffset: string; ads: DecidedAd[] }>();
  for (const ad of ads) {
    const index = ad.adBreak?.index ?? -1;
    let b = byBreak.get(index);
    if (!b)
      byBreak.set(
        index,
        (b = {
          id: ad.adBreak?.breakId ?? (index < 0 ? 'preroll' : `break-${index + 1}`),
          timeOffset: ad.adBreak?.timeOffset ?? 'start',
          ads: [],
        }),
      );
    b.ads.push(ad);
  }
  const pods: PlannedPod[] = [];
  const warnings: string[] = [];
  const ids = new Set<string>();
  for (const b of byBreak.values()) {
    const offsetSec = breakOffset(b.timeOffset, contentSec, cuePoints);
    if (offsetSec === undefined) {
      warnings.push(
        `break ${b.id}: timeOffset "${b.timeOffset.slice(0, 40)}" cannot be placed; its ${b.ads.length} ad(s) left out`,
      );
      continue;
    }
    let id = b.id;
    for (let n = 2; ids.has(id); n++) id = `${b.id}-${n}`;
    ids.add(id);
    pods.push({ id, offsetSec, ads: b.ads });
  }
  return { pods: pods.sort((a, b) => a.offsetSec - b.offsetSec), warnings };
}
