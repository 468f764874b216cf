/**
 * Issue 26 item 1: conditioned renditions in an S3-compatible object store. The SigV4 signer
 * against the AWS documentation's worked example; the store against the simulated S3 server (real
 * HTTP, signature checked, objects in memory), including refused credentials; and end to end: two
 * instances with separate DATA_DIRs and one S3 bucket, a creative conditioned into the bucket by
 * one of them, then stitched and served by the other from the bucket (ffprobe on a served segment).
 */
import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { call } from '../helpers/http.js';
import { needServices, tempDir } from '../helpers/services.js';
import { ffprobe, needFfmpeg } from '../helpers/ffmpeg.js';
import { makeCreative, rig, RUNGS } from '../helpers/conditioning.js';
import { EMPTY_SHA256, signV4 } from '../../lib/conditioning/sigv4.js';
import { S3_AGENT, S3CreativeFiles } from '../../lib/conditioning/s3-files.js';
import { OutboundPolicy } from '../../lib/outbound/index.js';
import { S3Sim } from '../../lib/sim/s3.js';
import { parseMaster } from '../../lib/stitch/hls/master.js';

const CRED = { accessKeyId: 'AKIDSIMULATED0001', secretAccessKey: 'simulated/secret+key0123456789abcdef' };

t.test('SigV4: the AWS documentation example (GET Object with a Range header)', async (t) => {
  // docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "Example: GET Object".
  const headers = signV4(
    {
      method: 'GET',
      host: 'examplebucket.s3.amazonaws.com',
      path: '/test.txt',
      headers: { range: 'bytes=0-9' },
      payloadHash: EMPTY_SHA256,
    },
    {
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      region: 'us-east-1',
      service: 's3',
    },
    new Date('2013-05-24T00:00:00Z'),
  );
  t.equal(
    headers['authorization'],
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  );
  t.equal(headers['x-amz-date'], '20130524T000000Z');
});

t.test('the S3 store against the simulated server: put, read, missing, refused credentials', async (t) => {
  const sim = await new S3Sim({ bucket: 'renditions', region: 'eu-west-1', ...CRED }).start();
  t.teardown(() => sim.stop());
  const key = 'a'.repeat(64);
  // Through the outbound policy, as the service does: private outbound off, the endpoint trusted by name.
  const policy = new OutboundPolicy({ allowPrivate: false, trusted: [sim.url] });
  t.teardown(() => policy.close());
  const store = new S3CreativeFiles(
    { endpoint: sim.url, bucket: 'renditions', region: 'eu-west-1', prefix: 'ads/', ...CRED },
    tempDir(t),
    policy.agent(S3_AGENT),
  );
  const scratch = await store.scratch();
  await writeFile(path.join(scratch, 'r0_000.ts'), Buffer.alloc(1000, 7));
  await writeFile(path.join(scratch, 'r0.m3u8'), '#EXTM3U\n');
  await writeFile(path.join(scratch, 'source.mp4'), 'not kept');
  t.same(await store.publish(scratch, key, (n) => n !== 'source.mp4'), ['r0.m3u8', 'r0_000.ts']);
  t.notOk(existsSync(scratch), 'the scratch folder is removed once uploaded');
  t.same([...sim.objects.keys()].sort(), [`ads/${key}/r0.m3u8`, `ads/${key}/r0_000.ts`], 'stored under the prefix');
  t.same(await store.read(key, 'r0_000.ts'), Buffer.alloc(1000, 7), 'read back');
  t.equal(await store.read(key, 'r1.m3u8'), undefined, 'a missing object: undefined');
  t.equal(await store.read(key, '../x'), undefined, 'a name that is not ours is never asked for');
  t.notOk(sim.statuses.includes(403), 'every request signed right');

  const wrong = new S3CreativeFiles(
    { endpoint: sim.url, bucket: 'renditions', region: 'eu-west-1', prefix: 'ads/', ...CRED, secretAccessKey: 'nope' },
    tempDir(t),
    policy.agent(S3_AGENT),
  );
  await t.rejects(wrong.read(key, 'r0.m3u8'), /403: SignatureDoesNotMatch/, 'a wrong secret is refused');
  await t.rejects(wrong.put(`ads/${key}/x.ts`, Buffer.from('x')), /403: SignatureDoesNotMatch/);
  t.notOk(sim.objects.has(`ads/${key}/x.ts`), 'and stores nothing');

  // An endpoint the configuration does not name, on a private address: the policy refuses it.
  const strict = new OutboundPolicy({ allowPrivate: false, trusted: [] });
  t.teardown(() => strict.close());
  const untrusted = new S3CreativeFiles(
    { endpoint: sim.url, bucket: 'renditions', region: 'eu-west-1', prefix: 'ads/', ...CRED },
    tempDir(t),
    strict.agent(S3_AGENT),
  );
  const before = sim.statuses.length;
  await t.rejects(untrusted.read(key, 'r0.m3u8'), 'an untrusted private endpoint is refused by the policy');
  t.equal(sim.statuses.length, before, 'and never reached');
});

