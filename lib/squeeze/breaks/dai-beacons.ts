/**
 * Beacons of DAI streams (docs/design.md §6): DAI players never call /vast, so the service fires the
 * beacons of a tracking point itself, the first time a stream's manifest carries the squeezed
 * segment that holds it. Squeezeback-flow players fire theirs from /vast: their streams are skipped.
 * Wired to the break board's onSqueezed hook by the composition root.
 */
import type { BeaconForwarder } from '../../beacons/forwarder.js';
import { adsForStream, type SqueezedHook } from './board.js';

export function daiBeaconFiring(forwarder: BeaconForwarder): SqueezedHook {
  return (streamId, b, a, points, flow) => {
    if (flow === 'squeezeback') return;
    const ads = adsForStream(b, a, streamId);
    for (const p of points) for (const url of ads[p.ad]?.tracking[p.event] ?? []) forwarder.enqueue({ url, streamId, event: p.event, breakId: b.id });
  };
}
