import t from 'tap';
import type { TrackingEvent } from '../../../lib/ads/types.js';
import {
  animationPhase,
  assignmentKey,
  chooseConfiguredAds,
  configuredToDecided,
  placeOnTimeline,
  planSegments,
  type CuratedCandidate,
  type TrackingPoint,
} from '../../../lib/squeeze/breaks/plan.js';

const pod = (...durations: number[]) => durations.map((durationSec) => ({ durationSec }));

t.test('planSegments: exact multiples', async (t) => {
  const start = Date.UTC(2026, 0, 1, 12);
  const segs = planSegments(start, 30, 6);
  t.equal(segs.length, 5);
  t.same(
    segs,
    [0, 1, 2, 3, 4].map((i) => ({ index: i, startMs: start + i * 6000, durationSec: 6 })),
  );
  t.same(planSegments(0, 12, 4), [
    { index: 0, startMs: 0, durationSec: 4 },
    { index: 1, startMs: 4000, durationSec: 4 },
    { index: 2, startMs: 8000, durationSec: 4 },
  ]);
  // A float error just above a multiple does not add an empty segment.
  t.equal(planSegments(0, 12.0000001, 6).length, 2);
  t.equal(planSegments(0, 0.1 + 0.2, 0.1).length, 3, '0.30000000000000004 / 0.1 is 3 segments');
});

t.test('planSegments: a remainder segment', async (t) => {
  t.same(planSegments(1000, 20, 6), [
    { index: 0, startMs: 1000, durationSec: 6 },
    { index: 1, startMs: 7000, durationSec: 6 },
    { index: 2, startMs: 13000, durationSec: 6 },
    { index: 3, startMs: 19000, durationSec: 2 },
  ]);
  const s = planSegments(0, 30, 5.005);
  t.equal(s.length, 6, 'ceil(30 / 5.005)');
  t.same(
    s.map((x) => x.startMs),
    [0, 5005, 10010, 15015, 20020, 25025],
    'start times rounded to the ms without drift',
  );
  t.same(
    s.slice(0, 5).map((x) => x.durationSec),
    [5.005, 5.005, 5.005, 5.005, 5.005],
  );
  t.equal(s[5]!.durationSec, 4.975);

  for (const [dur, seg] of [
    [30, 6],
    [31, 6],
    [25, 5.005],
    [60.06, 6.006],
    [7, 2],
    [1, 10],
    [119.5, 4],
  ] as const) {
    const p = planSegments(0, dur, seg);
    t.equal(p.length, Math.ceil(dur / seg - 1e-6), `${dur}/${seg}: count`);
    const sum = p.reduce((a, x) => a + x.durationSec, 0);
    t.ok(Math.abs(sum - dur) < 1e-3 * p.length, `${dur}/${seg}: durations add up (${sum})`);
    t.ok(
      p.every(
        (x, i) =>
          x.index === i && x.durationSec > 0 && x.durationSec <= seg && x.startMs === Math.round(i * seg * 1000),
      ),
      `${dur}/${seg}: indexes, starts and durations`,
    );
  }
});

t.test('planSegments: tiny durations', async (t) => {
  t.same(
    planSegments(5000, 0.001, 6),
    [{ index: 0, startMs: 5000, durationSec: 0.001 }],
    'a 1 ms break is one short segment',
  );
  t.same(planSegments(5000, 0.5, 6), [{ index: 0, startMs: 5000, durationSec: 0.5 }]);
  t.same(planSegments(5000, 0, 6), [], 'a break terminated before it began plans nothing (no zero-length segment)');
  t.same(planSegments(0, 6.001, 6), [
    { index: 0, startMs: 0, durationSec: 6 },
    { index: 1, startMs: 6000, durationSec: 0.001 },
  ]);
  // A remainder below the millisecond resolution of the plan.
  const p = planSegments(0, 6.0004, 6);
  t.ok(
    p.every((x) => x.durationSec > 0),
    'no planned segment has a zero duration',
  );
});

