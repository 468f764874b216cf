/**
 * The in-memory matcher, rebuilt from Postgres whenever any instance changes a rule: writers
 * publish on the state store's channel after commit, every instance reloads. A periodic refresh
 * covers messages lost while the state store was unreachable.
 */
import { keys, type StateStore } from '../store/index.js';
import type { Logger } from '../log/index.js';
import { BrandMatcher, type BrandRule } from './matcher.js';

const CHANNEL = keys.channel('brand-rules');

export class BrandCache {
  private matcher = new BrandMatcher([]);
  private loading: Promise<void> | undefined;
  private dirty = false;
  private unsubscribe: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly loadRules: () => Promise<BrandRule[]>,
    private readonly state: StateStore,
    private readonly log: Logger,
  ) {}

  get current(): BrandMatcher {
    return this.matcher;
  }

  async start(refreshEveryMs = 60_000): Promise<void> {
    this.unsubscribe = await this.state.subscribe(CHANNEL, () => void this.reload());
    await this.reload();
    this.timer = setInterval(() => void this.reload(), refreshEveryMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unsubscribe?.();
  }

  /** Rebuilds the matcher; calls during a load coalesce into one more load after it. */
  reload(): Promise<void> {
    if (this.loading) {
      this.dirty = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.dirty = false;
        try {
          this.matcher = new BrandMatcher(await this.loadRules());
        } catch (err) {
          this.log.warn({ err: (err as Error).message }, 'brand rules reload failed; keeping the previous set');
        }
      } while (this.dirty);
      this.loading = undefined;
    })();
    return this.loading;
  }

  /** Tells every instance, this one included, that the rules changed. */
  async changed(): Promise<void> {
    await this.reload();
    await this.state.publish(CHANNEL, String(Date.now())).catch((err: Error) => this.log.warn({ err: err.message }, 'brand rules change not published'));
  }
}
