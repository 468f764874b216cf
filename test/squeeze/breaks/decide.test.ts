import t from 'tap';
import { buildAdRequestUrl } from '../../../lib/ads/ad-request.js';
import type { DecidedAd } from '../../../lib/ads/types.js';
import type { Logger } from '../../../lib/log/index.js';
import {
  AdDecider,
  type DecideInput,
  type DeciderDeps,
  type ResolveFn,
  type StreamTargeting,
} from '../../../lib/squeeze/breaks/decide.js';
import { assignmentKey, type CuratedCandidate } from '../../../lib/squeeze/breaks/plan.js';

const AD_SERVER = 'https://ads.example.com/ad/g/1';

const cand = (
  id: number,
  abid: string,
  duration: number,
  is_curated: boolean,
  geo: string | null = null,
): CuratedCandidate => ({
  id,
  abid,
  ad_uri: `https://cdn.example.com/${abid}.mp4`,
  duration,
  geo_lang_loc: geo,
  is_curated,
});

const input = (over: Partial<DecideInput> = {}): DecideInput => ({
  eventId: 7,
  breakId: 'brk-1',
  durationSec: 30,
  adRequest: { adServerUrl: AD_SERVER, adTag: { params: { nw: 42 } }, assetId: 'asset-1', caid: 'caid-1' },
  ...over,
});

/** Plain in-test collaborators: configured ads by event, an ad resolver, a logger that records warnings. */
function deps(configured: CuratedCandidate[], resolve: ResolveFn, extra: Partial<DeciderDeps> = {}) {
  const warnings: unknown[] = [];
  const configuredCalls: number[] = [];
  const urls: string[] = [];
  const log = { warn: (obj: unknown, msg?: string) => warnings.push([obj, msg]) } as unknown as Logger;
  const d: DeciderDeps = {
    configuredAds: async (eventId) => {
      configuredCalls.push(eventId);
      return eventId === 7 ? configured : [];
    },
    resolve: async (url) => {
      urls.push(url);
      return resolve(url);
    },
    log,
    ...extra,
  };
  return { decider: new AdDecider(d), warnings, configuredCalls, urls };
}

const vastAd = (name: string, durationSec: number, tracking: DecidedAd['tracking'] = {}): DecidedAd => ({
  adId: name,
  creativeId: `cr-${name}`,
  uri: `https://media.example.com/${name}.mp4`,
  durationSec,
  tracking,
});

/** The decoded key-values (third ;-section) of an ad request URL. */
const kv = (url: string) =>
  Object.fromEntries(
    (url.split('?')[1]!.split(';')[2] ?? '')
      .split('&')
      .filter(Boolean)
      .map((p) => p.split('=').map(decodeURIComponent) as [string, string]),
  );
const globals = (url: string) =>
  Object.fromEntries(
    url
      .split('?')[1]!
      .split(';')[0]!
      .split('&')
      .map((p) => p.split('=').map(decodeURIComponent) as [string, string]),
  );

const never: ResolveFn = async () => {
  throw new Error('resolve must not be called');
};

t.test('forEvent: curated ads first', async (t) => {
  const ads = [cand(1, 'cur-a', 15, true, 'us-en'), cand(2, 'cur-b', 20, true), cand(3, 'plain', 30, false)];
  const { decider, urls, configuredCalls } = deps(ads, never);
  const d = await decider.forEvent(input());
  t.equal(d.source, 'curated');
  t.equal(d.reason, undefined);
  t.equal(d.assignments.length, 1);
  const want = [
    { adId: '2', creativeId: 'cur-b', uri: 'https://cdn.example.com/cur-b.mp4', durationSec: 20, tracking: {} },
    { adId: '1', creativeId: 'cur-a', uri: 'https://cdn.example.com/cur-a.mp4', durationSec: 15, tracking: {} },
  ];
  t.same(
    d.assignments[0],
    { key: assignmentKey(want), source: 'curated', ads: want },
    'longest curated first until 30 s are covered; the non-curated ad is not used',
  );
  t.equal(d.defaultKey, d.assignments[0]!.key);
  t.same(d.streamAssignments, {});
  t.same(d.streamTracking, {});
  t.same(urls, [], 'no ad request');
  t.same(configuredCalls, [7]);

  const withAbid = await decider.forEvent(input({ abid: 'cur-a', geo: 'us-en' }));
  t.same(
    withAbid.assignments[0]!.ads.map((a) => a.adId),
    ['1'],
    'the abid picks its ad',
  );
  const otherGeo = await decider.forEvent(input({ geo: 'fr-fr' }));
  t.same(
    otherGeo.assignments[0]!.ads.map((a) => a.adId),
    ['2'],
    'a geo-less curated ad serves any geo',
  );
});