/** Time in the break of every tracking point of a pod (impression/start at 0, quartiles, complete at the end). */
function expectedPoints(durations: number[]): Array<TrackingPoint & { at: number; end: boolean }> {
  const out: Array<TrackingPoint & { at: number; end: boolean }> = [];
  let s = 0;
  durations.forEach((d, ad) => {
    const fr: Array<[TrackingEvent, number]> = [
      ['impression', 0],
      ['start', 0],
      ['firstQuartile', 0.25],
      ['midpoint', 0.5],
      ['thirdQuartile', 0.75],
    ];
    for (const [event, f] of fr) out.push({ ad, event, at: s + f * d, end: false });
    out.push({ ad, event: 'complete', at: s + d, end: true });
    s += d;
  });
  return out;
}

t.test('placeOnTimeline: ad index and offset across ad boundaries', async (t) => {
  const ads = pod(15, 10);
  t.same(placeOnTimeline(ads, 0, 6), {
    adIndex: 0,
    adOffsetSec: 0,
    events: [
      { ad: 0, event: 'impression' },
      { ad: 0, event: 'start' },
      { ad: 0, event: 'firstQuartile' },
    ],
  });
  t.same(
    placeOnTimeline(ads, 14, 2),
    {
      adIndex: 0,
      adOffsetSec: 14,
      events: [
        { ad: 0, event: 'complete' },
        { ad: 1, event: 'impression' },
        { ad: 1, event: 'start' },
      ],
    },
    'a segment straddling the boundary belongs to the ad it starts in and carries both sides’ points',
  );
  t.same(placeOnTimeline(ads, 15, 2), {
    adIndex: 1,
    adOffsetSec: 0,
    events: [
      { ad: 1, event: 'impression' },
      { ad: 1, event: 'start' },
    ],
  });
  t.match(
    placeOnTimeline(ads, 14.9999999, 2),
    { adIndex: 1, adOffsetSec: 0 },
    'within a µs of the boundary is the next ad',
  );
  t.match(placeOnTimeline(ads, 18, 6), { adIndex: 1, adOffsetSec: 3 });
  t.same(placeOnTimeline(ads, 24, 2), { adIndex: 1, adOffsetSec: 9, events: [{ ad: 1, event: 'complete' }] });
  t.match(placeOnTimeline(pod(6, 6, 6), 12, 6), { adIndex: 2, adOffsetSec: 0 });
  t.match(placeOnTimeline(pod(6, 6, 6), 10.01, 5.005), { adIndex: 1, adOffsetSec: 4.01 });
  t.match(placeOnTimeline(pod(7.5), 5.005, 5.005), { adIndex: 0, adOffsetSec: 5.005 });
});

t.test('placeOnTimeline: single-segment checks of each tracking point', async (t) => {
  const ads = pod(30);
  const at = (offset: number, seg = 6) => placeOnTimeline(ads, offset, seg).events.map((e) => e.event);
  t.same(at(0), ['impression', 'start']);
  t.same(at(6), ['firstQuartile'], '7.5 s in [6, 12)');
  t.same(at(12), ['midpoint'], '15 s in [12, 18)');
  t.same(at(18), ['thirdQuartile'], '22.5 s in [18, 24)');
  t.same(at(24), ['complete'], 'end of the ad in [24, 30)');
  t.same(at(7.5, 1), ['firstQuartile'], 'a point at a segment start belongs to it');
  t.same(at(6.5, 1), [], '7.5 is not in [6.5, 7.5)');
  t.same(at(29.5, 0.5), ['complete'], 'complete in the last half second');
  t.same(at(29, 0.5), [], 'not before it');
});

/** Walks consecutive segments of `segSec` over `spanSec` of the break and collects what each fires. */
function walk(durations: number[], segSec: number, spanSec: number) {
  return planSegments(0, spanSec, segSec).map((p) => {
    const offset = p.startMs / 1000;
    return { offset, durationSec: p.durationSec, place: placeOnTimeline(pod(...durations), offset, p.durationSec) };
  });
}

