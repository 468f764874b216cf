/** JSON schema of the service configuration; ajv validates the merged result at start-up. */
/** x264's presets (the transcoder's and ad conditioning's), fastest first: a faster one spends less CPU per segment for more bytes at the same quality (CRF). */
export const X264_PRESETS = [
  'ultrafast',
  'superfast',
  'veryfast',
  'faster',
  'fast',
  'medium',
  'slow',
  'slower',
  'veryslow',
] as const;
export type X264Preset = (typeof X264_PRESETS)[number];
/** The preset both use unless the operator chose another (config/default.json says the same for conditioning). */
export const DEFAULT_X264_PRESET: X264Preset = 'veryfast';

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['host', 'port', 'dataDir', 'logLevel', 'bodyLimitBytes', 'upstreamDeadlineMs'],
  properties: {
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 0, maximum: 65535 },
    publicBaseUrl: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$' }] },
    dataDir: { type: 'string', minLength: 1 },
    databaseUrl: { type: 'string', anyOf: [{ const: '' }, { pattern: '^postgres(ql)?://' }] },
    redisUrl: { type: 'string', anyOf: [{ const: '' }, { pattern: '^rediss?(\\+(cluster|sentinel))?://' }] },
    redisKeyPrefix: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9:_.-]*$' },
    jwtSecret: { type: 'string', anyOf: [{ const: '' }, { minLength: 32 }] },
    jwksUrl: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://' }] },
    jwtIssuer: { type: 'string' },
    jwtAudience: { type: 'string' },
    jwtRequiredRole: { type: 'string' },
    daiHost: { $ref: '#/$defs/baseUrl' },
    contentOrigin: { $ref: '#/$defs/baseUrl' },
    adServerUrl: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://[^/?#\\s]+/' }] },
    transcoderUrl: { $ref: '#/$defs/baseUrl' },
    beaconSecret: { type: 'string', anyOf: [{ const: '' }, { minLength: 16 }] },
    allowPrivateOutbound: { type: 'boolean' },
    logLevel: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    accessLogSampleRate: { type: 'number', minimum: 0, maximum: 1 },
    compressMinBytes: { type: 'integer', minimum: 0, maximum: 16777216 },
    bodyLimitBytes: { type: 'integer', minimum: 1024, maximum: 268435456 },
    upstreamDeadlineMs: { type: 'integer', minimum: 100, maximum: 60000 },
    streamIdleSec: { type: 'integer', minimum: 5, maximum: 86400 },
    maxStreams: { type: 'integer', minimum: 1, maximum: 10000000 },
    shutdownGraceMs: { type: 'integer', minimum: 0, maximum: 60000 },
    shutdownDrainMs: { type: 'integer', minimum: 0, maximum: 60000 },
    allowUwsFallback: { type: 'boolean' },
    breakLeaseMs: { type: 'integer', minimum: 500, maximum: 600000 },
    breakTickMs: { type: 'integer', minimum: 50, maximum: 60000 },
    breakRetentionSec: { type: 'integer', minimum: 0, maximum: 86400 },
    feedLeaseMs: { type: 'integer', minimum: 500, maximum: 600000 },
    rateLimits: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        ['api', 'auth_failure', 'beacon', 'vast', 'adproxy', 'stream', 'stitch'].map((k) => [
          k,
          { $ref: '#/$defs/rateRule' },
        ]),
      ),
    },
    id3ResultTtlSec: { type: 'integer', minimum: 0, maximum: 2592000 },
    trustedProxies: { type: 'string', maxLength: 4096 },
    // Empty: /metrics is open (the default); else a bearer token or X-Metrics-Token must carry it.
    metricsToken: { type: 'string', maxLength: 512, pattern: '^([\\x21-\\x7e]{16,})?$' },
    stitchPath: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9._-]+$',
      not: { enum: ['api', 'mrssfeed', 'dai', 'beacon', 'vast', 'squeezeback', 'healthz', 'readyz', 'metrics'] },
    },
    stitchTtlSec: { type: 'integer', minimum: 60, maximum: 604800 },
    ffmpegPath: { type: 'string', minLength: 1, maxLength: 1024 },
    adConditioningJobs: { type: 'integer', minimum: 0, maximum: 64 },
    adConditioningBackoffSec: { type: 'integer', minimum: 1, maximum: 86400 },
    adConditioningMaxSec: { type: 'integer', minimum: 1, maximum: 600 },
    // The creative is held in memory while it is written to scratch: 1 GiB at most.
    adConditioningMaxBytes: { type: 'integer', minimum: 65536, maximum: 1073741824 },
    adConditioningJobTimeoutSec: { type: 'integer', minimum: 1, maximum: 3600 },
    adConditioningX264Preset: { enum: [...X264_PRESETS] },
    stitchMaxWaitMs: { type: 'integer', minimum: 0, maximum: 120000 },
    // An S3-compatible store for conditioned renditions (empty endpoint: DATA_DIR/ad-creatives).
    s3Endpoint: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://[^/?#\\s]+/?$' }] },
    s3Bucket: { type: 'string', maxLength: 63, pattern: '^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])?$' },
    s3Region: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' },
    s3AccessKeyId: { type: 'string', maxLength: 128 },
    s3SecretAccessKey: { type: 'string', maxLength: 256 },
    s3Prefix: { type: 'string', maxLength: 256, pattern: '^([A-Za-z0-9._-]+/)*$' },
    // `*`, or a comma-separated list of origins (scheme://host[:port]).
    corsAllowedOrigins: {
      type: 'string',
      maxLength: 8192,
      pattern: '^(\\*|https?://[^/?#\\s,]+(\\s*,\\s*https?://[^/?#\\s,]+)*)$',
    },
  },
  $defs: {
    // A token bucket per client IP: `rate` requests a second, `burst` at once; rate 0 = no limit.
    rateRule: {
      type: 'object',
      additionalProperties: false,
      required: ['rate', 'burst'],
      properties: {
        rate: { type: 'number', minimum: 0, maximum: 1000000 },
        burst: { type: 'integer', minimum: 1, maximum: 10000000 },
      },
    },
    // A base URL: scheme and host, optional port and path, no query or fragment.
    baseUrl: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://[^/?#\\s@]+(/[^?#\\s]*)?$' }] },
  },
} as const;

