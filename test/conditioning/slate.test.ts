/**
 * Issue 26 part 3, real Postgres, Redis and ffmpeg: a brand's slate fills a short pod to its
 * planned length (the VAST durations of its ads) when the brand asks for it, on HLS and DASH;
 * without `fill` the pod is shortened. The pod's one ad is a 2 s MP4 announced as 4 s in VAST; the
 * slate (an 8 s MP4) is conditioned like any ad and cut to the gap.
 */
import t from 'tap';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { call } from '../helpers/http.js';
import { needServices, tempDir } from '../helpers/services.js';
import { ffprobe, needFfmpeg } from '../helpers/ffmpeg.js';
import { segmentsOf } from '../helpers/stitch-checks.js';
import { DASH_RUNGS, RUNGS, SEGMENT_SEC, makeCreative, rig } from '../helpers/conditioning.js';
import { parseMaster } from '../../lib/stitch/hls/master.js';

const AD_SEC = 2;
const PLANNED_SEC = 4;
const SLATE_SEC = 8;
const WORK_SEC = (AD_SEC + SLATE_SEC) * (RUNGS.length + DASH_RUNGS.length);
// The file's budget follows the ffmpeg work on a busy 2-core machine.
t.setTimeout(90_000 + WORK_SEC * 8_000);

interface AdOut {
  id: string;
  duration: number;
  slate?: boolean;
}

t.test('slate fills a short pod to its planned duration when the brand asks (HLS and DASH)', async (t) => {
  if (!needFfmpeg(t)) return;
  if (!(await needServices(t, ['postgres', 'redis']))) return;
  const work = tempDir(t);
  const creatives = new Map([
    ['ad-1', await makeCreative(work, 'ad-1', AD_SEC)],
    ['slate', await makeCreative(work, 'slate', SLATE_SEC, 220)],
  ]);
  const r = await rig(t, { count: 1, breaks: ['start'], ads: [{ id: 'ad-1', durationSec: PLANNED_SEC }], creatives });
  const a = r.instances[0]!;
  const brandConfig = (fill: boolean) =>
    call(a.url, 'PUT', '/api/v1/squeeze-brand-config', {
      token: r.jwt,
      json: { brand_id: 'acme', stitch_slate: { uri: r.adServer.creativeUrl('slate'), fill } },
    });
  t.equal((await brandConfig(true)).status, 200, 'the brand asks for slate');
  t.equal(
    (
      await call(a.url, 'PUT', '/api/v1/squeeze-brand-config', {
        token: r.jwt,
        json: { brand_id: 'acme', stitch_slate: { uri: 'file:///etc/passwd' } },
      })
    ).status,
    400,
    'a slate URI must be http(s)',
  );

  const h1 = await r.stitch(a.url, 'hls', 'hls-1', 'vod-hls');
  const d1 = await r.stitch(a.url, 'dash', 'dash-1', 'vod-dash');
  for (const res of [h1, d1]) {
    t.equal(res.status, 200);
    t.ok(
      (res.body.warnings as string[]).some((w) =>
        /^break preroll: 4 s not filled with slate this time: conditioning job [0-9a-f-]{36} is (queued|running)$/.test(
          w,
        ),
      ),
      'the slate is queued like an ad, and the warning names its job',
    );
  }
  const views = await r.settle(30_000 + WORK_SEC * 4_000);
  t.same(
    views.map((v) => v.state),
    ['ready', 'ready', 'ready', 'ready'],
    'ad and slate conditioned for both ladders',
  );

  const podOf = (body: { breaks: Array<{ duration: number; ads: AdOut[] }> }) => ({
    duration: body.breaks[0]!.duration,
    ads: body.breaks[0]!.ads.map((x) => ({ id: x.id, duration: x.duration, slate: x.slate === true })),
  });

  t.test('HLS: the ad, then slate to the planned duration; slate segments decode at their rung', async (t) => {
    const res = await r.stitch(a.url, 'hls', 'hls-2', 'vod-hls');
    t.equal(res.status, 200);
    t.notOk(res.body.warnings, 'nothing left out');
    const pod = podOf(res.body);
    t.match(pod.ads, [
      { id: 'ad-1', slate: false },
      { id: 'slate', slate: true },
    ]);
    t.equal(pod.duration, PLANNED_SEC, `the pod lasts its planned ${PLANNED_SEC} s`);
    t.equal(pod.ads[1]!.duration, PLANNED_SEC - AD_SEC, 'the slate fills the gap, not its whole length');
    const master = parseMaster(
      res.body.cache_url,
      (await call(a.url, 'GET', new URL(res.body.cache_url).pathname)).text,
    );
    for (const v of master.variants) {
      const segs = segmentsOf((await call(a.url, 'GET', new URL(v.uri).pathname)).text, v.uri).filter((s) =>
        s.uri.includes('/stitch/creatives/'),
      );
      const slate = segs.slice(-Math.round((PLANNED_SEC - AD_SEC) / SEGMENT_SEC));
      t.equal(
        segs.length,
        Math.ceil(AD_SEC / SEGMENT_SEC) + slate.length,
        `${v.height}p: the ad's and the slate's segments`,
      );
      for (const s of slate) {
        const file = path.join(work, `slate-${v.height}-${path.basename(s.uri)}`);
        await writeFile(file, Buffer.from(await (await fetch(s.uri)).arrayBuffer()));
        const video = (await ffprobe(file)).streams.find((x) => x.codec_type === 'video');
        t.match(
          { codec: video?.codec_name, w: video?.width, h: video?.height },
          { codec: 'h264', w: v.width, h: v.height },
          `slate segment decodes at ${v.width}x${v.height}`,
        );
      }
    }
  });

  t.test('DASH: the ad Period, then a slate Period cut to the gap', async (t) => {
    const res = await r.stitch(a.url, 'dash', 'dash-2', 'vod-dash');
    t.equal(res.status, 200);
    t.notOk(res.body.warnings, 'nothing left out');
    const pod = podOf(res.body);
    t.match(pod.ads, [
      { id: 'ad-1', slate: false },
      { id: 'slate', slate: true },
    ]);
    t.equal(pod.duration, PLANNED_SEC);
    const doc = new DOMParser().parseFromString(
      (await call(a.url, 'GET', new URL(res.body.cache_url).pathname)).text,
      'application/xml',
    );
    const adPeriods = Array.from(doc.getElementsByTagName('Period')).filter((p) =>
      (p.getElementsByTagName('BaseURL')[0]?.textContent ?? '').includes('/stitch/creatives/'),
    );
    t.equal(adPeriods.length, 2, 'an ad Period and a slate Period');
    t.equal(adPeriods[1]!.getAttribute('duration'), `PT${PLANNED_SEC - AD_SEC}S`, 'the slate Period lasts the gap');
  });

  t.test('without fill the pod is shortened', async (t) => {
    t.equal((await brandConfig(false)).status, 200);
    for (const protocol of ['hls', 'dash'] as const) {
      const res = await r.stitch(a.url, protocol, `${protocol}-3`, protocol === 'hls' ? 'vod-hls' : 'vod-dash');
      const pod = podOf(res.body);
      t.same(
        pod.ads.map((x) => x.id),
        ['ad-1'],
        `${protocol}: the ad alone`,
      );
      t.equal(pod.duration, AD_SEC, `${protocol}: the pod is the ad's ${AD_SEC} s`);
    }
  });
});
