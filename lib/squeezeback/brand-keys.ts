/**
 * Brands' player-token keys in memory (HS256 secrets set through PUT /api/v1/brand-tokens/{brand}),
 * rebuilt from Postgres whenever any instance sets one (lib/store/reloader.ts): verifying a
 * player's JWT never waits on the database.
 */
import { keys, type StateStore } from '../store/index.js';
import { Reloader } from '../store/reloader.js';
import type { Logger } from '../log/index.js';

export class BrandKeyCache extends Reloader {
  private byBrand = new Map<string, Uint8Array>();

  constructor(
    private readonly load: () => Promise<Array<{ brand_name: string; jwt_key: string }>>,
    state: StateStore,
    log: Logger,
  ) {
    super(keys.channel('brand-jwt-keys'), state, log, 'brand player-token keys');
  }

  keyOf(brand: string): Uint8Array | undefined {
    return this.byBrand.get(brand);
  }

  protected async rebuild(): Promise<void> {
    const next = new Map<string, Uint8Array>();
    for (const r of await this.load()) next.set(r.brand_name, new TextEncoder().encode(r.jwt_key));
    this.byBrand = next;
  }
}