t.test('forEvent: no curated match → the ad server', async (t) => {
  const tracked = vastAd('v1', 15, {
    impression: ['https://t.example.com/imp'],
    complete: ['https://t.example.com/done'],
  });
  const ads = [cand(1, 'cur-a', 15, true, 'us-en'), cand(3, 'plain', 30, false)];
  const { decider, urls } = deps(ads, async () => ({ ads: [tracked, vastAd('v2', 15)], reason: 'one wrapper failed' }));
  const inp = input({ abid: 'cur-a', geo: 'fr-fr' });
  const d = await decider.forEvent(inp);
  t.equal(d.source, 'vmap');
  t.equal(d.reason, 'one wrapper failed', 'the resolver’s reason is kept');
  t.same(
    d.assignments,
    [{ key: assignmentKey([tracked, vastAd('v2', 15)]), source: 'vmap', ads: [tracked, vastAd('v2', 15)] }],
    'the event decision keeps the tracking',
  );
  t.equal(d.defaultKey, d.assignments[0]!.key);
  t.same(
    urls,
    [buildAdRequestUrl({ ...inp.adRequest, breakId: 'brk-1', durationSec: 30, targeting: {}, abid: 'cur-a' })],
    'one request, built from the event context and the break’s abid',
  );
  t.ok(urls[0]!.endsWith(';abid=cur-a'), 'the abid as a key-value');
  t.match(globals(urls[0]!), { nw: '42', caid: 'caid-1', csid: 'asset-1', resp: 'vmap1' });

  const none = deps([], async () => ({ ads: [vastAd('v3', 30)] }));
  const d2 = await none.decider.forEvent(input());
  t.equal(d2.source, 'vmap');
  t.equal(d2.reason, undefined);
});

t.test('forEvent: the ad server yields nothing → non-curated fallback, with the reason', async (t) => {
  const ads = [
    cand(1, 'cur-a', 15, true, 'us-en'),
    cand(3, 'fb-long', 20, false),
    cand(4, 'fb-short', 10, false, 'fr-fr'),
    cand(5, 'fb-de', 30, false, 'de-de'),
  ];
  const fbAds = ['3', '4'];

  const empty = deps(ads, async () => ({ ads: [], reason: 'VMAP had no linear break' }));
  const d1 = await empty.decider.forEvent(input({ geo: 'fr-fr' }));
  t.equal(d1.source, 'fallback');
  t.same(
    d1.assignments.map((a) => [a.source, a.ads.map((x) => x.adId)]),
    [['fallback', fbAds]],
    'non-curated ads of the geo, longest first',
  );
  t.equal(d1.defaultKey, d1.assignments[0]!.key);
  t.equal(d1.reason, 'VMAP had no linear break; configured fallback used');

  const silent = deps(ads, async () => ({ ads: [] }));
  t.equal(
    (await silent.decider.forEvent(input({ geo: 'fr-fr' }))).reason,
    'the ad server returned no ads; configured fallback used',
  );

  const throwing = deps(ads, async () => {
    throw new Error('ECONNRESET');
  });
  const d3 = await throwing.decider.forEvent(input({ geo: 'fr-fr' }));
  t.equal(d3.source, 'fallback');
  t.match(d3.reason, /ad request failed/);
  t.equal(d3.reason, 'ad request failed; configured fallback used');
  t.equal(throwing.warnings.length, 1, 'the failure is logged');
  t.match(throwing.warnings[0], [{ err: 'ECONNRESET' }, 'ad request failed']);

  const noServer = deps(ads, never);
  const d4 = await noServer.decider.forEvent(
    input({ geo: 'fr-fr', adRequest: { adServerUrl: '', adTag: {}, assetId: 'asset-1' } }),
  );
  t.equal(d4.source, 'fallback');
  t.equal(d4.reason, 'no ad server configured; configured fallback used');
  t.same(noServer.urls, [], 'no request without an ad server');

  const abid = deps(ads, async () => ({ ads: [] }));
  const d5 = await abid.decider.forEvent(input({ abid: 'fb-de', geo: 'fr-fr' }));
  t.same(
    d5.assignments[0]!.ads.map((a) => a.adId),
    fbAds,
    'the abid does not narrow the fallback; the geo does',
  );
});

