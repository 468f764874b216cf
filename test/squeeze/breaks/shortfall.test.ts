/**
 * Issue 30.5: a squeeze break whose ads sum to less than the break is filled as the brand's
 * `squeeze_fill` says: loop (the default: the ads again), slate (the brand's slate after the ads,
 * untracked), or content (the break ends with its ads). Pure: the decision as the decider returns it.
 */
import t from 'tap';
import { fillShortfall, SLATE_AD_ID } from '../../../lib/squeeze/breaks/shortfall.js';
import { assignmentKey, placeOnTimeline, squeezedSpanSec } from '../../../lib/squeeze/breaks/plan.js';
import type { Decision } from '../../../lib/squeeze/breaks/decide.js';
import type { DecidedAd } from '../../../lib/ads/types.js';
import { bodyValidator } from '../../../lib/http/validate.js';
import { brandConfigInput } from '../../../lib/squeeze/config/schema.js';

const ad = (id: string, durationSec: number): DecidedAd => ({
  adId: id,
  uri: `https://ads.example/${id}.mp4`,
  durationSec,
  tracking: { impression: [`https://t.example/${id}`] },
});

function decision(pods: DecidedAd[][], perStream = false): Decision {
  const assignments = pods.map((ads) => ({ key: assignmentKey(ads), source: 'vmap' as const, ads }));
  return {
    assignments,
    defaultKey: perStream ? undefined : assignments[0]!.key,
    streamAssignments: perStream ? Object.fromEntries(assignments.map((a, i) => [`S${i + 1}`, a.key])) : {},
    streamTracking: {},
    source: 'vmap',
    reason: undefined,
  };
}

t.test('loop (the default) leaves the decision and the break as they are', async (t) => {
  const d = decision([[ad('a', 15), ad('b', 5)]]);
  for (const fill of [undefined, { mode: 'loop' as const }]) {
    const r = fillShortfall(d, 30, fill);
    t.equal(r.decision, d, `${fill ? 'loop' : 'unset'}: the same decision`);
    t.equal(r.durationSec, 30);
  }
  // And the composition loops: 25 s into a 30 s break of 20 s of ads is 5 s into the first ad, with no tracking.
  t.same(placeOnTimeline(d.assignments[0]!.ads, 24, 2), { adIndex: 0, adOffsetSec: 4, events: [] });
});

t.test('slate: the rest of the break after the ads, untracked, keys and stream assignments follow', async (t) => {
  const d = decision([[ad('a', 15), ad('b', 5)], [ad('c', 30)]], true);
  const r = fillShortfall(d, 30, { mode: 'slate', slate_uri: 'https://cdn.example/slate.mp4' });
  const [short, full] = r.decision.assignments;
  t.equal(r.durationSec, 30, 'the break keeps its length');
  t.same(
    short!.ads.map((a) => [a.adId, a.durationSec, a.slate ?? false]),
    [
      ['a', 15, false],
      ['b', 5, false],
      [SLATE_AD_ID, 10, true],
    ],
    'a 10 s slate after 20 s of ads',
  );
  t.same(short!.ads[2]!.tracking, {}, 'the slate carries no tracking');
  t.equal(short!.ads[2]!.uri, 'https://cdn.example/slate.mp4');
  t.equal(short!.key, assignmentKey(short!.ads), 'the filled pod is a new assignment (composed on its own)');
  t.equal(full, d.assignments[1], 'a pod that fills the break is untouched');
  t.same(r.decision.streamAssignments, { S1: short!.key, S2: full!.key }, 'each stream follows its pod');
  t.match(r.note, /10\.0 s of shortfall filled with the slate/);
  // On the timeline: 24 s in is 4 s into the slate, and the slate fires nothing.
  const placed = placeOnTimeline(short!.ads, 24, 2);
  t.same([placed.adIndex, placed.adOffsetSec], [2, 4], 'the segment 24 s in shows the slate 4 s in');
  t.ok(
    placed.events.every((e) => e.ad !== 2 || !short!.ads[2]!.tracking[e.event]),
    'no tracking URL for the slate',
  );

  const pieces = fillShortfall(decision([[ad('a', 12)]]), 30, {
    mode: 'slate',
    slate_uri: 'https://cdn.example/slate.mp4',
    slate_duration_sec: 8,
  });
  t.same(
    pieces.decision.assignments[0]!.ads.slice(1).map((a) => a.durationSec),
    [8, 8, 2],
    'a slate_duration_sec of 8 s: 18 s in pieces of 8, each played from its start',
  );
  t.equal(pieces.decision.defaultKey, pieces.decision.assignments[0]!.key, 'the default assignment follows');

  const fallback = fillShortfall(
    decision([[ad('a', 12)]]),
    30,
    { mode: 'slate' },
    'https://cdn.example/stitch-slate.mp4',
  );
  t.equal(
    fallback.decision.assignments[0]!.ads.at(-1)!.uri,
    'https://cdn.example/stitch-slate.mp4',
    'without slate_uri: the brand’s stitch_slate',
  );
  const none = fillShortfall(decision([[ad('a', 12)]]), 30, { mode: 'slate' });
  t.equal(none.decision.assignments[0]!.ads.length, 1, 'no slate configured at all: the ads loop');
  t.match(none.note, /without a slate_uri/, 'and the break says why');
  t.equal(
    fillShortfall(decision([[ad('a', 29.8)]]), 30, { mode: 'slate', slate_uri: 'https://cdn.example/s.mp4' }).decision
      .assignments[0]!.ads.length,
    1,
    'under 0.5 s is no shortfall',
  );
});

t.test('content: the break ends with its longest pod, in whole segments', async (t) => {
  const r = fillShortfall(decision([[ad('a', 15)], [ad('b', 15), ad('c', 5)]], true), 30, { mode: 'content' });
  t.equal(r.durationSec, 20, 'the longest pod is 20 s');
  t.equal(squeezedSpanSec(r.durationSec, 6), 24, 'squeezed as whole 6 s segments, as every break is');
  t.equal(r.decision.assignments[0]!.ads.length, 1, 'no ad is added');
  t.match(r.note, /shortened from 30 s to its ads \(20 s\)/);
  t.equal(
    fillShortfall(decision([[ad('a', 30)]]), 30, { mode: 'content' }).durationSec,
    30,
    'a full pod keeps the break',
  );
});

t.test('the brand config accepts squeeze_fill and refuses what is not one', async (t) => {
  const validate = bodyValidator(brandConfigInput);
  t.doesNotThrow(() =>
    validate({
      brand_id: 'acme',
      squeeze_fill: { mode: 'slate', slate_uri: 'https://cdn.example/s.mp4', slate_duration_sec: 10 },
    }),
  );
  t.doesNotThrow(() => validate({ brand_id: 'acme', squeeze_fill: { mode: 'content' } }));
  for (const bad of [
    { mode: 'black' },
    {},
    { mode: 'slate', slate_uri: 'file:///etc/passwd' },
    { mode: 'slate', slate_duration_sec: 0 },
    { mode: 'loop', extra: 1 },
  ])
    t.throws(() => validate({ brand_id: 'acme', squeeze_fill: bad }), `refused: ${JSON.stringify(bad)}`);
});
