/**
 * Issue 30.5: a squeeze break's ads fit it. The ad server (lib/sim/ad-server.ts, a real HTTP
 * server) answers a VOD-style VMAP with a pre-, a mid- and a post-roll break, each holding every
 * ad; the decider resolves it as the service does (lib/app.ts: resolveAds with liveBreakSelector).
 */
import t from 'tap';
import { request } from 'undici';
import { AdServerSim } from '../../../lib/sim/ad-server.js';
import { liveBreakSelector, resolveAds } from '../../../lib/ads/resolve.js';
import { AdDecider, fitAds, type DecideInput } from '../../../lib/squeeze/breaks/decide.js';
import type { DecidedAd } from '../../../lib/ads/types.js';
import type { Logger } from '../../../lib/log/index.js';

const fetchText = async (url: string, signal: AbortSignal) => (await request(url, { signal })).body.text();
const sum = (ads: DecidedAd[]) => ads.reduce((s, a) => s + a.durationSec, 0);

t.test('a break fills from one VMAP break and its ads never sum to more than the break', async (t) => {
  const ads = await new AdServerSim({
    ads: [
      { id: 'ad-1', durationSec: 10 },
      { id: 'ad-2', durationSec: 10 },
      { id: 'ad-3', durationSec: 6 },
      { id: 'ad-4', durationSec: 4 },
    ],
    breaks: ['start', '00:05:00', 'end'],
  }).start();
  t.teardown(() => ads.stop());
  const warnings: unknown[] = [];
  const log = {
    warn: (obj: unknown) => warnings.push(obj),
    info: () => undefined,
    error: () => undefined,
  } as unknown as Logger;
  const decider = new AdDecider({
    configuredAds: async () => [],
    resolve: (url, want) => resolveAds({ url }, fetchText, { log, selectBreaks: liveBreakSelector(want?.abid) }),
    log,
  });
  const input = (over: Partial<DecideInput>): DecideInput => ({
    eventId: 1,
    breakId: 'b1',
    durationSec: 24,
    adRequest: { adServerUrl: `${ads.url}/ad`, adTag: { params: {} }, assetId: 'A', caid: 'A' },
    ...over,
  });

  // What the ad server answers: three breaks of 30 s each.
  const all = await resolveAds({ url: `${ads.url}/ad` }, fetchText, { log });
  t.equal(all.ads.length, 12, 'every break, unselected');
  t.same([...new Set(all.ads.map((a) => a.adBreak?.breakId))], ['preroll', 'midroll-1', 'postroll']);

  const d = await decider.forEvent(input({}));
  t.equal(d.source, 'vmap');
  const chosen = d.assignments[0]!.ads;
  t.same(
    chosen.map((a) => a.adBreak?.breakId),
    ['midroll-1', 'midroll-1', 'midroll-1'],
    'the mid-roll only (no abid names a break)',
  );
  t.same(
    chosen.map((a) => a.durationSec),
    [10, 10, 4],
    'ad-3 (6 s) would overrun 24 s: skipped, and ad-4 (4 s) fills the rest',
  );
  t.ok(sum(chosen) <= 24, `${sum(chosen)} s of ads in a 24 s break`);

  const named = await decider.forEvent(input({ abid: 'postroll', durationSec: 20 }));
  t.same(
    named.assignments[0]!.ads.map((a) => `${a.adBreak?.breakId}:${a.durationSec}`),
    ['postroll:10', 'postroll:10'],
    'the break whose breakId is the abid',
  );

  const perStream = await decider.forStreams(input({ durationSec: 12 }), [{ streamId: 'S1', targeting: { a: '1' } }]);
  const streamAds = perStream.assignments[0]!.ads;
  t.same(
    streamAds.map((a) => a.durationSec),
    [10],
    'a DAI stream’s decision too: 10 s, as no other ad fits the 2 s left',
  );
  t.ok(sum(streamAds) <= 12);
});

t.test('fitAds: never more than the break, in order, skipping what overruns; 50 ms of rounding allowed', async (t) => {
  const ad = (durationSec: number, n = 0): DecidedAd => ({
    adId: `a${n}`,
    creativeId: `c${n}`,
    uri: `https://m.example.com/${n}.mp4`,
    durationSec,
    tracking: {},
  });
  t.same(
    fitAds([ad(15, 1), ad(15.03, 2), ad(10, 3)], 30).map((a) => a.adId),
    ['a1', 'a2'],
    '15 + 15.03 fits 30 within the rounding',
  );
  t.same(
    fitAds([ad(20, 1), ad(15, 2), ad(5, 3), ad(5, 4)], 30).map((a) => a.adId),
    ['a1', 'a3', 'a4'],
  );
  t.same(fitAds([ad(31, 1)], 30), [], 'one ad longer than the break: none');
  t.same(
    fitAds([ad(0, 1), ad(Number.NaN, 2), ad(5, 3)], 30).map((a) => a.adId),
    ['a3'],
    'ads without a duration cannot be placed',
  );
  for (const len of [6, 12, 24, 30, 45]) {
    const got = fitAds(
      [10, 10, 6, 4, 15, 30].map((d, i) => ad(d, i)),
      len,
    );
    t.ok(sum(got) <= len + 0.05, `${len} s: ${sum(got)} s of ads`);
  }
});