t.test('forEvent: nothing at all → none', async (t) => {
  const { decider } = deps([cand(1, 'cur-a', 15, true, 'us-en')], async () => ({ ads: [], reason: 'empty VAST' }));
  const d = await decider.forEvent(input({ geo: 'fr-fr' }));
  t.same(d, {
    assignments: [],
    defaultKey: undefined,
    streamAssignments: {},
    streamTracking: {},
    source: 'none',
    reason: 'empty VAST; no fallback ads configured',
  });
  const d2 = await deps([], async () => {
    throw new Error('x');
  }).decider.forEvent(input());
  t.equal(d2.source, 'none');
  t.equal(d2.reason, 'ad request failed; no fallback ads configured');
});

/** A resolver answering by the stream's `seg` key-value, with tracking naming the stream. */
const bySegment: ResolveFn = async (url) => {
  const { seg, sid } = kv(url);
  const track = (ad: string) => ({
    impression: [`https://t.example.com/imp?ad=${ad}&s=${sid}`],
    complete: [`https://t.example.com/done?ad=${ad}&s=${sid}`],
  });
  if (seg === 'a') return { ads: [vastAd('A1', 15, track('A1')), vastAd('A2', 15, track('A2'))] };
  if (seg === 'b') return { ads: [vastAd('B1', 30, track('B1'))] };
  return { ads: [], reason: `no ads for ${seg}` };
};

const stream = (sid: string, seg: string, n: number): StreamTargeting => ({
  streamId: sid,
  targeting: { seg, sid },
  vprn: `v${n}`,
  pvrn: `p${n}`,
});

t.test('forStreams: curated first, no per-stream requests', async (t) => {
  const { decider, urls } = deps([cand(1, 'cur', 30, true)], never);
  const d = await decider.forStreams(input(), [stream('s1', 'a', 1), stream('s2', 'b', 2)]);
  t.equal(d.source, 'curated');
  t.same(d.streamAssignments, { s1: d.assignments[0]!.key, s2: d.assignments[0]!.key }, 'each chosen stream named');
  t.equal(d.defaultKey, undefined, 'no default: other streams of the event are not squeezed');
  t.same(urls, []);
});

t.test('forStreams: identical creatives share one assignment; tracking stays per stream', async (t) => {
  const { decider, urls } = deps([cand(9, 'fb', 30, false)], bySegment);
  const streams = [stream('s1', 'a', 1), stream('s2', 'a', 2), stream('s3', 'b', 3), stream('s4', 'a', 4)];
  const d = await decider.forStreams(input(), streams);
  t.equal(d.source, 'vmap');
  t.equal(d.reason, undefined);
  t.equal(d.defaultKey, undefined, 'every stream decided: no default');
  const keyA = assignmentKey([vastAd('A1', 15), vastAd('A2', 15)]);
  const keyB = assignmentKey([vastAd('B1', 30)]);
  t.not(keyA, keyB);
  t.same(d.streamAssignments, { s1: keyA, s2: keyA, s3: keyB, s4: keyA });
  t.equal(d.assignments.length, 2, 'two distinct creative sets, the fallback not added');
  const a = d.assignments.find((x) => x.key === keyA)!;
  t.same(
    a,
    { key: keyA, source: 'vmap', ads: [vastAd('A1', 15), vastAd('A2', 15)] },
    'shared creatives carry no tracking',
  );
  t.ok(d.assignments.every((x) => x.ads.every((ad) => Object.keys(ad.tracking).length === 0)));
  t.same(Object.keys(d.streamTracking).sort(), ['s1', 's2', 's3', 's4']);
  t.same(
    d.streamTracking['s2'],
    [
      { impression: ['https://t.example.com/imp?ad=A1&s=s2'], complete: ['https://t.example.com/done?ad=A1&s=s2'] },
      { impression: ['https://t.example.com/imp?ad=A2&s=s2'], complete: ['https://t.example.com/done?ad=A2&s=s2'] },
    ],
    'index-aligned with the assignment’s ads, the stream’s own URLs',
  );
  t.same(d.streamTracking['s3'], [
    { impression: ['https://t.example.com/imp?ad=B1&s=s3'], complete: ['https://t.example.com/done?ad=B1&s=s3'] },
  ]);
  t.not(
    d.streamTracking['s1']![0]!.impression![0],
    d.streamTracking['s4']![0]!.impression![0],
    'streams sharing creatives keep different tracking',
  );
  t.equal(urls.length, 4, 'one ad request per stream');
  const sorted = [...urls].sort((x, y) => kv(x)['sid']!.localeCompare(kv(y)['sid']!));
  t.same(
    sorted.map((u) => [kv(u)['sid'], globals(u)['vprn'], globals(u)['pvrn']]),
    [
      ['s1', 'v1', 'p1'],
      ['s2', 'v2', 'p2'],
      ['s3', 'v3', 'p3'],
      ['s4', 'v4', 'p4'],
    ],
    'each request carries the stream’s targeting, vprn and pvrn',
  );
});

