/**
 * The parts of a running service in the order they were started, so that shutdown and a failed
 * start-up stop them in reverse: nothing a later part needs is closed before it.
 */
import type { Logger } from './log/index.js';

export class Lifecycle {
  private readonly parts: Array<{ name: string; stop: () => unknown }> = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  /** Registers how to stop a part that has just been built or started. */
  add<T>(name: string, part: T, stop: (part: T) => unknown): T {
    this.parts.push({ name, stop: () => stop(part) });
    return part;
  }

  /** Stops every registered part, last first; a part that fails to stop is logged and skipped. */
  stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      for (const { name, stop } of this.parts.splice(0).reverse()) {
        try {
          await stop();
        } catch (err) {
          this.log.error({ err, part: name }, 'a part failed to stop');
        }
      }
    })();
    return this.stopping;
  }
}

/** What a domain's parts module registers its stops with (lib/app.ts hands it the Lifecycle). */
export type Stops = Pick<Lifecycle, 'add'>;

/** A background worker of a domain: started once every route is mounted, stopped before the caches it uses. */
export interface Worker {
  start(): unknown;
  stop(): unknown;
}
export type NamedWorker = readonly [name: string, worker: Worker];
