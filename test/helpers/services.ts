/**
 * Real Postgres and Redis for integration tests (docs/design.md §5). Each test file gets its own
 * Postgres schema, so files never see each other's rows. With CI=true a missing service fails
 * the run; elsewhere the dependent tests are skipped with the reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import type { Test } from 'tap';
import { loadConfig, type Config } from '../../lib/config/index.js';
import { createLogger } from '../../lib/log/index.js';
import { startService, type Service, type ServiceParts } from '../../lib/app.js';
import { mintToken } from '../../lib/http/auth.js';

export const PG_URL =
  process.env['TEST_DATABASE_URL'] ?? process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env['TEST_REDIS_URL'] ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
export const JWT_SECRET = 'test-secret-0123456789abcdef0123456789abcdef';
export const inCI = process.env['CI'] === 'true';
/** Every test file writes its Redis keys under a prefix of its own, so files and runs never see each other's state. */
export const REDIS_KEY_PREFIX = `t${randomBytes(4).toString('hex')}:`;

async function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || defaultPort) });
    s.setTimeout(1000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/** Returns false (and skips or fails t) when Postgres or Redis is not there. */
export async function needServices(
  t: Test,
  which: Array<'postgres' | 'redis'> = ['postgres', 'redis'],
): Promise<boolean> {
  for (const name of which) {
    const ok = name === 'postgres' ? await reachable(PG_URL, 5432) : await reachable(REDIS_URL, 6379);
    if (ok) continue;
    const msg = `${name} is not reachable at ${name === 'postgres' ? PG_URL : REDIS_URL}`;
    if (inCI) t.fail(msg);
    else t.test(msg, { skip: msg }, () => undefined);
    return false;
  }
  return true;
}

/** A Postgres URL whose search_path is a schema of its own, dropped when t ends. */
export async function freshSchemaUrl(t: Test): Promise<string> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create schema ${schema}`);
  t.teardown(async () => {
    await admin.unsafe(`drop schema if exists ${schema} cascade`);
    await admin.end();
  });
  const u = new URL(PG_URL);
  u.searchParams.set('search_path', schema);
  return u.toString();
}

/** A Redis key/channel namespace is not needed: tests use distinct ids; flush nothing shared. */
export async function redisClient(t: Test): Promise<Redis> {
  const r = new Redis(REDIS_URL, { lazyConnect: true });
  await r.connect();
  t.teardown(() => void r.quit());
  return r;
}

export function tempDir(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Tests are one client firing many requests: limits far above them unless a test sets its own (the limiter still runs). */
export const UNLIMITED = Object.fromEntries(
  ['api', 'auth_failure', 'beacon', 'vast', 'adproxy', 'stream', 'stitch'].map((k) => [k, { rate: 1e6, burst: 1e6 }]),
);

export function testConfig(t: Test, overrides: Partial<Config> = {}): Config {
  return loadConfig(
    {},
    {
      port: 0,
      rateLimits: UNLIMITED,
      jwtSecret: JWT_SECRET,
      redisKeyPrefix: REDIS_KEY_PREFIX,
      logLevel: process.env['TEST_LOG_LEVEL'] ?? 'silent',
      dataDir: tempDir(t),
      shutdownDrainMs: 0,
      ...overrides,
    },
  );
}

/** Starts the real service on a free port against the given stores; stopped when t ends. */
export async function startTestService(
  t: Test,
  overrides: Partial<Config> = {},
  parts: ServiceParts = {},
): Promise<Service> {
  const config = testConfig(t, overrides);
  const service = await startService(config, createLogger(config.logLevel), parts);
  t.teardown(() => service.close());
  return service;
}

export function token(service: Service, opts: { ttlSec?: number; roles?: string[] } = {}): Promise<string> {
  return mintToken(service.config, opts);
}