export interface Config {
  host: string;
  port: number;
  publicBaseUrl: string;
  dataDir: string;
  databaseUrl: string;
  redisUrl: string;
  redisKeyPrefix: string;
  jwtSecret: string;
  jwksUrl: string;
  jwtIssuer: string;
  jwtAudience: string;
  jwtRequiredRole: string;
  daiHost: string;
  contentOrigin: string;
  adServerUrl: string;
  transcoderUrl: string;
  beaconSecret: string;
  allowPrivateOutbound: boolean;
  logLevel: string;
  accessLogSampleRate: number;
  /** Bodies smaller than this go out uncompressed whatever Accept-Encoding says (issue 27). */
  compressMinBytes: number;
  bodyLimitBytes: number;
  upstreamDeadlineMs: number;
  streamIdleSec: number;
  /** Streams one instance keeps (and writes to the state store); the oldest idle first are evicted beyond it. */
  maxStreams: number;
  shutdownGraceMs: number;
  /** After SIGTERM, how long /readyz answers 503 while everything else is still served (one load-balancer check interval). */
  shutdownDrainMs: number;
  allowUwsFallback: boolean;
  breakLeaseMs: number;
  breakTickMs: number;
  breakRetentionSec: number;
  /** How long a feed pull stays an instance's without a renewal: another instance resumes the run this long after its owner died. */
  feedLeaseMs: number;
  /** Per-client token buckets by surface: api, beacon, vast, adproxy, stream (new squeezeback streams), stitch. */
  rateLimits: Record<string, { rate: number; burst: number }>;
  id3ResultTtlSec: number;
  /** Proxies whose X-Forwarded-For names the client (comma-separated IPs or CIDR ranges). */
  trustedProxies: string;
  /** When set, `/metrics` answers only requests carrying it (Authorization: Bearer, or X-Metrics-Token). */
  metricsToken: string;
  stitchPath: string;
  stitchTtlSec: number;
  /** ffmpeg for ad conditioning (ffprobe beside it). */
  ffmpegPath: string;
  /** Conditioning jobs run at once per instance (0: this instance conditions nothing; others may). */
  adConditioningJobs: number;
  /** First back-off after a creative failed conditioning (doubled per further failure, up to a day). */
  adConditioningBackoffSec: number;
  /** Longest creative conditioned, in seconds. */
  adConditioningMaxSec: number;
  /** Largest creative fetched for conditioning, in bytes (a declared larger one is refused at its headers). */
  adConditioningMaxBytes: number;
  /** A conditioning job's deadline (fetch, probe and ffmpeg), in seconds. */
  adConditioningJobTimeoutSec: number;
  /** x264's preset for the renditions (veryfast): a faster one spends less CPU per creative for more bytes under the same bitrate cap. */
  adConditioningX264Preset: X264Preset;
  /** The most a brand's `stitch_wait_for_ads_ms` may hold a stitch POST for its ads' conditioning (0: never waits). */
  stitchMaxWaitMs: number;
  /** S3-compatible object store for conditioned renditions (issue 26): `http(s)://host[:port]`; empty: DATA_DIR. */
  s3Endpoint: string;
  s3Bucket: string;
  s3Region: string;
  s3AccessKeyId: string;
  s3SecretAccessKey: string;
  /** Object name prefix of the renditions (`ad-creatives/`). */
  s3Prefix: string;
  /** Origins whose web players may read the player-facing answers: `*` or a comma-separated list. */
  corsAllowedOrigins: string;
}

