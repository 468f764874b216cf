/**
 * A break on an event's streams reports what it did (issue 25 item 4): a PUT that finds no live
 * stream is a 422 problem that starts nothing (no break row, no transcoder job, no later break
 * blocked), and a stream registered just before the PUT (on this instance or another) is in it.
 * Two instances on real Postgres and Redis; the DAI host and transcoder are simulated.
 */
import t from 'tap';
import { DaiHostSim } from '../../../lib/sim/dai-host.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import type { Service } from '../../../lib/app.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';

const SEG = 2;

t.test('PUT /squeeze-ad-break: no matching stream is a 422; a just-registered stream is included', async (t) => {
  if (!(await needServices(t))) return;
  const sim = await new DaiHostSim({
    shape: { segmentSec: SEG, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const transcoder = await new TranscoderSim().start();
  t.teardown(async () => {
    sim.stop();
    await transcoder.stop();
  });
  const common = {
    databaseUrl: await freshSchemaUrl(t),
    redisUrl: REDIS_URL,
    redisKeyPrefix: `t${Math.random().toString(36).slice(2, 10)}:`,
    daiHost: sim.url,
    contentOrigin: sim.url,
    transcoderUrl: transcoder.url,
    allowPrivateOutbound: true,
    breakTickMs: 200,
  };
  const a = await startTestService(t, common);
  const b = await startTestService(t, common);
  const tok = await token(a);
  const api = (s: Service, method: string, path: string, json?: unknown) =>
    call(s.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  const breakRows = async () =>
    Number((await a.stores.sql<{ n: string }[]>`select count(*) as n from squeeze_break`)[0]!.n);

  t.equal((await api(a, 'PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  const ev = await api(a, 'PUT', 'squeeze-event-config', {
    asset_id: 'EVNEW',
    source_uri: `${sim.url}/source/master.m3u8`,
    brand_config_id: 'acme',
  });
  const eventId = ev.body.id as number;
  t.equal(
    (
      await api(a, 'PUT', 'squeeze-configured-ad', {
        event_id: eventId,
        abid: 'c1',
        ad_uri: 'https://cdn.example.com/c1.mp4',
        duration: 10,
        is_curated: true,
      })
    ).status,
    200,
  );

  // Before issue 25: 200 `scheduled` with `streams: 0` (curated ads), or 200 `status: failed`.
  const none = await api(a, 'PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 2 * SEG });
  t.equal(none.status, 422, 'an event with no streams at all');
  t.equal(none.headers['content-type'], 'application/problem+json');
  t.match(none.body, { type: 'urn:squeezeback:problem:unprocessable', status: 422, detail: /no live streams/ });

  // The first stream of the newly configured event: its ad tag, and the PUT at once (same instance).
  t.equal((await call(a.url, 'GET', '/dai/adproxy?stream_id=S1:LOC&asset_key=EVNEW&kv=one')).status, 200);
  const unknown = await api(a, 'PUT', 'squeeze-ad-break', {
    event_id: eventId,
    break_duration: 2 * SEG,
    stream_ids: ['NOPE:LOC', 'ALSO-NOT:LOC'],
  });
  t.equal(unknown.status, 422, 'stream_ids that match no live stream');
  t.match(unknown.body, { type: 'urn:squeezeback:problem:unprocessable', detail: /none of stream_ids/ });
  t.equal(await breakRows(), 0, 'neither refused PUT persisted a break');
  t.equal(transcoder.jobs.length, 0, 'nor submitted a transcoder job');

  const first = await api(a, 'PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 2 * SEG });
  t.equal(first.status, 200, 'the refused PUTs blocked no later break');
  t.match(
    first.body,
    { status: 'scheduled', streams: 1 },
    'the stream registered just before the PUT is in the break (before issue 25: missed within the flush second)',
  );
  t.match(
    first.body.warnings,
    [/no live-edge delay/],
    'an event without a live-edge delay is warned: its viewers get content (a segment listed as content stays so)',
  );
  t.equal((await api(a, 'DELETE', `squeeze-ad-break/${first.body.break_id}`)).status, 200);

  // A stream registered through the other instance's manifest path, and the PUT at once on this one.
  t.equal(
    (await call(b.url, 'GET', '/dai/manifest/linear/hls/event/EVNEW/stream/S2:LOC/variant/720p.m3u8')).status,
    200,
  );
  const second = await api(a, 'PUT', 'squeeze-ad-break', {
    event_id: eventId,
    break_duration: 2 * SEG,
    stream_ids: ['S2:LOC'],
  });
  t.equal(second.status, 200, JSON.stringify(second.body));
  t.match(second.body, { status: 'scheduled', streams: 1 }, 'registered on another instance just before: included');
  t.equal((await api(a, 'DELETE', `squeeze-ad-break/${second.body.break_id}`)).status, 200);

  const doc = (await call(a.url, 'GET', '/api/v1/openapi.json', { token: tok })).body as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  t.ok(doc.paths?.['/api/v1/squeeze-ad-break']?.['put']?.responses['422'], 'OpenAPI lists the 422');
});