t.test('forStreams: streams without ads get the fallback default, the reason counts them', async (t) => {
  const resolve: ResolveFn = async (url) => {
    const { sid } = kv(url);
    if (sid === 's3') throw new Error('boom');
    return bySegment(url);
  };
  const { decider, warnings } = deps([cand(9, 'fb', 30, false)], resolve);
  const d = await decider.forStreams(input(), [
    stream('s1', 'a', 1),
    stream('s2', 'zz', 2),
    stream('s3', 'a', 3),
    stream('s4', 'b', 4),
  ]);
  t.equal(d.source, 'vmap', 'some streams decided by the ad server');
  const fbKey = assignmentKey([{ uri: 'https://cdn.example.com/fb.mp4', durationSec: 30 }]);
  t.equal(d.defaultKey, undefined, 'no default');
  t.same(d.assignments.map((a) => a.source).sort(), ['fallback', 'vmap', 'vmap']);
  t.same(Object.keys(d.streamAssignments).sort(), ['s1', 's2', 's3', 's4'], 'every chosen stream named');
  t.equal(d.streamAssignments['s2'], fbKey, 'undecided streams get the fallback');
  t.equal(d.streamAssignments['s3'], fbKey);
  t.same(Object.keys(d.streamTracking).sort(), ['s1', 's4']);
  t.equal(
    d.reason,
    '2 of 4 streams without an ad decision (no ads for zz; ad request failed); configured fallback used',
  );
  t.equal(warnings.length, 1);

  const noFb = deps([], bySegment);
  const d2 = await noFb.decider.forStreams(input(), [stream('s1', 'a', 1), stream('s2', 'zz', 2)]);
  t.equal(d2.source, 'vmap');
  t.equal(d2.defaultKey, undefined);
  t.equal(d2.assignments.length, 1);
  t.equal(d2.reason, '1 of 2 streams without an ad decision (no ads for zz); no fallback configured');
});

t.test('forStreams: nothing decided', async (t) => {
  const withFb = deps([cand(9, 'fb', 30, false)], async () => ({ ads: [] }));
  const d = await withFb.decider.forStreams(input(), [
    stream('s1', 'a', 1),
    stream('s2', 'b', 2),
    stream('s3', 'c', 3),
  ]);
  t.equal(d.source, 'fallback');
  t.same(
    d.assignments.map((a) => a.source),
    ['fallback'],
  );
  t.equal(d.defaultKey, undefined);
  t.same(d.streamAssignments, { s1: d.assignments[0]!.key, s2: d.assignments[0]!.key, s3: d.assignments[0]!.key });
  t.equal(
    d.reason,
    '3 of 3 streams without an ad decision (the ad server returned no ads); configured fallback used',
    'one reason however many streams share it',
  );

  const bare = deps([cand(1, 'cur', 30, true, 'de-de')], async () => ({ ads: [] }));
  const d2 = await bare.decider.forStreams(input({ geo: 'us-en' }), [stream('s1', 'a', 1)]);
  t.same(d2, {
    assignments: [],
    defaultKey: undefined,
    streamAssignments: {},
    streamTracking: {},
    source: 'none',
    reason: '1 of 1 streams without an ad decision (the ad server returned no ads); no fallback configured',
  });

  const noServer = deps([], never);
  const d3 = await noServer.decider.forStreams(input({ adRequest: { adServerUrl: '', adTag: {}, assetId: 'a' } }), [
    stream('s1', 'a', 1),
    stream('s2', 'a', 2),
  ]);
  t.equal(d3.source, 'none');
  t.equal(d3.reason, '2 of 2 streams without an ad decision (no ad server configured); no fallback configured');
  t.same(noServer.urls, []);

  const zero = deps([cand(9, 'fb', 30, false)], never);
  const d4 = await zero.decider.forStreams(input(), []);
  t.equal(d4.source, 'fallback', 'no streams: nothing to name');
  t.same(d4.streamAssignments, {});
  t.equal(d4.reason, '0 of 0 streams without an ad decision (no streams); configured fallback used');
});

