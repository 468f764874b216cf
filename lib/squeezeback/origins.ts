/**
 * One upstream pool per origin host of the squeezeback flow. Origins are named by event
 * configurations (trusted operators' data), never by a request; every connection still passes the
 * outbound policy's connector, like the break worker's reads of the same source.
 */
import { Upstream } from '../delivery/upstream.js';
import type { OutboundPolicy } from '../outbound/index.js';

const MAX_ORIGINS = 256;

export class OriginPools {
  private readonly pools = new Map<string, Upstream>();

  constructor(
    private readonly policy: OutboundPolicy,
    private readonly deadlineMs: number,
  ) {}

  /** The pool for an origin (`scheme://host[:port]`). */
  get(origin: string): Upstream {
    let u = this.pools.get(origin);
    if (!u) {
      if (this.pools.size >= MAX_ORIGINS) throw new Error(`more than ${MAX_ORIGINS} origins configured`);
      // As many connections as the DAI upstream's pool (lib/delivery/upstream.ts): an event's origin carries what the DAI host does in the other flow, and a smaller pool queues distinct refreshes behind it.
      u = new Upstream(origin, {
        deadlineMs: this.deadlineMs,
        connect: this.policy.connector(Math.min(2000, this.deadlineMs), Upstream.socketOptions),
      });
      this.pools.set(origin, u);
    }
    return u;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((u) => u.close().catch(() => undefined)));
    this.pools.clear();
  }
}
