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
