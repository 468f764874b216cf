/**
 * Mints an operator JWT from the configured secret (JWT_SECRET, or the one generated under DATA_DIR).
 * Usage: npm run token -- [--sub NAME] [--ttl SECONDS] [--role ROLE]
 */
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../lib/config/index.js';
import { mintToken } from '../lib/http/auth.js';

try {
  const { values } = parseArgs({
    options: { sub: { type: 'string' }, ttl: { type: 'string' }, role: { type: 'string', multiple: true } },
  });
  const ttl = values.ttl === undefined ? 3600 : Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new ConfigError('--ttl must be a positive number of seconds');
  const opts: { subject?: string; ttlSec: number; roles?: string[] } = { ttlSec: ttl };
  if (values.sub) opts.subject = values.sub;
  if (values.role) opts.roles = values.role;
  process.stdout.write(`${await mintToken(loadConfig(), opts)}\n`);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
