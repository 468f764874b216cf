/**
 * Keeps an in-memory view in step across instances: a subclass's `rebuild` re-reads the source (Postgres);
 * `changed()` rebuilds here and tells every other instance through the state store's pub/sub;
 * a periodic refresh covers messages lost while the state store was unreachable. Reloads
 * requested during a reload coalesce into one more.
 */
import type { StateStore } from './state.js';
import type { Logger } from '../log/index.js';

export abstract class Reloader {
  private loading: Promise<void> | undefined;
  private dirty = false;
  private unsubscribe: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly channel: string,
    private readonly state: StateStore,
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** Re-reads the source and swaps the in-memory view. */
  protected abstract rebuild(): Promise<void>;

  async start(refreshEveryMs = 60_000): Promise<void> {
    this.unsubscribe = await this.state.subscribe(this.channel, () => void this.reload());
    await this.reload();
    this.timer = setInterval(() => void this.reload(), refreshEveryMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unsubscribe?.();
  }

  reload(): Promise<void> {
    if (this.loading) {
      this.dirty = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.dirty = false;
        try {
          await this.rebuild();
        } catch (err) {
          this.log.warn({ err: (err as Error).message }, `${this.what} reload failed; keeping the previous set`);
        }
      } while (this.dirty);
      this.loading = undefined;
    })();
    return this.loading;
  }

  /** Rebuilds here, then tells every instance. */
  async changed(): Promise<void> {
    await this.reload();
    await this.state
      .publish(this.channel, String(Date.now()))
      .catch((err: Error) => this.log.warn({ err: err.message }, `${this.what} change not published`));
  }
}
