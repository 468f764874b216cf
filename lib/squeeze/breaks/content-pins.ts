/**
 * Break segments published as content stay content (RFC 8216 §6.2.2: a playlist update must not
 * change an existing segment's URI). A break segment whose squeezeback output is not ready when a
 * rendering lists it is served as content; without this record the next rendering, once the
 * output is ready, would name the same media sequence with the composed URI, which hls.js takes
 * as a fatal `levelParsingError` ("media sequence mismatch"). So the first content listing pins
 * the segment, per break, per ad assignment and per segment path (a variant's own segment): the
 * viewer sees the content for that one segment instead of the squeezed frame.
 *
 * Every instance renders the same playlist from the same snapshot, so the pins are shared too: a
 * pin is held in memory (the hot path reads a Set), written to a set per break in the state store
 * (`sqz:{br:<id>}:content`, expiring with the break's retention) and announced on a channel, so
 * the instance answering a viewer's next refresh knows it within the pub/sub delay. An instance
 * reads a break's set once, when the break first enters its snapshot. Bounded: at most
 * MAX_PER_BREAK pins per break, dropped when the break leaves the snapshot.
 */
import { keys, type StateStore } from '../../store/index.js';
import type { Logger } from '../../log/index.js';

/** Segments × variants × assignments of one break: far above a real break (3600 s of 1 s segments, 2 variants). */
export const MAX_PER_BREAK = 10_000;
/** Breaks held at once, announced ones included before the snapshot knows them. */
const MAX_BREAKS = 10_000;
const CHANNEL = keys.channel('squeeze-content-pins');
const keyOf = (breakId: string) => keys.squeezeBreak(breakId, 'content');

/**
 * The member naming one pinned segment: the assignment whose renderings listed it, its path, and
 * for a URI matched by path and time (a `'timed'` one, ../../delivery/break-source.ts) its time in
 * `step`s: such a name may stand for another time's media elsewhere in the playlist.
 */
export const pinOf = (assignment: string, path: string, step?: number) =>
  step === undefined ? `${assignment}\n${path}` : `${assignment}\n${path}\n${step}`;

/** What pinOf joined. */
export function parsePin(member: string): { assignment: string; path: string; step: number | undefined } {
  const [assignment = '', path = '', step] = member.split('\n');
  return { assignment, path, step: step === undefined ? undefined : Number(step) };
}

export class ContentPins {
  private readonly byBreak = new Map<string, Set<string>>();
  /** Breaks whose stored set has been read (or found unreadable and left to the next snapshot). */
  private readonly loaded = new Set<string>();
  private queue: Array<{ breakId: string; member: string; ttlMs: number }> = [];
  private unsubscribe: (() => Promise<void>) | undefined;
  private failing = false;
  private readonly warnedFull = new Set<string>();

  constructor(
    private readonly state: StateStore,
    private readonly log: Logger,
  ) {}

  /** Listens for other instances' pins; `onRemote` hears each one this instance did not hold yet. */
  async start(onRemote: (breakId: string, member: string) => void): Promise<void> {
    this.unsubscribe = await this.state.subscribe(CHANNEL, (message) => {
      let pins: unknown;
      try {
        pins = JSON.parse(message);
      } catch {
        return;
      }
      if (!Array.isArray(pins)) return;
      for (const p of pins) {
        if (!Array.isArray(p) || typeof p[0] !== 'string' || typeof p[1] !== 'string') continue;
        if (this.hold(p[0], p[1])) onRemote(p[0], p[1]);
      }
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }

  has(breakId: string, member: string): boolean {
    return this.byBreak.get(breakId)?.has(member) ?? false;
  }

  /**
   * Pins a segment this instance is publishing as content: held at once, written and announced
   * after the current task (one round trip for the pins of one rendering). False when the break
   * already holds MAX_PER_BREAK pins (the segment is then not held: the old, unstable behaviour).
   */
  add(breakId: string, member: string, ttlMs: number): boolean {
    if (this.has(breakId, member)) return true;
    if (!this.hold(breakId, member)) {
      if (!this.warnedFull.has(breakId) && this.warnedFull.add(breakId))
        this.log.warn({ breakId, max: MAX_PER_BREAK }, 'break: too many segments published as content to pin more');
      return false;
    }
    if (!this.queue.length) setImmediate(() => void this.flush());
    this.queue.push({ breakId, member, ttlMs });
    return true;
  }

  private hold(breakId: string, member: string): boolean {
    let set = this.byBreak.get(breakId);
    if (!set) {
      if (this.byBreak.size >= MAX_BREAKS) return false;
      this.byBreak.set(breakId, (set = new Set()));
    }
    if (set.has(member)) return false;
    if (set.size >= MAX_PER_BREAK) return false;
    set.add(member);
    return true;
  }

  private async flush(): Promise<void> {
    const sent = this.queue;
    this.queue = [];
    const ttl = new Map<string, number>();
    for (const p of sent) ttl.set(p.breakId, Math.max(ttl.get(p.breakId) ?? 0, p.ttlMs));
    try {
      const batch = this.state.batch();
      for (const p of sent) batch.sadd(keyOf(p.breakId), p.member);
      for (const [breakId, ms] of ttl) batch.expire(keyOf(breakId), ms);
      await batch.exec();
      await this.state.publish(CHANNEL, JSON.stringify(sent.map((p) => [p.breakId, p.member])));
      this.failing = false;
    } catch (err) {
      // Held here all the same; other instances learn nothing of them (the unstable case of old).
      if (!this.failing) this.log.warn({ err: (err as Error).message }, 'break: content pins not shared');
      this.failing = true;
    }
  }

  /**
   * The snapshot's breaks: a break seen for the first time has its stored pins read (every other
   * instance's so far); pins of breaks no longer in the snapshot are dropped.
   */
  async track(breakIds: Iterable<string>): Promise<void> {
    const live = new Set(breakIds);
    const fresh = [...live].filter((id) => !this.loaded.has(id));
    await Promise.all(
      fresh.map(async (id) => {
        try {
          for (const m of await this.state.smembers(keyOf(id))) this.hold(id, m);
        } catch (err) {
          this.log.warn({ err: (err as Error).message, breakId: id }, 'break: stored content pins unreadable');
        }
        this.loaded.add(id);
      }),
    );
    for (const id of this.byBreak.keys()) if (!live.has(id)) this.byBreak.delete(id);
    for (const id of this.loaded) if (!live.has(id)) this.loaded.delete(id);
    for (const id of this.warnedFull) if (!live.has(id)) this.warnedFull.delete(id);
  }
}