t.test('forStreams: a stream’s own geo_lang_loc picks its curated ads; client IPs reach the ad request', async (t) => {
  const ads = [cand(1, 'cur-us', 30, true, 'us-en'), cand(2, 'cur-fr', 30, true, 'fr-fr')];
  const { decider, urls } = deps(ads, async () => ({ ads: [vastAd('v1', 30)] }));
  const us = { streamId: 's-us', targeting: { geo_lang_loc: 'us-en' } };
  const de = { streamId: 's-de', targeting: { geo_lang_loc: 'de-de' }, clientIp: '203.0.113.9' };
  const d = await decider.forStreams(input(), [us, de]);
  t.equal(d.source, 'vmap');
  const usAds = d.assignments.find((a) => a.key === d.streamAssignments['s-us']);
  t.equal(usAds?.source, 'curated');
  t.equal(usAds?.ads[0]?.uri, ads[0]!.ad_uri, 'the US stream gets the US curated ad');
  t.equal(
    d.assignments.find((a) => a.key === d.streamAssignments['s-de'])?.source,
    'vmap',
    'no curated ad for de-de: the ad server decides',
  );
  t.equal(urls.length, 1, 'one ad request: only the stream without curated ads');
  t.equal(globals(urls[0]!)['vip'], '203.0.113.9', 'the stream’s client IP as vip');
});

t.test('forStreams: streams slower than the deadline are left undecided', async (t) => {
  const release: Array<() => void> = [];
  t.teardown(() => release.forEach((r) => r()));
  const resolve: ResolveFn = async (url) => {
    const { sid } = kv(url);
    // Never in time (a ref'd timer: the deadline's own timer is unref'd and would not keep the test alive).
    if (sid === 's2' || sid === 's4')
      await new Promise<void>((r) => {
        const timer = setTimeout(r, 10_000);
        release.push(() => {
          clearTimeout(timer);
          r();
        });
      });
    return bySegment(url);
  };
  const { decider } = deps([cand(9, 'fb', 30, false)], resolve, { deadlineMs: 120 });
  const started = Date.now();
  const d = await decider.forStreams(input(), [
    stream('s1', 'a', 1),
    stream('s2', 'a', 2),
    stream('s3', 'b', 3),
    stream('s4', 'b', 4),
    stream('s5', 'a', 5),
  ]);
  const took = Date.now() - started;
  t.ok(took >= 100 && took < 1000, `answered at the deadline (${took} ms)`);
  t.same(Object.keys(d.streamTracking).sort(), ['s1', 's3', 's5'], 'the fast streams are decided');
  t.equal(d.source, 'vmap');
  const fbKey = assignmentKey([{ uri: 'https://cdn.example.com/fb.mp4', durationSec: 30 }]);
  t.equal(d.defaultKey, undefined);
  t.same([d.streamAssignments['s2'], d.streamAssignments['s4']], [fbKey, fbKey], 'the slow ones get the fallback');
  t.ok(d.assignments.some((a) => a.key === fbKey && a.source === 'fallback'));
  t.equal(
    d.reason,
    '2 of 5 streams without an ad decision (some ad requests missed the deadline); configured fallback used',
  );
});

