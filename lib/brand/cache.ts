/** The in-memory brand matcher, rebuilt from Postgres whenever any instance changes a rule (lib/store/reloader.ts). */
import { keys, type StateStore } from '../store/index.js';
import { Reloader } from '../store/reloader.js';
import type { Logger } from '../log/index.js';
import { BrandMatcher, type BrandRule } from './matcher.js';

export class BrandCache extends Reloader {
  current = new BrandMatcher([]);

  constructor(
    private readonly loadRules: () => Promise<BrandRule[]>,
    state: StateStore,
    log: Logger,
  ) {
    super(keys.channel('brand-rules'), state, log, 'brand rules');
  }

  protected async rebuild(): Promise<void> {
    this.current = new BrandMatcher(await this.loadRules());
  }
}