t.test('placeOnTimeline: walking a pod fires every point of every ad exactly once, in the right segment', async (t) => {
  const pods = [[15, 10], [30], [6, 6, 6], [7.5, 20, 2.5], [5.005, 10.01]];
  const lengths = [2, 4, 6, 5.005, 1, 10, 0.5];
  for (const durations of pods) {
    const total = durations.reduce((a, b) => a + b, 0);
    for (const segSec of lengths) {
      const name = `[${durations}] @ ${segSec}s`;
      const segs = walk(durations, segSec, total);
      const fired = new Map<string, number[]>();
      segs.forEach((s, i) => {
        for (const e of s.place.events)
          fired.set(`${e.ad}/${e.event}`, [...(fired.get(`${e.ad}/${e.event}`) ?? []), i]);
      });
      const expected = expectedPoints(durations);
      t.equal(fired.size, expected.length, `${name}: ${durations.length * 6} distinct points`);
      let wrong = 0;
      for (const p of expected) {
        const where = fired.get(`${p.ad}/${p.event}`) ?? [];
        // The segment containing the point: [start, start + dur); complete at the ad's end is the segment ending there.
        const want = segs.findIndex((s) =>
          p.end
            ? p.at > s.offset + 1e-9 && p.at <= s.offset + s.durationSec + 1e-9
            : p.at >= s.offset - 1e-9 && p.at < s.offset + s.durationSec - 1e-9,
        );
        if (where.length !== 1 || where[0] !== want) {
          wrong++;
          t.fail(`${name}: ad ${p.ad} ${p.event} at ${p.at} fired in ${JSON.stringify(where)}, expected [${want}]`);
        }
      }
      t.equal(wrong, 0, `${name}: each point once, where it belongs`);
      // Per-segment ad index and offset agree with the pod laid out back to back.
      const bad = segs.filter((s) => {
        let start = 0;
        let i = 0;
        while (i < durations.length - 1 && s.offset >= start + durations[i]! - 1e-6) start += durations[i++]!;
        return s.place.adIndex !== i || Math.abs(s.place.adOffsetSec - (s.offset - start)) > 1e-3;
      });
      t.same(bad, [], `${name}: ad index/offset of every segment`);
    }
  }
});

t.test('placeOnTimeline: a break longer than its pod loops the ads without firing again', async (t) => {
  for (const durations of [[15, 10], [30], [6, 6, 6]]) {
    const total = durations.reduce((a, b) => a + b, 0);
    for (const segSec of [2, 6, 5.005]) {
      const segs = walk(durations, segSec, total * 3);
      const after = segs.filter((s) => s.offset >= total - 1e-6);
      t.ok(after.length > 0, `[${durations}] @ ${segSec}: segments past the pod`);
      t.same(
        after.flatMap((s) => s.place.events),
        [],
        `[${durations}] @ ${segSec}: no events past the pod total`,
      );
      const count = segs.flatMap((s) => s.place.events).length;
      t.equal(count, durations.length * 6, `[${durations}] @ ${segSec}: only the first pass fires`);
    }
  }
  const ads = pod(15, 10);
  t.same(placeOnTimeline(ads, 25, 5), { adIndex: 0, adOffsetSec: 0, events: [] }, 'the pod total starts the loop');
  t.same(placeOnTimeline(ads, 32, 2), { adIndex: 0, adOffsetSec: 7, events: [] });
  t.same(placeOnTimeline(ads, 40, 2), { adIndex: 1, adOffsetSec: 0, events: [] });
  t.same(placeOnTimeline(ads, 74, 2), { adIndex: 1, adOffsetSec: 9, events: [] }, 'third pass');
  t.same(placeOnTimeline(pod(30), 60.05, 6), { adIndex: 0, adOffsetSec: 0.05, events: [] });
});