/** Environment variable → config key. Every one is optional. */
export const envNames: Record<string, keyof Config> = {
  HOST: 'host',
  PORT: 'port',
  PUBLIC_BASE_URL: 'publicBaseUrl',
  DATA_DIR: 'dataDir',
  DATABASE_URL: 'databaseUrl',
  REDIS_URL: 'redisUrl',
  REDIS_KEY_PREFIX: 'redisKeyPrefix',
  JWT_SECRET: 'jwtSecret',
  JWKS_URL: 'jwksUrl',
  JWT_ISSUER: 'jwtIssuer',
  JWT_AUDIENCE: 'jwtAudience',
  JWT_REQUIRED_ROLE: 'jwtRequiredRole',
  DAI_HOST: 'daiHost',
  CONTENT_ORIGIN: 'contentOrigin',
  AD_SERVER_URL: 'adServerUrl',
  TRANSCODER_URL: 'transcoderUrl',
  BEACON_SECRET: 'beaconSecret',
  ALLOW_PRIVATE_OUTBOUND: 'allowPrivateOutbound',
  LOG_LEVEL: 'logLevel',
  ACCESS_LOG_SAMPLE_RATE: 'accessLogSampleRate',
  COMPRESS_MIN_BYTES: 'compressMinBytes',
  BODY_LIMIT_BYTES: 'bodyLimitBytes',
  UPSTREAM_DEADLINE_MS: 'upstreamDeadlineMs',
  STREAM_IDLE_SEC: 'streamIdleSec',
  MAX_STREAMS: 'maxStreams',
  SHUTDOWN_GRACE_MS: 'shutdownGraceMs',
  SHUTDOWN_DRAIN_MS: 'shutdownDrainMs',
  UWS_ALLOW_FALLBACK: 'allowUwsFallback',
  BREAK_LEASE_MS: 'breakLeaseMs',
  BREAK_TICK_MS: 'breakTickMs',
  BREAK_RETENTION_SEC: 'breakRetentionSec',
  FEED_LEASE_MS: 'feedLeaseMs',
  RATE_LIMITS: 'rateLimits',
  ID3_RESULT_TTL_SEC: 'id3ResultTtlSec',
  TRUSTED_PROXIES: 'trustedProxies',
  METRICS_TOKEN: 'metricsToken',
  STITCH_PATH: 'stitchPath',
  STITCH_TTL_SEC: 'stitchTtlSec',
  FFMPEG_PATH: 'ffmpegPath',
  AD_CONDITIONING_JOBS: 'adConditioningJobs',
  AD_CONDITIONING_BACKOFF_SEC: 'adConditioningBackoffSec',
  AD_CONDITIONING_MAX_SEC: 'adConditioningMaxSec',
  AD_CONDITIONING_MAX_BYTES: 'adConditioningMaxBytes',
  AD_CONDITIONING_JOB_TIMEOUT_SEC: 'adConditioningJobTimeoutSec',
  AD_CONDITIONING_X264_PRESET: 'adConditioningX264Preset',
  STITCH_MAX_WAIT_MS: 'stitchMaxWaitMs',
  S3_ENDPOINT: 's3Endpoint',
  S3_BUCKET: 's3Bucket',
  S3_REGION: 's3Region',
  S3_ACCESS_KEY_ID: 's3AccessKeyId',
  S3_SECRET_ACCESS_KEY: 's3SecretAccessKey',
  S3_PREFIX: 's3Prefix',
  CORS_ALLOWED_ORIGINS: 'corsAllowedOrigins',
};
