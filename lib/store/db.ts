/** The one postgres.js pool, and SQL migrations applied under an advisory lock. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { projectRoot } from '../paths.js';
import type { Logger } from '../log/index.js';
// Registers this client's "service down" errors with the error kernel (answered 503).
import './dependency.js';

export type Sql = postgres.Sql;

const MIGRATION_LOCK = 0x5a5a_0001;
/** The longest wait before a closed connection connects again, in seconds (postgres.js's own cap is 20). */
const RECONNECT_CAP_SEC = 0.5;

/**
 * postgres.js waits `backoff(n)` seconds before a closed connection connects again, n counting the
 * pool's failed connections; a query given to that connection waits in its queue all that time.
 * Its default grows as 3^n/100 up to 20 s, so a few seconds of outage (a Postgres restart: every
 * worker tick and API call adds failures) made management calls hang for up to 20 s, during the
 * outage and for seconds after it ended, instead of answering 503 at once and recovering with the
 * server (issue 29 (d), measured: 8 s hangs, 200 again 6 s after the restart). The same curve
 * capped at RECONNECT_CAP_SEC: at worst a refused connection is retried twice a second per connection.
 */
export function reconnectBackoff(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** failures / 100, RECONNECT_CAP_SEC);
}

export interface DbOptions {
  max?: number;
  statementTimeoutMs?: number;
}

export function connectDb(
  url: string | postgres.Options<Record<string, never>>,
  log: Logger,
  opts: DbOptions = {},
): Sql {
  const options: postgres.Options<Record<string, never>> = {
    max: opts.max ?? 10,
    connect_timeout: 5,
    backoff: reconnectBackoff,
    idle_timeout: 30,
    max_lifetime: 60 * 30,
    onnotice: (n) => log.debug({ notice: n.message }, 'postgres notice'),
    connection: { application_name: 'squeezeback', statement_timeout: opts.statementTimeoutMs ?? 5000 } as Record<
      string,
      string | number
    >,
  };
  return typeof url === 'string' ? postgres(url, options) : postgres({ ...options, ...url });
}

export const migrationsDir = path.join(projectRoot, 'lib', 'store', 'migrations');

/** Applies every migration not yet recorded, in file-name order, in one transaction; concurrent starters wait on the lock. */
export async function migrate(sql: Sql, log: Logger, dir = migrationsDir): Promise<string[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    const done = new Set(
      (await tx<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.unsafe(readFileSync(path.join(dir, file), 'utf8'));
      await tx`insert into schema_migrations (version) values (${file})`;
      applied.push(file);
    }
    if (applied.length) log.info({ applied }, 'migrations applied');
    return applied;
  });
}
