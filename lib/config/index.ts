import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { projectRoot } from '../paths.js';
import { configSchema, envNames, type Config } from './schema.js';

export type { Config } from './schema.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function readDefaults(): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(projectRoot, 'config', 'default.json'), 'utf8')) as Record<string, unknown>;
}

/** Environment strings are coerced to the type the schema declares for that key. */
function coerce(key: keyof Config, raw: string): unknown {
  const type = (configSchema.properties as Record<string, { type?: string }>)[key]?.type;
  if (type === 'integer' || type === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (type === 'object') {
    // JSON, merged over the defaults key by key (RATE_LIMITS='{"api":{"rate":100,"burst":200}}').
    try {
      return { ...(readDefaults()[key] as object), ...(JSON.parse(raw) as object) };
    } catch {
      return raw;
    }
  }
  if (type === 'boolean') {
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    return raw;
  }
  return raw.trim();
}

const validate = new Ajv({ allErrors: true }).compile<Config>(configSchema);

/** Defaults from config/default.json, overridden by environment variables, validated; throws ConfigError naming every bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const merged: Record<string, unknown> = readDefaults();
  const sourceOf: Record<string, string> = {};
  for (const [name, key] of Object.entries(envNames)) {
    const raw = env[name];
    if (raw === undefined) continue;
    merged[key] = coerce(key, raw);
    sourceOf[key] = name;
  }
  Object.assign(merged, overrides);
  if (!validate(merged)) {
    const lines = (validate.errors ?? []).map((e) => {
      const key = e.instancePath.split('/')[1] ?? String(e.params['additionalProperty'] ?? '');
      const name = sourceOf[key] ?? Object.keys(envNames).find((n) => envNames[n] === key) ?? key;
      return `${name}=${JSON.stringify(merged[key])}: ${e.message ?? 'invalid'}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${[...new Set(lines)].join('\n  ')}`);
  }
  const config = merged as unknown as Config;
  if (config.s3Endpoint && !(config.s3Bucket && config.s3AccessKeyId && config.s3SecretAccessKey))
    throw new ConfigError(
      'invalid configuration:\n  S3_ENDPOINT is set: S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required',
    );
  config.dataDir = path.resolve(config.dataDir);
  for (const k of ['publicBaseUrl', 'daiHost', 'contentOrigin', 'transcoderUrl'] as const)
    config[k] = config[k].replace(/\/+$/, '');
  if (!config.publicBaseUrl)
    config.publicBaseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  return config;
}