t.test('conditioned into S3 by one instance, stitched and served from S3 by another', async (t) => {
  if (!needFfmpeg(t)) return;
  if (!(await needServices(t, ['postgres', 'redis']))) return;
  t.setTimeout(240_000);
  const sim = await new S3Sim({ bucket: 'renditions', region: 'us-east-1', ...CRED }).start();
  t.teardown(() => sim.stop());
  const work = tempDir(t);
  const creatives = new Map([['ad-1', await makeCreative(work, 'ad-1', 2)]]);
  const r = await rig(t, {
    count: 2,
    breaks: ['start'],
    ads: [{ id: 'ad-1', durationSec: 2 }],
    creatives,
    dataDirEach: true,
    config: {
      s3Endpoint: sim.url,
      s3Bucket: 'renditions',
      s3Region: 'us-east-1',
      s3AccessKeyId: CRED.accessKeyId,
      s3SecretAccessKey: CRED.secretAccessKey,
      s3Prefix: 'ad-creatives/',
    },
  });
  const [a, b] = r.instances as [(typeof r.instances)[0], (typeof r.instances)[0]];
  const first = await r.stitch(a.url, 'hls', 'hls-1', 'vod-hls');
  t.equal(first.status, 200);
  t.match((first.body.warnings as string[]).join('\n'), /conditioning job [0-9a-f-]{36} is (queued|running)/);
  const started = Date.now();
  const views = await r.settle(120_000);
  t.same(
    views.map((v) => v.state),
    ['ready'],
    'the creative is conditioned',
  );
  t.comment(`conditioned into S3 in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const key = views[0]!.key;
  const objects = [...sim.objects.keys()].filter((k) => k.startsWith(`ad-creatives/${key}/`));
  t.same(
    objects.map((k) => k.slice(`ad-creatives/${key}/`.length)).sort(),
    views[0]!.renditions!.files,
    'every rendition file is in the bucket',
  );
  t.ok(
    objects.some((k) => k.endsWith('master.m3u8')),
    'the master too',
  );
  for (const s of r.instances) {
    const local = path.join(s.config.dataDir, 'ad-creatives');
    t.same(
      existsSync(local) ? readdirSync(local).filter((n) => !n.startsWith('.')) : [],
      [],
      'nothing published under DATA_DIR',
    );
  }
  t.notOk(sim.statuses.includes(403), 'no request refused');

  // The instance that did not run the job (its own DATA_DIR) stitches the ad from the bucket and serves its segments.
  t.equal(a.conditioning.ran + b.conditioning.ran, 1, 'one job ran');
  const other = a.conditioning.ran ? b : a;
  const second = await r.stitch(other.url, 'hls', 'hls-2', 'vod-hls');
  t.equal(second.status, 200);
  t.same(
    second.body.breaks.map((x: { ads: Array<{ id: string }> }) => x.ads.map((ad) => ad.id)),
    [['ad-1']],
    'the conditioned ad is stitched in',
  );
  const master = await call(other.url, 'GET', new URL(second.body.cache_url as string).pathname);
  const variants = parseMaster(second.body.cache_url as string, master.text).variants;
  t.equal(variants.length, RUNGS.length);
  const playlist = await call(other.url, 'GET', new URL(variants[0]!.uri).pathname);
  const adSegment = playlist.text.split('\n').find((l) => l.includes(`/stitch/creatives/${key}/`) && l.endsWith('.ts'));
  t.ok(adSegment, 'the playlist names the conditioned segments under the service');
  const seg = await request(other.url + new URL(adSegment!).pathname);
  t.equal(seg.statusCode, 200, 'served by the instance that did not condition it');
  const bytes = Buffer.from(await seg.body.arrayBuffer());
  const name = adSegment!.slice(adSegment!.lastIndexOf('/') + 1);
  t.same(bytes, sim.objects.get(`ad-creatives/${key}/${name}`), 'the bytes of the bucket object');
  const file = path.join(tempDir(t), name);
  await writeFile(file, bytes);
  const probe = await ffprobe(file);
  const video = probe.streams.find((s) => s.codec_type === 'video');
  t.match(video, { codec_name: 'h264', width: RUNGS[0]!.w, height: RUNGS[0]!.h }, 'decodes at the rung');

  // The store down: the segment answers 503 (not a 404 a CDN would keep).
  await sim.stop();
  const down = await call(other.url, 'GET', new URL(adSegment!).pathname);
  t.equal(down.status, 503, 'the object store down: 503');
  t.match(down.headers['content-type'], /problem\+json/);
});