t.test('forStreams: streams not started before the deadline are undecided too', async (t) => {
  const { decider, urls } = deps(
    [],
    async (url) => {
      await new Promise((r) => setTimeout(r, 40));
      return bySegment(url);
    },
    { concurrency: 1, deadlineMs: 100 },
  );
  const streams = Array.from({ length: 10 }, (_, i) => stream(`s${i}`, 'a', i));
  const d = await decider.forStreams(input(), streams);
  const decided = Object.keys(d.streamAssignments).length;
  t.ok(decided >= 1 && decided <= 3, `one at a time within 100 ms (${decided} decided)`);
  t.ok(urls.length <= 4, `no request started after the deadline (${urls.length})`);
  t.equal(
    d.reason,
    `${10 - decided} of 10 streams without an ad decision (some ad requests missed the deadline); no fallback configured`,
  );
});

t.test('forStreams: the concurrency bound is respected', async (t) => {
  const probe = () => {
    let open = 0;
    let max = 0;
    const resolve: ResolveFn = async (url) => {
      max = Math.max(max, ++open);
      await new Promise((r) => setTimeout(r, 15));
      open--;
      return bySegment(url);
    };
    return { resolve, max: () => max };
  };
  const p3 = probe();
  const { decider } = deps([], p3.resolve, { concurrency: 3 });
  const d = await decider.forStreams(
    input(),
    Array.from({ length: 12 }, (_, i) => stream(`s${i}`, i % 2 ? 'a' : 'b', i)),
  );
  t.equal(p3.max(), 3, 'three requests at most at once');
  t.equal(Object.keys(d.streamAssignments).length, 12, 'all decided');
  t.equal(d.assignments.length, 2, 'two creative sets shared by twelve streams');
  t.equal(d.reason, undefined);

  const p16 = probe();
  const d16 = await deps([], p16.resolve).decider.forStreams(
    input(),
    Array.from({ length: 40 }, (_, i) => stream(`s${i}`, 'a', i)),
  );
  t.equal(p16.max(), 16, 'default bound 16');
  t.equal(Object.keys(d16.streamAssignments).length, 40);

  const p1 = probe();
  await deps([], p1.resolve, { concurrency: 50 }).decider.forStreams(input(), [
    stream('s1', 'a', 1),
    stream('s2', 'a', 2),
  ]);
  t.equal(p1.max(), 2, 'never more workers than streams');
});

t.test('forStreams: finished requests leave no abort listener behind', async (t) => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  const { decider } = deps([], bySegment, { concurrency: 2 });
  const d = await decider.forStreams(
    input(),
    Array.from({ length: 30 }, (_, i) => stream(`s${i}`, 'a', i)),
  );
  t.equal(Object.keys(d.streamAssignments).length, 30);
  await new Promise((r) => setTimeout(r, 20)); // warnings are emitted on a later tick
  t.same(
    warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
    [],
    'no MaxListenersExceededWarning on the deadline signal',
  );
});

t.test("a configured ad's slau reaches the ad request (by the break's abid, then geo)", async (t) => {
  const withSlau = (c: CuratedCandidate, slau: string | null) => ({ ...c, slau });
  const ads = [
    withSlau(cand(1, 'mid-a', 30, false, 'us-en'), 'slot-us'),
    withSlau(cand(2, 'mid-b', 30, false, 'de-de'), 'slot-de'),
    withSlau(cand(3, 'mid-c', 30, false), null),
  ];
  const empty: ResolveFn = async () => ({ ads: [] });
  const slotOf = (url: string) => /[;&]slau=([^&;]*)/.exec(url)?.[1];
  const byAbid = deps(ads, empty);
  await byAbid.decider.forEvent(input({ abid: 'mid-b' }));
  t.equal(slotOf(byAbid.urls[0]!), 'slot-de', 'the abid names the configured ad whose slau is sent');
  const byGeo = deps(ads, empty);
  await byGeo.decider.forEvent(input({ geo: 'us-en' }));
  t.equal(slotOf(byGeo.urls[0]!), 'slot-us', 'without an abid: the first of the geo that has one');
  const perStream = deps(ads, empty);
  await perStream.decider.forStreams(input({ abid: 'mid-a' }), [
    { streamId: 's1', targeting: {} },
    { streamId: 's2', targeting: {} },
  ]);
  t.same(perStream.urls.map(slotOf), ['slot-us', 'slot-us'], 'every stream request of a PUT carries it');
  const none = deps([cand(4, 'x', 30, false)], empty);
  await none.decider.forEvent(input({ abid: 'x' }));
  t.equal(slotOf(none.urls[0]!), undefined, 'no slau configured, none sent');
});
