/**
 * The cue monitor end to end (issue 15): two service instances on one Postgres and Redis follow a
 * simulated live origin (1 s segments) whose playlist carries cues of several dialects over time;
 * the ad server and the transcoder are simulated. Also the decode endpoint.
 */
import t from 'tap';
import { request } from 'undici';
import postgres from 'postgres';
import { CueOriginSim } from '../../../lib/sim/cue-origin.js';
import { spliceInsert, spliceInsertCancel, timeSignal } from '../../../lib/sim/scte35-encode.js';
import { AdServerSim } from '../../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import type { Service } from '../../../lib/app.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token, REDIS_URL } from '../../helpers/services.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hex = (b: Buffer) => `0x${b.toString('hex').toUpperCase()}`;
const b64 = (b: Buffer) => b.toString('base64');

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(150);
  }
}

interface Row {
  id: string;
  status: string;
  start_time: Date;
  end_time: Date;
  break_duration: number;
  trigger: { source: string; key?: string; cue?: Record<string, unknown> };
}

t.test('cue monitor: cue-triggered breaks, exactly once, across two instances', async (t) => {
  if (!(await needServices(t))) return;
  const origin = await new CueOriginSim({ segmentSec: 1, windowSegments: 60 }).start();
  const ads = await new AdServerSim({ ads: [{ id: 'ad-1', durationSec: 4 }] }).start();
  const transcoder = await new TranscoderSim().start();
  t.teardown(async () => {
    await origin.stop();
    await ads.stop();
    await transcoder.stop();
  });
  const databaseUrl = await freshSchemaUrl(t);
  const common = {
    databaseUrl,
    redisUrl: REDIS_URL,
    contentOrigin: origin.url,
    adServerUrl: `${ads.url}/ad`,
    transcoderUrl: transcoder.url,
    allowPrivateOutbound: true,
    breakLeaseMs: 1500,
    breakTickMs: 200,
  };
  const a = await startTestService(t, common);
  const b = await startTestService(t, common);
  const tok = await token(a);
  const api = (s: Service, method: string, path: string, json?: unknown) =>
    call(s.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
  // The test's own connection: either instance may be closed mid-test.
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
  t.teardown(() => sql.end());

  t.equal((await api(a, 'PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
  const event = async (asset: string, channel: string, extra: Record<string, unknown>) => {
    const r = await api(a, 'PUT', 'squeeze-event-config', {
      asset_id: asset,
      source_uri: `${origin.url}/${channel}/master.m3u8`,
      brand_config_id: 'acme',
      ...extra,
    });
    t.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { id: number; trigger: string; manifest_polling?: number };
  };
  t.equal(
    (
      await api(a, 'PUT', 'squeeze-event-config', {
        asset_id: 'X',
        source_uri: `${origin.url}/x/master.m3u8`,
        brand_config_id: 'acme',
        trigger: 'cues',
      })
    ).status,
    400,
    'trigger is api or scte35',
  );
  const e1 = await event('EV1', 'ch1', { trigger: 'scte35', manifest_polling: 0.5 });
  t.match(e1, { trigger: 'scte35', manifest_polling: 0.5 });
  const e2 = await event('EV2', 'ch2', {});
  t.equal(e2.trigger, 'api', 'trigger defaults to api');
  // EV3 says scte35 but has a DAI stream (registered through the preroll ad tag): DAI streams are API-only.
  const e3 = await event('EV3', 'ch3', { trigger: 'scte35', manifest_polling: 0.5 });
  t.equal((await request(`${a.url}/dai/adproxy?stream_id=S3&asset_key=EV3`)).statusCode, 200);
  await a.streams.flush();

  // A squeezeback-flow viewer of EV1, registered before its first cue (issue 30: one set of cue tags).
  const viewerMaster = await request(`${a.url}/squeezeback/EV1/master.m3u8`);
  t.equal(viewerMaster.statusCode, 200);
  const viewerVariant = new URL(
    (await viewerMaster.body.text()).split('\n').find((l) => l && !l.startsWith('#'))!,
    `${a.url}/squeezeback/EV1/master.m3u8`,
  ).toString();
  await a.streams.flush();

  // The cue schedule, a few seconds ahead of the live edge.
  const L = origin.live() + 4;
  origin.cue('ch1', L, `#EXT-OATCLS-SCTE35:${b64(spliceInsert(101, 1000, { durationSec: 4 }))}`, '#EXT-X-CUE-OUT:4');
  for (let i = 1; i < 4; i++) origin.cue('ch1', L + i, `#EXT-X-CUE-OUT-CONT:ElapsedTime=${i},Duration=4`);
  origin.cue('ch1', L + 4, '#EXT-X-CUE-IN'); // on time: changes nothing
  origin.cue(
    'ch1',
    L + 8,
    `#EXT-X-DATERANGE:ID="d1",START-DATE="${new Date(origin.pdtOf(L + 8)).toISOString()}",PLANNED-DURATION=10,SCTE35-OUT=${hex(spliceInsert(102, 1008, { durationSec: 10 }))}`,
  );
  origin.cue(
    'ch1',
    L + 11,
    `#EXT-X-DATERANGE:ID="d1",START-DATE="${new Date(origin.pdtOf(L + 8)).toISOString()}",SCTE35-IN=${hex(spliceInsert(102, 1011, 'in'))}`,
  ); // early
  origin.cue(
    'ch1',
    L + 14,
    `#EXT-X-DATERANGE:ID="p1",START-DATE="${new Date(origin.pdtOf(L + 14)).toISOString()}",SCTE35-OUT=${hex(
      timeSignal(1014, [
        { typeId: 0x11, eventId: 5 },
        { typeId: 0x10, eventId: 6, durationSec: 1800 },
      ]),
    )}`,
  );
  origin.cue(
    'ch1',
    L + 16,
    `#EXT-X-SCTE35:CUE="${b64(timeSignal(1016, [{ typeId: 0x34, eventId: 7, durationSec: 6 }]))}",CUE-OUT=YES`,
  );
  origin.cue('ch1', L + 19, `#EXT-X-SCTE35:CUE="${b64(timeSignal(1019, [{ typeId: 0x35, eventId: 7 }]))}",CUE-IN=YES`);
  origin.cue('ch1', L + 22, '#EXT-X-SPLICEPOINT-SCTE35:/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoX'); // bad CRC
  origin.cue('ch1', L + 23, '#EXT-X-CUE-OUT:DURATION=8');
  origin.cue('ch1', L + 25, `#EXT-OATCLS-SCTE35:${b64(spliceInsertCancel(103))}`);
  for (const ch of ['ch2', 'ch3']) {
    origin.cue(ch, L, '#EXT-X-CUE-OUT:4');
    origin.cue(
      ch,
      L + 2,
      `#EXT-X-DATERANGE:ID="z",START-DATE="${new Date(origin.pdtOf(L + 2)).toISOString()}",SCTE35-OUT=${hex(spliceInsert(9, 1002, { durationSec: 3 }))}`,
    );
  }

  const breaksOf = (eventId: number) =>
    sql<
      Row[]
    >`select id, status, start_time, end_time, break_duration, "trigger" from squeeze_break where event_id = ${eventId} order by start_time`;
  const owners = async () =>
    (
      await sql<
        { event_id: number; owner: string }[]
      >`select event_id, owner from squeeze_cue_monitor_lease where lease_until > now()`
    ).map((r) => `${r.event_id}:${r.owner}`);

  await t.test('one instance holds each scte35 event; api events are not followed', async (t) => {
    const held = await until('leases', async () => ((await owners()).length === 2 ? owners() : false));
    t.same(held.map((h) => Number(h.split(':')[0])).sort(), [e1.id, e3.id].sort());
    t.notOk(origin.reads.has('ch2/media'), 'the api event’s source is never read');
  });

  let alive: Service = a;
  const owner = async (eventId: number) =>
    (await owners()).find((h) => h.startsWith(`${eventId}:`))!.slice(String(eventId).length + 1);

  await t.test('a splice_insert under CUE-OUT starts one break at its segment, with its duration', async (t) => {
    const [first] = await until('break 1', async () => ((await breaksOf(e1.id)).length >= 1 ? breaksOf(e1.id) : false));
    t.equal(first!.start_time.getTime(), origin.pdtOf(L), 'starts at the cue’s segment');
    t.equal(first!.break_duration, 4);
    t.match(first!.trigger, {
      source: 'scte35',
      key: 'splice_insert:101:90000000',
      cue: {
        kind: 'out',
        dialect: 'cue-out',
        media_sequence: L,
        scte35: { splice_command: { name: 'splice_insert', splice_event_id: 101 } },
      },
    });
    const shown = await api(b, 'GET', `squeeze-ad-break/${first!.id}`);
    t.equal(shown.status, 200);
    t.match(
      shown.body,
      { trigger: { source: 'scte35', key: 'splice_insert:101:90000000', cue: { duration_sec: 4 } } },
      'the decoded cue is shown with the break',
    );
    await sleep(origin.pdtOf(L + 5) - Date.now() + 1500); // past the on-time CUE-IN, several refreshes later
    const rows = await breaksOf(e1.id);
    t.equal(rows.length, 1, 'CONT tags and refreshes start nothing more');
    t.equal(rows[0]!.end_time.getTime(), origin.pdtOf(L + 4), 'an on-time cue-in leaves the end as planned');
    t.not(rows[0]!.status, 'cancelled');
    // The viewer sees the break once: the origin's CUE-OUT (after its OATCLS), CONT and CUE-IN are
    // replaced by the service's, which wrap the squeezed segments.
    const outputs = () => transcoder.jobs.map((j) => transcoder.outputUri(j.output_key));
    const variant = await until('the squeezed variant', async () => {
      const body = await (await request(viewerVariant)).body.text();
      return outputs().some((o) => body.includes(o)) && body;
    });
    const lines = variant.split('\n');
    t.equal(lines.filter((l) => l.startsWith('#EXT-X-CUE-OUT:')).length, 1, 'one CUE-OUT');
    t.equal(lines.filter((l) => l === '#EXT-X-CUE-IN').length, 1, 'one CUE-IN');
    t.equal(lines.filter((l) => l.startsWith('#EXT-OATCLS-SCTE35')).length, 0, 'the origin’s own cue is gone');
    const out = lines.findIndex((l) => l.startsWith('#EXT-X-CUE-OUT:'));
    const cueIn = lines.indexOf('#EXT-X-CUE-IN');
    const inside = lines.slice(out, cueIn).filter((l) => l && !l.startsWith('#'));
    t.equal(inside.length, 4, 'the 4 s break’s segments between them');
    t.ok(
      inside.every((u) => outputs().includes(u)),
      'each of them squeezed',
    );
  });

  await t.test(
    'DATERANGE out/in sharing an ID: start, then the early IN ends it; the monitoring instance closed mid-break',
    async (t) => {
      const rows = await until('break 2', async () => ((await breaksOf(e1.id)).length >= 2 ? breaksOf(e1.id) : false));
      const second = rows[1]!;
      t.equal(second.start_time.getTime(), origin.pdtOf(L + 8));
      t.equal(second.break_duration, 10, 'the binary’s break_duration');
      t.match(second.trigger, { source: 'scte35', key: 'daterange:d1' });
      const holder = await owner(e1.id);
      const [gone, survivor] = holder === a.breakWorker.owner ? [a, b] : [b, a];
      alive = survivor;
      await gone.close();
      const taken = await until(
        'the other instance takes the lease',
        async () => (await owner(e1.id).catch(() => undefined)) === survivor.breakWorker.owner,
      );
      t.ok(taken);
      const ended = await until('the early IN ends break 2', async () => {
        const r = (await breaksOf(e1.id))[1]!;
        return r.status === 'cancelled' && r;
      });
      t.equal(ended.end_time.getTime(), origin.pdtOf(L + 11), 'ends at the IN’s segment');
      t.equal(ended.break_duration, 3);
      t.equal(
        (await breaksOf(e1.id)).length,
        2,
        'the new owner re-read every cue of the window and started no duplicate',
      );
    },
  );

  await t.test(
    'a program-boundary cue starts nothing; a 0x34/0x35 pair starts and ends; a bare CUE-OUT and a cancel',
    async (t) => {
      const rows = await until(
        'breaks 3 and 4 ended',
        async () => {
          const r = await breaksOf(e1.id);
          return r.length >= 4 && r[3]!.status === 'cancelled' && r;
        },
        25_000,
      );
      t.equal(rows.length, 4, 'the program boundary at L+14 and the bad cue started nothing');
      t.match(rows[2], {
        start_time: new Date(origin.pdtOf(L + 16)),
        end_time: new Date(origin.pdtOf(L + 19)),
        break_duration: 3,
        status: 'cancelled',
        trigger: {
          key: 'time_signal:7:91440000',
          cue: { dialect: 'elemental', scte35: { splice_descriptors: [{ segmentation_type_id: 0x34 }] } },
        },
      });
      t.match(rows[3], {
        start_time: new Date(origin.pdtOf(L + 23)),
        end_time: new Date(origin.pdtOf(L + 25)),
        break_duration: 2,
        status: 'cancelled',
        trigger: { key: `msn:${L + 23}:out`, cue: { duration_sec: 8 } },
      });
      // The claim's outcome is written after the break it ended: wait for it rather than race it.
      const claims = await until('the cancel claim has its outcome', async () => {
        const c = await sql<
          { cue_key: string; kind: string; outcome: string }[]
        >`select cue_key, kind, outcome from squeeze_cue_claim where event_id = ${e1.id} order by claimed_at`;
        return c.at(-1)?.outcome != null && c;
      });
      t.same(
        claims.map((c) => `${c.kind}:${c.outcome}`),
        [
          'out:started',
          'in:no-change',
          'out:started',
          'in:ended',
          'out:started',
          'in:ended',
          'out:started',
          'cancel:ended',
        ],
        'one claim per acted-on cue',
      );
    },
  );

  await t.test('no breaks for the api event nor the event with DAI streams', async (t) => {
    t.equal((await breaksOf(e2.id)).length, 0);
    t.equal((await breaksOf(e3.id)).length, 0);
    t.ok((origin.reads.get('ch3/media') ?? 0) > 0, 'the scte35 event with a DAI stream was read');
    const api2 = await api(alive, 'POST', 'squeeze-ad-break', { event_id: e2.id, break_duration: 4 });
    t.equal(api2.status, 200);
    t.same(api2.body.trigger, { source: 'api' }, 'an API-started break says so');
  });

  await t.test('metrics', async (t) => {
    const text = await (await request(`${alive.url}/metrics`)).body.text();
    t.match(text, /scte35_cues_total\{[^}]*kind="out"/);
    t.match(text, /scte35_cue_errors_total\{code="crc"\} 1/);
  });
});

t.test('POST /api/v1/scte35/decode', async (t) => {
  if (!(await needServices(t))) return;
  const s = await startTestService(t, { databaseUrl: await freshSchemaUrl(t), redisUrl: REDIS_URL });
  const tok = await token(s);
  const decode = (json: unknown, auth = true) =>
    call(s.url, 'POST', '/api/v1/scte35/decode', { ...(auth ? { token: tok } : {}), json });
  const mt = '/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoh';
  const ok = await decode({ payload: mt });
  t.equal(ok.status, 200);
  t.match(
    ok.body,
    {
      table_id: 0xfc,
      splice_command: { name: 'splice_insert', splice_event_id: 448, break_duration: 24, unique_program_id: 49152 },
    },
    'the AWS guide’s example',
  );
  const asHex = await decode({ payload: `0x${Buffer.from(mt, 'base64').toString('hex')}` });
  t.same(asHex.body, ok.body, 'hex decodes the same');
  const badCrc = await decode({ payload: mt.replace(/h$/, 'X') });
  t.equal(badCrc.status, 400);
  t.match(badCrc.body, {
    type: 'urn:squeezeback:problem:bad-cue',
    errors: [{ path: '/payload', message: /^crc at byte \d+$/ }],
  });
  t.match(
    (await decode({ payload: mt.replace(/h$/, 'X'), check_crc: false })).body,
    { crc_ok: false },
    'check_crc false decodes and reports',
  );
  t.match((await decode({ payload: '0xFC30' })).body, { status: 400, errors: [{ message: /^truncated at byte 2$/ }] });
  t.match((await decode({ payload: 'not base64!' })).body, {
    status: 400,
    errors: [{ message: /^encoding at byte 0$/ }],
  });
  t.equal((await decode({ payload: 'A'.repeat(9000) })).status, 400, 'capped');
  t.equal((await decode({ payload: mt, extra: 1 })).status, 400);
  t.equal((await decode({})).status, 400);
  t.equal((await decode({ payload: mt }, false)).status, 401, 'JWT required');
});
