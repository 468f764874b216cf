/**
 * Beacons of DAI streams (docs/design.md §6): DAI players never call /vast, so the service fires the
 * beacons of a tracking point itself, the first time a stream's manifest carries the squeezed
 * segment that holds it. Squeezeback-flow players fire theirs from /vast: their streams are skipped.
 *
 * Only for streams that proved to be real viewers (issue 24): registered through the preroll ad tag,
 * which the DAI provider calls when it creates a stream. Any other id (anyone can invent one and
 * ask for its manifest) is refused, counted in `dai_beacons_refused_total`, and its points are
 * handed over again later, so a viewer whose ad tag arrives after its first manifest still fires.
 * Wired to the break board's onSqueezed hook by the composition root.
 */
import type { BeaconForwarder } from '../../beacons/forwarder.js';
import type { Counter, Registry } from '../../metrics/index.js';
import { adsForStream, type SqueezedHook } from './board.js';

/** What firing needs of the stream registry. */
export interface StreamProof {
  isProven(streamId: string): boolean;
  brandOf(streamId: string): string | undefined;
}

type CounterFamily = ReturnType<Registry['counter']>;

/** Label values a family keeps; beyond, `(other)` (brands and events come from configuration, but stay bounded). */
const MAX_LABELS = 1000;

/** Counters by label set, created on first use. */
class Labelled {
  private readonly children = new Map<string, Counter>();
  constructor(private readonly family: CounterFamily) {}

  get(event: string, brand: string): Counter {
    const key = `${event}|${brand}`;
    let c = this.children.get(key);
    if (!c) {
      if (this.children.size >= MAX_LABELS) return this.get('(other)', '(other)');
      c = this.family.with({ event, brand });
      this.children.set(key, c);
    }
    return c;
  }
}

export function daiBeaconFiring(forwarder: BeaconForwarder, proof: StreamProof, metrics: Registry): SqueezedHook {
  const fired = new Labelled(
    metrics.counter('dai_beacons_fired_total', 'Beacons the service fired for DAI streams, by event and brand'),
  );
  const refused = new Labelled(
    metrics.counter(
      'dai_beacons_refused_total',
      'Beacon firings refused: the stream was not proven by the preroll ad tag (alert when it grows)',
    ),
  );
  return (streamId, b, a, points, flow) => {
    if (flow === 'squeezeback') return true;
    const ads = adsForStream(b, a, streamId);
    let urls = 0;
    for (const p of points) urls += ads[p.ad]?.tracking[p.event]?.length ?? 0;
    const event = String(b.eventId);
    const brand = proof.brandOf(streamId) ?? '(none)';
    if (!proof.isProven(streamId)) {
      if (urls) refused.get(event, brand).inc(urls);
      return false;
    }
    for (const p of points)
      for (const url of ads[p.ad]?.tracking[p.event] ?? [])
        forwarder.enqueue({ url, streamId, event: p.event, breakId: b.id });
    if (urls) fired.get(event, brand).inc(urls);
    return true;
  };
}
