import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { connectDb, migrate, type Sql } from './db.js';
import { startEmbeddedPostgres, type EmbeddedServer } from './embedded-pg.js';
import { MemoryStateStore } from './memory-state.js';
import { RedisStateStore } from './redis-state.js';
import type { StateStore } from './state.js';

export { keys, type StateStore, type Batch } from './state.js';
export type { Sql } from './db.js';
export { MemoryStateStore } from './memory-state.js';
export { RedisStateStore } from './redis-state.js';
export { connectDb, migrate } from './db.js';

export interface Stores {
  sql: Sql;
  state: StateStore;
  embedded?: EmbeddedServer;
  close(): Promise<void>;
}

/** Postgres (external, or the embedded server under DATA_DIR) with migrations applied, and the state store. */
export async function openStores(config: Config, log: Logger): Promise<Stores> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir, log);
  let sql: Sql | undefined;
  let state: StateStore | undefined;
  try {
    sql = connectDb(config.databaseUrl || embedded!.connection, log);
    await migrate(sql, log);
    state = config.redisUrl
      ? await RedisStateStore.connect(config.redisUrl, log, 10_000, config.redisKeyPrefix)
      : new MemoryStateStore();
  } catch (err) {
    await sql?.end({ timeout: 2 }).catch(() => undefined);
    await embedded?.stop();
    throw err;
  }
  const stores: Stores = {
    sql,
    state,
    close: async () => {
      await Promise.allSettled([sql.end({ timeout: 3 }), state.close()]);
      await embedded?.stop();
    },
  };
  if (embedded) stores.embedded = embedded;
  return stores;
}
