/**
 * Streams whose upstream playlists are the same bytes share one rendering (lib/delivery/render-memo.ts,
 * issue 31): the same body and ETag as a rendering of their own, never across different bytes,
 * settings or playlist directories that shape the output.
 */
import t from 'tap';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { call } from '../helpers/http.js';
import { freshSchemaUrl, needServices, startTestService } from '../helpers/services.js';

const live = (seq: number, uri: (n: number) => string) => {
  let text = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:${seq}\n`;
  for (let n = seq; n < seq + 20; n++) text += `#EXTINF:6.000,\n${uri(n)}\n`;
  return text;
};
const rootRelative = (seq: number) => live(seq, (n) => `/content/720p/seg_${n}.ts`);
const relative = (seq: number) => live(seq, (n) => `seg_${n}.ts`);

t.test('renderings shared by upstream bytes', async (t) => {
  if (!(await needServices(t, ['postgres']))) return;
  const sim = await new DaiHostSim().start();
  t.teardown(() => sim.stop());
  // Stable settings objects, as the event cache holds them: WIN trims to a window, PLAIN passes through.
  const win = { eventId: 71, windowSegs: 5, liveEdgeDelaySegments: 1 };
  const wide = { eventId: 72, windowSegs: 8, liveEdgeDelaySegments: 0 };
  const plain = { windowSegs: 0, liveEdgeDelaySegments: 0 };
  const events = {
    generation: 0,
    forAssetKey: (k: string | undefined) => (k === 'WIN' ? win : k === 'WIDE' ? wide : plain),
  };
  const service = await startTestService(
    t,
    { databaseUrl: await freshSchemaUrl(t), daiHost: sim.url, contentOrigin: 'https://origin.example.org' },
    { events },
  );
  const upstreamPath = (asset: string, stream: string) =>
    `/linear/hls/pa/event/${asset}/stream/${stream}:LOC/variant/720p.m3u8`;
  const get = (asset: string, stream: string, query = '') =>
    call(service.url, 'GET', `/dai/manifest${upstreamPath(asset, stream)}${query}`);
  const memoHits = async () =>
    Number(/^dai_manifest_render_memo_hits_total (\d+)/m.exec((await call(service.url, 'GET', '/metrics')).text)?.[1]);

  for (const asset of ['WIN', 'PLAIN']) {
    await t.test(`${asset}: three streams, one upstream playlist`, async (t) => {
      for (const s of ['a', 'b', 'c', 'd'])
        sim.fixed.set(upstreamPath(asset, `${asset}${s}`), { body: rootRelative(100) });
      const before = await memoHits();
      const answers: Awaited<ReturnType<typeof get>>[] = [];
      for (const s of ['a', 'b', 'c', 'd']) answers.push(await get(asset, `${asset}${s}`, `?session=${s}`));
      t.ok(
        answers.every((a) => a.status === 200),
        'all answered',
      );
      t.ok(
        answers.every((a) => a.text === answers[0]!.text),
        'the same body for every stream',
      );
      t.ok(
        answers.every((a) => a.headers['etag'] === answers[0]!.headers['etag']),
        'and the same ETag',
      );
      t.match(answers[0]!.text, /^https:\/\/origin\.example\.org\/content\/720p\/seg_\d+\.ts$/m, 'rewritten');
      const kept = answers[0]!.text.split('#EXTINF').length - 1;
      t.equal(kept, asset === 'WIN' ? 5 : 20, 'trimmed as the settings say');
      t.equal((await memoHits()) - before, 2, 'the third and fourth streams were answered from the memo');
    });
  }

  await t.test('other settings, other bytes: renderings of their own', async (t) => {
    sim.fixed.set(upstreamPath('WIDE', 'wa'), { body: rootRelative(100) });
    const wideOut = await get('WIDE', 'wa');
    t.equal(wideOut.text.split('#EXTINF').length - 1, 8, "the wider event's window, not the memoised one of WIN");
    // The same length and the same last line as WIN's playlist: the bytes, not the fingerprint, decide.
    const twin = rootRelative(100).replace('seg_115.ts', 'seg_1x5.ts');
    t.equal(twin.length, rootRelative(100).length);
    sim.fixed.set(upstreamPath('WIN', 'WINe'), { body: twin });
    t.match((await get('WIN', 'WINe')).text, /seg_1x5\.ts$/m, "the twin's own segments");
  });

  await t.test('a playlist naming its segments relative to itself is never shared', async (t) => {
    for (const s of ['r1', 'r2', 'r3']) sim.fixed.set(upstreamPath('PLAIN', s), { body: relative(200) });
    const before = await memoHits();
    for (const s of ['r1', 'r2', 'r3']) {
      const out = (await get('PLAIN', s)).text;
      t.match(
        out,
        new RegExp(`^${sim.url}/linear/hls/pa/event/PLAIN/stream/${s}:LOC/variant/seg_200\\.ts$`, 'm'),
        `${s}: resolved against its own playlist`,
      );
    }
    t.equal(await memoHits(), before, 'no memo hit');
  });

  await t.test('a new upstream version is rendered anew', async (t) => {
    for (const s of ['n1', 'n2', 'n3']) sim.fixed.set(upstreamPath('PLAIN', s), { body: rootRelative(300) });
    for (const s of ['n1', 'n2', 'n3']) await get('PLAIN', s);
    sim.fixed.set(upstreamPath('PLAIN', 'n4'), { body: rootRelative(301) });
    const next = await get('PLAIN', 'n4');
    t.match(next.text, /#EXT-X-MEDIA-SEQUENCE:301/);
    t.match(next.text, /seg_320\.ts$/m, 'the new last segment');
  });
});
