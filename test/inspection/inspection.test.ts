/**
 * ID3 tag inspection end to end (issue 13): the pod host simulator as DAI_HOST, two service
 * instances on one Postgres and Redis, streams registered through the manifest proxy.
 */
import t from 'tap';
import postgres from 'postgres';
import { readFileSync } from 'node:fs';
import { PodHostSim } from '../../lib/sim/pod-host.js';
import type { Service } from '../../lib/app.js';
import { freshSchemaUrl, needServices, REDIS_URL, startTestService, token } from '../helpers/services.js';
import { call } from '../helpers/http.js';

const media = (f: string) => readFileSync(new URL(`../fixtures/media/shaka-player/${f}`, import.meta.url));
const EPOCH_SEC = Date.UTC(2026, 0, 1) / 1000;
const API = '/api/v1/id3-tag-inspect';

if (await needServices(t)) {
  const sim = await new PodHostSim({
    ts: media('id3-metadata.ts'),
    aac: media('id3-metadata.aac'),
    mp4: media('cea608-track-segment-emsg-id3.mp4'),
  }).start();
  t.teardown(() => sim.stop());
  const databaseUrl = await freshSchemaUrl(t);
  const config = {
    databaseUrl,
    redisUrl: REDIS_URL,
    daiHost: sim.url,
    contentOrigin: 'http://content.example.com',
    allowPrivateOutbound: true,
  };
  const a = await startTestService(t, config);
  const b = await startTestService(t, config);
  const tokA = await token(a);
  const tokB = await token(b);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  t.teardown(() => sql.end());

  const post = (svc: Service, json: unknown) => call(svc.url, 'POST', API, { token: svc === a ? tokA : tokB, json });
  const get = (svc: Service, id: string) => call(svc.url, 'GET', `${API}/${id}`, { token: svc === a ? tokA : tokB });
  async function finished(svc: Service, id: string, timeoutMs = 20_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = await get(svc, id);
      if (r.status === 200 && r.body.status !== 'pending') return r.body;
      if (Date.now() > until) throw new Error(`job of ${id} still ${r.status} ${r.text}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  const hlsMaster = (id: string) => `/dai/manifest/linear/hls/event/ev1/stream/${id}/master.m3u8`;

  t.test(
    'HLS: pending first, then complete with every rendition of both pods; the other instance answers the same',
    async (t) => {
      t.equal((await call(a.url, 'GET', hlsMaster('s1'))).status, 200);
      sim.hold();
      const first = await post(a, { stream_id: 's1' });
      t.equal(first.status, 200);
      t.equal(first.body.status, 'pending');
      t.equal(first.body.ad_pods, null);
      t.match(first.body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const again = await post(b, { stream_id: 's1' });
      t.equal(again.body.status, 'pending', 'a repeat while running returns the same pending job');
      t.equal(again.body.created, first.body.created);
      sim.release();
      const done = await finished(a, 's1');
      t.equal(done.status, 'complete');
      t.notOk(done.error);
      t.equal(done.created, first.body.created);
      const pods = done.ad_pods;
      t.equal(pods.length, 2);
      t.same(
        pods.map((p: { break: number; start_time_sec: number; start_time_epoch_sec: number }) => [
          p.break,
          p.start_time_sec,
          p.start_time_epoch_sec,
        ]),
        [
          [0, 12, EPOCH_SEC + 12],
          [1, 30, EPOCH_SEC + 30],
        ],
        'break index; start in the presentation, as in the DASH form (before issue 25: the PDT); the PDT as start_time_epoch_sec',
      );
      const [pod0, pod1] = pods;
      t.equal(pod0.hls.length, 1);
      t.equal(pod0.hls[0].name, 'master.m3u8');
      const names = pod0.hls[0].rendtions.map((r: { name: string }) => r.name);
      t.same(
        names,
        [
          'variant/720p.m3u8',
          'variant/360p.m3u8',
          `${sim.url}/linear/hls/event/ev1/stream/s1/audio/en.m3u8`,
          'subs/en.m3u8',
        ],
        'variants, then audio and subtitles',
      );
      t.same(
        pod0.hls[0].rendtions.map((r: { bandwidth?: number }) => r.bandwidth),
        [2500000, 800000, undefined, undefined],
      );
      const v720 = pod0.hls[0].rendtions[0];
      t.same(
        v720.segments.map((s: { name: string; sequence: number }) => [s.name, s.sequence]),
        [
          [`${sim.url}/ads/pod0/720p/ad_0.ts`, 102],
          [`${sim.url}/ads/pod0/720p/ad_1.ts`, 103],
        ],
      );
      t.same(
        v720.segments[0].tags.map((x: { frame: string; value: string; metadata: unknown }) => [
          x.frame,
          x.value,
          x.metadata,
        ]),
        [
          [
            'TIT2',
            'Sam sobie jade - ADM & Białas & White 2115 & Mata & Beteo & Lanek',
            { timescale: 90000, presentation_time: 8102069984 },
          ],
          ['TENC', 'Z/IPStream X/2 v1.24.12', { timescale: 90000, presentation_time: 8102069984 }],
          ['TIT2', 'FUKAJ SWEEPER - Imanbek', { timescale: 90000, presentation_time: 8102192864 }],
          ['TENC', 'Z/IPStream X/2 v1.24.12', { timescale: 90000, presentation_time: 8102192864 }],
        ],
      );
      const audio = pod0.hls[0].rendtions[2];
      t.same(
        audio.segments[0].tags[0].metadata,
        { timescale: 90000, presentation_time: 891380 },
        'packed audio: the transportStreamTimestamp',
      );
      t.equal(audio.segments[0].tags[0].description, 'com.apple.streaming.transportStreamTimestamp');
      const subs = pod0.hls[0].rendtions[3];
      t.same(
        subs.segments.map((s: { tags: unknown[]; error?: string }) => [s.tags.length, s.error]),
        [
          [0, undefined],
          [0, undefined],
        ],
        'WebVTT bytes: no tags, no error',
      );
      // Pod 1 (DATERANGE): its one segment answers 404: reported on the segment, the job completes.
      t.equal(pod1.hls[0].rendtions.length, 4);
      for (const r of pod1.hls[0].rendtions) {
        t.equal(r.segments.length, 1);
        t.equal(r.segments[0].sequence, 105);
        t.same(r.segments[0].tags, []);
        t.match(r.segments[0].error, /404/);
      }
      t.same((await get(b, 's1')).body, done, 'the other instance answers the same result');
      const repeat = await post(b, { stream_id: 's1' });
      t.same(repeat.body, done, 'a repeated request returns the finished result');
      t.equal(sim.segmentRequests.get('/ads/pod0/720p/ad_0.ts'), 1, 'each segment was fetched once');
    },
  );

  t.test('DASH: the ad Period, its fMP4 emsg tags and its Google EventStream events', async (t) => {
    t.equal((await call(b.url, 'GET', '/dai/manifest/linear/dash/event/ev1/stream/d1/manifest.mpd')).status, 200);
    t.equal((await post(b, { stream_id: 'd1' })).body.status, 'pending');
    const done = await finished(a, 'd1');
    t.equal(done.status, 'complete');
    t.equal(done.ad_pods.length, 1);
    const pod = done.ad_pods[0];
    t.equal(pod.break, 0);
    t.equal(pod.start_time_sec, 12, 'the Period start in the presentation, as in the HLS form');
    t.notOk('start_time_epoch_sec' in pod, 'a static MPD has no wall-clock start');
    t.equal(pod.dash.length, 1);
    t.equal(pod.dash[0].name, 'dai_pod-0001-ad-1');
    const r = pod.dash[0].rendtions;
    t.same(
      r.map((x: { name: string }) => x.name),
      ['ad720'],
    );
    t.same(
      r[0].segments.map((s: { name: string }) => s.name),
      ['ad720/seg_001.m4s', 'ad720/seg_002.m4s'],
    );
    const emsg = {
      value: " *** ID3 timed metadata from 'emsg' @ -- 00:00:10.0 *** ",
      metadata: { timescale: 90000, presentation_time: 1800000 },
    };
    t.match(r[0].segments[0].tags, [
      emsg,
      { value: 'google_ad_0001', metadata: { timescale: 1000, presentation_time: 0 } },
    ]);
    t.equal(r[0].segments[0].tags.length, 2);
    t.match(
      r[0].segments[1].tags,
      [emsg, { value: 'google_ad_0001_midpoint', metadata: { timescale: 1000, presentation_time: 5000 } }],
      'an event at 5 s falls in the second 4 s segment',
    );
    t.equal(sim.segmentRequests.get('/content/dash/v720/seg_0.m4s'), undefined, 'content segments are not fetched');
  });

  t.test('a pod manifest given by URL: all of it is one pod; concurrent first requests start one job', async (t) => {
    const manifest_url = `${sim.url}/ad_break_id/pod-77.m3u8`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(i % 2 ? a : b, { stream_id: 'p77', manifest_url })),
    );
    t.same(new Set(answers.map((r) => r.status)), new Set([200]));
    t.equal(new Set(answers.map((r) => r.body.created)).size, 1, 'one job');
    const done = await finished(b, 'p77');
    t.equal(done.status, 'complete');
    t.equal(done.ad_pods.length, 1);
    t.equal(done.ad_pods[0].start_time_sec, 0);
    const segs = done.ad_pods[0].hls[0].rendtions[0].segments;
    t.same(
      segs.map((s: { name: string }) => s.name),
      ['pod-77/ad_0.ts', 'pod-77/ad_1.ts'],
    );
    t.equal(segs[1].tags.length, 4);
    t.equal(sim.segmentRequests.get('/ad_break_id/pod-77/ad_0.ts'), 1, 'the pod was inspected once');
    const [count] = await sql<{ n: number }[]>`select count(*)::int as n from id3_inspection where stream_id = 'p77'`;
    t.equal(count!.n, 1);
  });

  t.test(
    'refusals: unknown stream 404, manifest_url elsewhere 400, bad bodies 400, GET without job 404, no token 401',
    async (t) => {
      const unknown = await post(a, { stream_id: 'nobody' });
      t.equal(unknown.status, 404);
      t.match(unknown.headers['content-type'], /application\/problem\+json/);
      t.equal(
        (await post(a, { stream_id: 'x', manifest_url: 'http://evil.example.com/ad_break_id/1.m3u8' })).status,
        400,
      );
      t.equal(
        (
          await post(a, {
            stream_id: 'x',
            manifest_url: `${sim.url.replace('127.0.0.1', 'localhost')}/ad_break_id/1.m3u8`,
          })
        ).status,
        400,
        'same host by another name is another origin',
      );
      t.equal(
        (await post(a, { stream_id: 'x', manifest_url: `https://${new URL(sim.url).host}/ad_break_id/1.m3u8` })).status,
        400,
        'another scheme is another origin',
      );
      t.equal((await post(a, { stream_id: 'bad id' })).status, 400);
      t.equal((await post(a, { stream_id: 'x', extra: 1 })).status, 400);
      t.equal((await post(a, {})).status, 400);
      t.equal((await get(a, 'nobody')).status, 404);
      t.equal((await call(a.url, 'POST', API, { json: { stream_id: 's1' } })).status, 401);
      const doc = await call(a.url, 'GET', '/api/v1/openapi.json');
      t.ok(doc.body.paths[API]?.post, 'OpenAPI lists POST');
      t.ok(doc.body.paths[`${API}/{stream_id}`]?.get, 'OpenAPI lists GET');
    },
  );

  t.test(
    'a stream known only from the ad tag or /squeezeback is inspected from its event source; otherwise a 422 says what is missing (issue 25 item 9)',
    async (t) => {
      const api = (method: string, path: string, json: unknown) =>
        call(a.url, method, `/api/v1/${path}`, { token: tokA, json });
      t.equal((await api('PUT', 'squeeze-brand-config', { brand_id: 'insp' })).status, 200);
      t.equal(
        (
          await api('PUT', 'squeeze-event-config', {
            asset_id: 'EVSRC',
            source_uri: `${sim.url}/live/evsrc/master.m3u8`,
            brand_config_id: 'insp',
          })
        ).status,
        200,
      );
      const complete = async (id: string) => {
        const first = await post(a, { stream_id: id });
        t.equal(first.status, 200, `${id}: a job starts (before issue 25: 404, no master playlist proxied)`);
        const done = await finished(b, id);
        t.equal(done.status, 'complete');
        t.equal(done.ad_pods.length, 2, 'both pods of the event source');
        t.equal(done.ad_pods[0].hls[0].name, 'master.m3u8');
        t.equal(done.ad_pods[0].hls[0].rendtions.length, 4);
      };
      // Known from the preroll ad tag only (no manifest through the proxy).
      t.equal((await call(a.url, 'GET', '/dai/adproxy?stream_id=tag1:LOC&asset_key=EVSRC')).status, 200);
      await complete('tag1:LOC');
      // Known from /squeezeback only: the service generated its id.
      const sb = await call(a.url, 'GET', '/squeezeback/EVSRC/master.m3u8');
      t.equal(sb.status, 200, sb.text);
      const sbId = /^(\d{9})\/variant\/720p\.m3u8$/m.exec(sb.text)?.[1];
      t.ok(sbId, 'the squeezeback stream id from its variant URLs');
      await complete(sbId!);
      // Known, but nothing says what to inspect: 422 with what is missing.
      await call(a.url, 'GET', '/dai/adproxy?stream_id=orphan1:LOC&asset_key=NOPE');
      const noEvent = await post(a, { stream_id: 'orphan1:LOC' });
      t.equal(noEvent.status, 422);
      t.match(noEvent.body, {
        type: 'urn:squeezeback:problem:unprocessable',
        detail: /asset key NOPE matches no event config/,
      });
      await call(a.url, 'GET', '/dai/adproxy?stream_id=orphan2:LOC');
      t.match((await post(a, { stream_id: 'orphan2:LOC' })).body, {
        status: 422,
        detail: /without an asset_key or caid/,
      });
      t.match((await post(a, { stream_id: 'never-seen' })).body, { status: 404, detail: /is not known/ });
      const doc = await call(a.url, 'GET', '/api/v1/openapi.json');
      t.ok(doc.body.paths[API].post.responses['422'], 'OpenAPI lists the 422');
    },
  );

  t.test('a job whose owner died (lease taken, never finished) is finished by a live instance', async (t) => {
    t.equal((await call(a.url, 'GET', hlsMaster('dead1'))).status, 200);
    await a.streams.flush();
    await sql`insert into id3_inspection (stream_id, job_id, source_url, status, attempts, lease_owner, lease_until)
              values ('dead1', 'job-of-the-dead', ${`${sim.url}/linear/hls/event/ev1/stream/dead1/master.m3u8`}, 'pending', 1, 'dead-instance', now() + interval '1 second')`;
    t.equal((await post(b, { stream_id: 'dead1' })).body.status, 'pending');
    const done = await finished(b, 'dead1');
    t.equal(done.status, 'complete');
    t.equal(done.ad_pods.length, 2);
    const [row] = await sql<
      { attempts: number; lease_owner: string | null }[]
    >`select attempts, lease_owner from id3_inspection where stream_id = 'dead1'`;
    t.equal(row!.attempts, 2, 'taken over once');
    t.equal(row!.lease_owner, null);
  });

  t.test('a job whose owners kept dying is given up after 3 attempts: failed, with the reason', async (t) => {
    await sql`insert into id3_inspection (stream_id, job_id, source_url, status, attempts, lease_owner, lease_until)
              values ('doomed', 'job-doomed', ${`${sim.url}/ad_break_id/doomed.m3u8`}, 'pending', 3, 'dead-instance', now() - interval '1 second')`;
    const done = await finished(a, 'doomed');
    t.equal(done.status, 'failed');
    t.equal(done.ad_pods, null);
    t.match(done.error, /given up after 3 attempts/);
    t.equal(sim.segmentRequests.has('/ad_break_id/doomed/ad_0.ts'), false, 'not run a fourth time');
  });

  t.test('a finished result expires after ID3_RESULT_TTL_SEC: GET 404, a new request starts a new job', async (t) => {
    await sql`update id3_inspection set finished_at = now() - interval '2 hours' where stream_id = 'p77'`;
    t.equal((await get(a, 'p77')).status, 404);
    const fresh = await post(a, { stream_id: 'p77', manifest_url: `${sim.url}/ad_break_id/pod-77.m3u8` });
    t.equal(fresh.body.status, 'pending');
    t.equal(fresh.body.ad_pods, null);
    t.equal((await finished(a, 'p77')).status, 'complete');
    t.equal(sim.segmentRequests.get('/ad_break_id/pod-77/ad_0.ts'), 2, 'inspected again');
  });

  t.test('an instance closed mid-job: the other finishes the job', async (t) => {
    sim.hold();
    const started = await post(a, { stream_id: 'mid1', manifest_url: `${sim.url}/ad_break_id/mid-1.m3u8` });
    t.equal(started.body.status, 'pending');
    const until = Date.now() + 10_000;
    while (!sim.segmentRequests.has('/ad_break_id/mid-1/ad_0.ts') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    const [row] = await sql<{ lease_owner: string }[]>`select lease_owner from id3_inspection where stream_id = 'mid1'`;
    const owner = row!.lease_owner === a.inspections.owner ? a : b;
    const other = owner === a ? b : a;
    t.not(row!.lease_owner, null, 'an instance holds the job');
    await owner.close();
    sim.release();
    const done = await finished(other, 'mid1');
    t.equal(done.status, 'complete');
    t.equal(done.ad_pods[0].hls[0].rendtions[0].segments[0].tags.length, 4);
  });
}
