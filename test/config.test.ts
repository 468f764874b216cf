import t from 'tap';
import { loadConfig, ConfigError } from '../lib/config/index.js';

t.test('defaults', async (t) => {
  const c = loadConfig({});
  t.equal(c.host, '127.0.0.1');
  t.equal(c.port, 8080);
  t.equal(c.publicBaseUrl, 'http://127.0.0.1:8080');
  t.equal(c.allowPrivateOutbound, false);
  t.ok(c.dataDir.endsWith('/var'));
  t.equal(c.adConditioningX264Preset, 'veryfast');
});

t.test('environment overrides are coerced and validated', async (t) => {
  const c = loadConfig({
    PORT: '9090',
    ALLOW_PRIVATE_OUTBOUND: 'true',
    DAI_HOST: 'https://dai.example.com/',
    PUBLIC_BASE_URL: 'https://cdn.example.com',
    LOG_LEVEL: 'warn',
    AD_CONDITIONING_X264_PRESET: 'ultrafast',
  });
  t.equal(c.port, 9090);
  t.equal(c.adConditioningX264Preset, 'ultrafast');
  t.equal(c.allowPrivateOutbound, true);
  t.equal(c.daiHost, 'https://dai.example.com', 'trailing slash dropped');
  t.equal(c.publicBaseUrl, 'https://cdn.example.com');
});

t.test('a bad value stops start-up with a message naming it', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), ConfigError);
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT/);
  t.throws(() => loadConfig({ DAI_HOST: 'dai.example.com' }), /DAI_HOST/);
  t.throws(
    () => loadConfig({ AD_SERVER_URL: 'https://ads.example.com' }),
    /AD_SERVER_URL/,
    'ad server URL needs its path',
  );
  t.throws(() => loadConfig({ JWT_SECRET: 'short' }), /JWT_SECRET/);
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
  t.throws(() => loadConfig({ ALLOW_PRIVATE_OUTBOUND: 'maybe' }), /ALLOW_PRIVATE_OUTBOUND/);
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
  t.throws(
    () => loadConfig({ AD_CONDITIONING_X264_PRESET: 'turbo' }),
    /AD_CONDITIONING_X264_PRESET|adConditioningX264Preset/,
  );
});

t.test('an S3 store for conditioned renditions: endpoint, bucket and keys together', async (t) => {
  t.equal(loadConfig({}).s3Endpoint, '', 'none by default: DATA_DIR');
  const s3 = {
    S3_ENDPOINT: 'http://minio.internal:9000',
    S3_BUCKET: 'renditions',
    S3_ACCESS_KEY_ID: 'AKID',
    S3_SECRET_ACCESS_KEY: 'secret',
  };
  t.match(loadConfig(s3), {
    s3Endpoint: 'http://minio.internal:9000',
    s3Region: 'us-east-1',
    s3Prefix: 'ad-creatives/',
  });
  t.throws(() => loadConfig({ ...s3, S3_BUCKET: '' }), /S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/);
  t.throws(() => loadConfig({ ...s3, S3_ENDPOINT: 'minio:9000' }), /S3_ENDPOINT/);
  t.throws(() => loadConfig({ ...s3, S3_BUCKET: 'Not_A_Bucket' }), /S3_BUCKET/);
  t.throws(() => loadConfig({ ...s3, S3_PREFIX: '/abs' }), /S3_PREFIX/);
});