t.test('placeOnTimeline: no ads or a zero-length pod', async (t) => {
  t.same(placeOnTimeline([], 12, 6), { adIndex: 0, adOffsetSec: 0, events: [] });
  t.same(placeOnTimeline(pod(0, 0), 0, 6), { adIndex: 0, adOffsetSec: 0, events: [] });
});

t.test('animationPhase', async (t) => {
  t.equal(animationPhase(0, 6, 30), 'in');
  t.equal(animationPhase(1e-7, 6, 30), 'in', 'float noise at the start is still the first segment');
  t.equal(animationPhase(6, 6, 30), 'hold');
  t.equal(animationPhase(18, 6, 30), 'hold');
  t.equal(animationPhase(24, 6, 30), 'out', 'the segment ending at the break end');
  t.equal(animationPhase(23.9999995, 6, 30), 'out');
  t.equal(animationPhase(18, 6, 24.5), 'hold');
  t.equal(animationPhase(22, 4, 25), 'out', 'a segment ending past the break');
  t.equal(animationPhase(27, 6, 30), 'out');
  t.equal(animationPhase(0, 30, 30), 'in', 'a single-segment break animates in');
  // Walk a break: exactly one in, one out, holds between.
  const phases = planSegments(0, 30, 5.005).map((p) => animationPhase(p.startMs / 1000, p.durationSec, 30));
  t.same(phases, ['in', 'hold', 'hold', 'hold', 'hold', 'out']);
});

t.test('assignmentKey', async (t) => {
  const a = { uri: 'https://ads.example.com/a.mp4', durationSec: 15 };
  const b = { uri: 'https://ads.example.com/b.mp4', durationSec: 10 };
  const k = assignmentKey([a, b]);
  t.match(k, /^[A-Za-z0-9_-]{16}$/, '16 base64url characters');
  t.equal(assignmentKey([a, b]), k, 'stable');
  t.equal(
    assignmentKey([{ ...a, adId: 'x', tracking: { impression: ['https://t/1'] } } as typeof a, { ...b }]),
    k,
    'only uri and duration count',
  );
  t.not(assignmentKey([b, a]), k, 'order-sensitive');
  t.not(assignmentKey([{ ...a, uri: 'https://ads.example.com/a2.mp4' }, b]), k, 'differs with the uri');
  t.not(assignmentKey([{ ...a, durationSec: 15.5 }, b]), k, 'differs with the duration');
  t.not(assignmentKey([a]), k, 'differs with the number of ads');
  t.not(assignmentKey([a, b, b]), k);
  t.equal(assignmentKey([]), assignmentKey([]));
  t.not(assignmentKey([]), assignmentKey([a]));
  t.not(
    assignmentKey([{ uri: 'x1', durationSec: 5 }]),
    assignmentKey([{ uri: 'x', durationSec: 15 }]),
    'uri/duration boundary is not ambiguous',
  );
  const keys = new Set(
    Array.from({ length: 200 }, (_, i) =>
      assignmentKey([{ uri: `https://ads.example.com/${i}.mp4`, durationSec: 15 }]),
    ),
  );
  t.equal(keys.size, 200, 'no collisions across 200 creatives');
});

const cand = (id: number, abid: string, duration: number, geo: string | null, is_curated = true): CuratedCandidate => ({
  id,
  abid,
  ad_uri: `https://ads.example.com/${abid}.mp4`,
  duration,
  geo_lang_loc: geo,
  is_curated,
});

