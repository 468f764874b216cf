/**
 * The cue monitor on a source without EXT-X-PROGRAM-DATE-TIME (issue 14, item 5): a cue-started
 * break records its cue's media sequence (what places it in every playlist without PDT), and an
 * early cue-in ends it after the EXTINF durations from its first segment, not at a clock estimate.
 */
import t from 'tap';
import postgres from 'postgres';
import { CueOriginSim } from '../../../lib/sim/cue-origin.js';
import { AdServerSim } from '../../../lib/sim/ad-server.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import { call } from '../../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../../helpers/services.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test(
  'cue monitor without PDT: the break starts at the cue’s media sequence and an early cue-in ends it by durations',
  async (t) => {
    if (!(await needServices(t))) return;
    const origin = await new CueOriginSim({ segmentSec: 1, windowSegments: 60, pdt: false }).start();
    const ads = await new AdServerSim({ ads: [{ id: 'ad-1', durationSec: 4 }] }).start();
    const transcoder = await new TranscoderSim().start();
    t.teardown(async () => {
      await origin.stop();
      await ads.stop();
      await transcoder.stop();
    });
    const databaseUrl = await freshSchemaUrl(t);
    const a = await startTestService(t, {
      databaseUrl,
      contentOrigin: origin.url,
      adServerUrl: `${ads.url}/ad`,
      transcoderUrl: transcoder.url,
      allowPrivateOutbound: true,
      breakLeaseMs: 1500,
      breakTickMs: 200,
    });
    const tok = await token(a);
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    t.teardown(() => sql.end());
    const api = (method: string, path: string, json?: unknown) =>
      call(a.url, method, `/api/v1/${path}`, { token: tok, ...(json === undefined ? {} : { json }) });
    t.equal((await api('PUT', 'squeeze-brand-config', { brand_id: 'acme' })).status, 200);
    const ev = await api('PUT', 'squeeze-event-config', {
      asset_id: 'NP1',
      source_uri: `${origin.url}/np/master.m3u8`,
      brand_config_id: 'acme',
      trigger: 'scte35',
      manifest_polling: 0.5,
    });
    t.equal(ev.status, 200);
    t.notOk(origin.media('np').includes('#EXT-X-PROGRAM-DATE-TIME'), 'the source has no program date-time');

    const L = origin.live() + 3;
    origin.cue('np', L, '#EXT-X-CUE-OUT:6');
    origin.cue('np', L + 3, '#EXT-X-CUE-IN'); // early: after 3 one-second segments
    const breaks = () =>
      sql<
        Array<{
          start_seq: string | null;
          status: string;
          break_duration: number;
          start_time: Date;
          end_time: Date;
          trigger: { cue?: Record<string, unknown> };
        }>
      >`
      select start_seq, status, break_duration, start_time, end_time, "trigger" from squeeze_break where event_id = ${ev.body.id as number}`;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (await breaks())[0]?.status !== 'cancelled') await sleep(200);
    const [b] = await breaks();
    t.ok(b, 'a break started');
    t.equal(Number(b!.start_seq), L, 'placed at the cue’s media sequence');
    t.match(b!.trigger, { cue: { media_sequence: L, estimated_start: true } });
    t.equal(b!.status, 'cancelled', 'the early cue-in ended it');
    t.equal(b!.break_duration, 3, 'after the EXTINF durations of the three segments between them');
    t.equal(b!.end_time.getTime() - b!.start_time.getTime(), 3000);
  },
);
