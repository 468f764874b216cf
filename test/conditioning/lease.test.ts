/**
 * Issue 28 item 4 / issue 26: the conditioning worker on the shared lease loop (lib/store/lease.ts),
 * against real Postgres. The job function is the worker's own injection point (no ffmpeg here: what
 * is under test is the lease, not the transcode): one renewal statement keeps a slow job's lease
 * alive past its TTL, a job whose lease another owner took is aborted and its outcome not written,
 * and a graceful stop hands the lease back at once.
 */
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { createLogger } from '../../lib/log/index.js';
import { migrate } from '../../lib/store/db.js';
import { Registry } from '../../lib/metrics/index.js';
import { CreativeRepo, type CreativeRow } from '../../lib/conditioning/repo.js';
import { ConditioningWorker } from '../../lib/conditioning/worker.js';
import type { LadderProfile } from '../../lib/stitch/profile.js';
import { freshSchemaUrl, needServices } from '../helpers/services.js';

const log = createLogger('silent');
const LEASE_MS = 600;
const profile: LadderProfile = {
  protocol: 'hls',
  container: 'ts',
  video: 'avc',
  rungs: [{ width: 640, height: 360, bandwidth: 800_000, codecs: 'avc1.4d401e,mp4a.40.2' }],
  segmentSec: 4,
  audio: { codecs: 'mp4a.40.2', channels: 2, sampleRate: 48_000, demuxed: false },
};

/** Resolves when `check` holds, polling at a tenth of the lease; fails after `deadlineMs`. */
async function until(
  t: Test,
  what: string,
  check: () => Promise<boolean> | boolean,
  deadlineMs: number,
): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) {
      t.fail(`timed out waiting for: ${what}`);
      return;
    }
    await new Promise((r) => setTimeout(r, LEASE_MS / 10));
  }
}

t.test('the conditioning worker on the shared lease loop', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sql = postgres(await freshSchemaUrl(t), { max: 2, onnotice: () => undefined });
  t.teardown(() => sql.end());
  await migrate(sql, log);
  const repo = new CreativeRepo(sql, 60, 3600);
  const row = async (key: string) => (await sql<CreativeRow[]>`select * from ad_creative where key = ${key}`)[0]!;

  /** A job function that runs until released or aborted, recording how it ended. */
  const jobs = new Map<string, { release: () => void; ended?: string }>();
  const metrics = new Registry();
  const worker = new ConditioningWorker(
    {
      repo,
      log,
      metrics,
      condition: (job, signal) =>
        new Promise((resolve, reject) => {
          const entry: { release: () => void; ended?: string } = {
            release: () => {
              entry.ended = 'finished';
              resolve({ manifest: 'master.m3u8', files: ['master.m3u8'], rungs: [], seconds_to_ready: 1 });
            },
          };
          jobs.set(job.key, entry);
          signal.addEventListener('abort', () => {
            entry.ended = `aborted: ${(signal.reason as Error).message}`;
            reject(signal.reason as Error);
          });
        }),
    },
    { owner: 'owner-a', leaseMs: LEASE_MS, tickMs: 60_000, maxJobs: 2, jobTimeoutMs: 60_000, maxAttempts: 3 },
  );
  worker.start();
  t.teardown(() => worker.stop());

  // A job that outlives several lease lengths keeps its lease through the loop's renewals.
  await repo.ensure({
    key: 'slow',
    creativeKey: 'c1',
    profileKey: 'p',
    profile,
    mediaUrl: 'https://ads.example/slow.mp4',
    durationSec: 10,
  });
  await worker.tick();
  await until(t, 'the slow job started', () => jobs.has('slow'), 10_000);
  t.equal((await row('slow')).lease_owner, 'owner-a', 'claimed by this owner');
  const firstUntil = (await row('slow')).lease_until!.getTime();
  await until(
    t,
    'a renewal moved the lease on',
    async () => (await row('slow')).lease_until!.getTime() > firstUntil,
    10 * LEASE_MS,
  );
  await new Promise((r) => setTimeout(r, 3 * LEASE_MS)); // three lease lengths: the lease must not lapse meanwhile
  const held = await row('slow');
  t.equal(held.lease_owner, 'owner-a', 'still ours after three lease lengths');
  t.ok(held.lease_until!.getTime() > Date.now() - 50, 'and not lapsed');
  jobs.get('slow')!.release();
  await until(t, 'the slow job written ready', async () => (await row('slow')).state === 'ready', 10_000);
  t.equal(worker.ran, 1);

  // Another owner takes the lease (as after a lapse): the next renewal no longer finds the job here.
  await repo.ensure({
    key: 'taken',
    creativeKey: 'c2',
    profileKey: 'p',
    profile,
    mediaUrl: 'https://ads.example/taken.mp4',
    durationSec: 10,
  });
  await worker.tick();
  await until(t, 'the second job started', () => jobs.has('taken'), 10_000);
  await sql`update ad_creative set lease_owner = 'owner-b', lease_until = now() + interval '1 minute' where key = 'taken'`;
  await until(t, 'the taken job aborted', () => jobs.get('taken')!.ended !== undefined, 10 * LEASE_MS);
  t.equal(jobs.get('taken')!.ended, 'aborted: the lease was lost', 'aborted as lost, not as timed out or stopped');
  await until(
    t,
    'the worker let go of it',
    () => metrics.render().includes('ad_conditioning_jobs_total{result="lease_lost"} 1'),
    10_000,
  );
  const taken = await row('taken');
  t.equal(taken.state, 'pending', 'its outcome was not written over the new owner');
  t.equal(taken.lease_owner, 'owner-b');
  t.equal(worker.ran, 1, 'no second outcome counted');

  // A graceful stop aborts the job in flight and hands its lease back at once.
  await repo.ensure({
    key: 'stopped',
    creativeKey: 'c3',
    profileKey: 'p',
    profile,
    mediaUrl: 'https://ads.example/stopped.mp4',
    durationSec: 10,
  });
  await worker.tick();
  await until(t, 'the third job started', () => jobs.has('stopped'), 10_000);
  await worker.stop();
  t.equal(jobs.get('stopped')!.ended, 'aborted: the worker stopped');
  const released = await row('stopped');
  t.equal(released.lease_owner, null, 'lease handed back');
  t.equal(released.lease_until, null);
  t.equal(released.state, 'pending', 'for another instance to take at once');
});