t.test('chooseConfiguredAds: with an abid', async (t) => {
  const ads = [
    cand(1, 'a1', 15, 'us-en'),
    cand(2, 'a2', 30, 'fr-fr'),
    cand(3, 'a3', 10, null),
    cand(4, 'a4', 30, 'us-en'),
  ];
  const ids = (want: Parameters<typeof chooseConfiguredAds>[1]) => chooseConfiguredAds(ads, want).map((a) => a.id);
  t.same(ids({ abid: 'a1', geo: 'us-en', durationSec: 30 }), [1], 'abid and geo match');
  t.same(ids({ abid: 'a1', geo: 'fr-fr', durationSec: 30 }), [], 'abid with a mismatching geo: none');
  t.same(ids({ abid: 'a3', geo: 'de-de', durationSec: 30 }), [3], 'an ad without geo matches any geo');
  t.same(ids({ abid: 'a2', durationSec: 30 }), [2], 'no geo wanted: any ad geo');
  t.same(ids({ abid: 'nope', geo: 'us-en', durationSec: 30 }), [], 'unknown abid: none (no fill from others)');
  t.same(
    ids({ abid: 'a1', geo: 'us-en', durationSec: 120 }),
    [1],
    'one ad only, even when it does not cover the break',
  );
  t.same(ids({ abid: 'A1', geo: 'us-en', durationSec: 30 }), [], 'abid is exact');
  t.same(ids({ abid: 'a1', geo: 'US-EN', durationSec: 30 }), [], 'geo is exact');
});

t.test('chooseConfiguredAds: without an abid, longest first until covered', async (t) => {
  const ads = [
    cand(5, 'a5', 10, 'us-en'),
    cand(1, 'a1', 15, 'us-en'),
    cand(2, 'a2', 30, 'fr-fr'),
    cand(3, 'a3', 10, null),
    cand(4, 'a4', 30, 'us-en'),
    cand(6, 'a6', 20, 'de-de'),
  ];
  const before = JSON.stringify(ads);
  const ids = (durationSec: number, geo?: string) => chooseConfiguredAds(ads, { geo, durationSec }).map((a) => a.id);
  t.same(ids(30, 'us-en'), [4], 'one 30 s ad covers 30 s');
  t.same(ids(31, 'us-en'), [4, 1]);
  t.same(ids(45, 'us-en'), [4, 1]);
  t.same(ids(50, 'us-en'), [4, 1, 3], 'ties by id: 3 before 5');
  t.same(ids(60, 'us-en'), [4, 1, 3, 5]);
  t.same(ids(600, 'us-en'), [4, 1, 3, 5], 'everything matching when not enough');
  t.same(ids(30), [2], 'no geo: the id breaks the 30 s tie');
  t.same(ids(31), [2, 4]);
  t.same(ids(75), [2, 4, 6]);
  t.same(ids(20, 'fr-fr'), [2]);
  t.same(ids(40, 'fr-fr'), [2, 3], 'geo-less ads join any geo');
  t.same(ids(40, 'jp-ja'), [3], 'only geo-less ads for an unknown geo');
  t.same(ids(0, 'us-en'), [], 'nothing to cover');
  t.same(ids(29.9999999, 'us-en'), [4], 'float tolerance');
  t.same(chooseConfiguredAds([], { durationSec: 30 }), []);
  t.equal(JSON.stringify(ads), before, 'input untouched');
  const reversed = chooseConfiguredAds([...ads].reverse(), { geo: 'us-en', durationSec: 60 }).map((a) => a.id);
  t.same(reversed, [4, 1, 3, 5], 'independent of input order');
});

t.test('configuredToDecided', async (t) => {
  const c = cand(42, 'brand-7', 12.5, 'us-en');
  t.same(configuredToDecided(c), {
    adId: '42',
    creativeId: 'brand-7',
    uri: 'https://ads.example.com/brand-7.mp4',
    durationSec: 12.5,
    tracking: {},
  });
  const d = configuredToDecided(cand(7, 'x', 6, null, false));
  t.equal(typeof d.adId, 'string');
  t.same(d.tracking, {}, 'configured ads carry no tracking');
  t.equal(assignmentKey([configuredToDecided(c)]), assignmentKey([{ uri: c.ad_uri, durationSec: 12.5 }]));
});
