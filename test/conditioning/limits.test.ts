/**
 * Issue 26 part 4, real Postgres, Redis and ffmpeg: the duration cap (VAST's duration before a job
 * is queued, the file's in the job), and the back-off of a failed creative: not queued again
 * before `retry_at`, queued again by the first stitch after it, the back-off doubled on the next failure.
 */
import t from 'tap';
import { needServices, tempDir } from '../helpers/services.js';
import { needFfmpeg } from '../helpers/ffmpeg.js';
import { makeCreative, rig, sleep, type CreativeView } from '../helpers/conditioning.js';

const CAP_SEC = 3;
const BACKOFF_SEC = 1;

interface Row extends CreativeView {
  retry_at?: string;
  updated: string;
}

t.test('duration cap and back-off', async (t) => {
  if (!needFfmpeg(t)) return;
  if (!(await needServices(t, ['postgres', 'redis']))) return;
  const work = tempDir(t);
  // ad-liar's VAST says 2 s; its file lasts 5 s, over the cap: the job finds out and fails.
  const creatives = new Map([['ad-liar', await makeCreative(work, 'ad-liar', 5)]]);
  const r = await rig(t, {
    count: 1,
    breaks: ['start'],
    ads: [
      { id: 'ad-long', durationSec: 10 },
      { id: 'ad-liar', durationSec: 2 },
    ],
    creatives,
    config: { adConditioningMaxSec: CAP_SEC, adConditioningBackoffSec: BACKOFF_SEC },
  });
  const a = r.instances[0]!;
  const first = await r.stitch(a.url, 'hls', 'hls-1', 'vod-hls');
  t.equal(first.status, 200);
  t.ok(
    (first.body.warnings as string[]).some(
      (w) =>
        w ===
        `ad ad-long/cr-ad-long of break preroll left out this time: longer (10 s) than the conditioning cap of ${CAP_SEC} s`,
    ),
    'an ad announced over the cap is refused without a job',
  );
  // One probe of a 5 s file: a few seconds at most, even on a busy machine.
  let rows = (await r.settle(60_000)) as Row[];
  t.equal(rows.length, 1, 'only ad-liar got a job');
  const failed = rows[0]!;
  t.match(failed, {
    state: 'failed',
    attempts: 1,
    failures: 1,
    error: new RegExp(`the creative lasts 5(\\.\\d+)? s, over the cap of ${CAP_SEC} s`),
  });
  const backoff1 = Date.parse(failed.retry_at!) - Date.parse(failed.updated);
  t.ok(Math.abs(backoff1 - BACKOFF_SEC * 1000) < 50, `first back-off ${backoff1} ms`);

  // Within the back-off (if this machine is quick enough to ask within it) the row is untouched.
  const again = await r.stitch(a.url, 'hls', 'hls-2', 'vod-hls');
  const within = Date.now() < Date.parse(failed.retry_at!);
  rows = (await r.creatives()) as Row[];
  if (within)
    t.match(rows[0], { state: 'failed', job_id: failed.job_id, failures: 1 }, 'not queued again within the back-off');
  t.ok(
    (again.body.warnings as string[]).some(
      (w) =>
        w.includes(`conditioning job ${failed.job_id} failed`) || w.includes('is queued') || w.includes('is running'),
    ),
    'the warning names the job',
  );

  // After the back-off the next stitch queues it again; it fails again, and the back-off doubles.
  await sleep(Math.max(0, Date.parse(failed.retry_at!) - Date.now()) + 50);
  const later = await r.stitch(a.url, 'hls', 'hls-3', 'vod-hls');
  t.equal(later.status, 200);
  rows = (await r.settle(60_000)) as Row[];
  const retried = rows[0]!;
  t.not(retried.job_id, failed.job_id, 'a new job after the back-off');
  t.match(retried, { state: 'failed', attempts: 1, failures: 2 });
  const backoff2 = Date.parse(retried.retry_at!) - Date.parse(retried.updated);
  t.ok(Math.abs(backoff2 - 2 * BACKOFF_SEC * 1000) < 50, `second back-off doubled: ${backoff2} ms`);
  t.equal(a.conditioning.ran, 2, 'two jobs ran: one per queuing');
});
