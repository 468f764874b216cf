/**
 * Configuration of the reference transcoder (`npm run transcoder`), from the environment only: it is
 * a separate process with its own few settings (README "Reference transcoder").
 */
import os from 'node:os';
import { ConfigError } from '../config/index.js';
import { DEFAULT_X264_PRESET, X264_PRESETS, type X264Preset } from '../config/schema.js';
import { ffprobeBeside } from './ffmpeg.js';
import type { TranscoderOptions } from './service.js';

export interface TranscoderConfig extends Omit<TranscoderOptions, 'publicUrl'> {
  host: string;
  port: number;
  /** Empty: `http://<host>:<port>` once listening. */
  publicUrl: string;
  allowPrivate: boolean;
  /** `*` or a list of origins (CORS_ALLOWED_ORIGINS). */
  corsOrigins: string[];
  logLevel: string;
}

type Env = Record<string, string | undefined>;

export function loadTranscoderConfig(env: Env = process.env): TranscoderConfig {
  const bad: string[] = [];
  const int = (name: string, def: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      bad.push(`${name} must be an integer in [${min}, ${max}] (got ${JSON.stringify(raw)})`);
    return n;
  };
  const bool = (name: string, def: boolean) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    if (raw !== 'true' && raw !== 'false') bad.push(`${name} must be true or false`);
    return raw === 'true';
  };
  const publicUrl = (env['TRANSCODER_PUBLIC_URL'] ?? '').replace(/\/+$/, '');
  if (publicUrl && !/^https?:\/\/[^/?#\s@]+(\/[^?#\s]*)?$/.test(publicUrl))
    bad.push('TRANSCODER_PUBLIC_URL must be an http(s) base URL without query or fragment');
  const ffmpegPath = env['FFMPEG_PATH'] || 'ffmpeg';
  const preset = (env['TRANSCODER_X264_PRESET'] || DEFAULT_X264_PRESET) as X264Preset;
  if (!X264_PRESETS.includes(preset)) bad.push(`TRANSCODER_X264_PRESET must be one of ${X264_PRESETS.join(', ')}`);
  const corsOrigins = (env['CORS_ALLOWED_ORIGINS'] || '*')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (corsOrigins.some((o) => o !== '*' && !/^https?:\/\/[^/?#\s]+$/.test(o)))
    bad.push('CORS_ALLOWED_ORIGINS must be * or a comma-separated list of origins (scheme://host[:port])');
  const config: TranscoderConfig = {
    host: env['TRANSCODER_HOST'] || '127.0.0.1',
    port: int('TRANSCODER_PORT', 8090, 0, 65535),
    dataDir: env['TRANSCODER_DATA_DIR'] || './var/transcoder',
    ffmpegPath,
    ffprobePath: env['FFPROBE_PATH'] || ffprobeBeside(ffmpegPath),
    publicUrl,
    concurrency: int('TRANSCODER_CONCURRENCY', os.availableParallelism(), 1, 256),
    jobTimeoutMs: int('TRANSCODER_JOB_TIMEOUT_MS', 60_000, 1000, 3_600_000),
    retentionSec: int('TRANSCODER_RETENTION_SEC', 3600, 10, 30 * 86400),
    threads: int('TRANSCODER_THREADS', 0, 0, 64),
    preset,
    fetchTimeoutMs: int('TRANSCODER_FETCH_TIMEOUT_MS', 20_000, 100, 600_000),
    maxInputBytes: int('TRANSCODER_MAX_INPUT_BYTES', 256 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    allowPrivate: bool('TRANSCODER_ALLOW_PRIVATE', true),
    corsOrigins,
    logLevel: env['LOG_LEVEL'] || 'info',
  };
  if (bad.length) throw new ConfigError(`invalid transcoder configuration:\n  ${bad.join('\n  ')}`);
  return config;
}
