/**
 * Issue 30.2: squeezed segments reach the viewer's playlist whatever path the DAI host's variant
 * gives them. The source playlist (`source_uri`, read by the break worker as lib/squeeze/breaks/
 * source.ts does) names segments either relative to itself or root-relative; the viewer's variant
 * (the DAI host's, through the proxy's rewrite) names them root-relative under another directory,
 * or relative to itself (resolved on the DAI host: matched by path and time, never an ad).
 * A BreakBoard fed from memory applies the break; its metrics tell not-ready from unmatched.
 */
import t from 'tap';
import { createLogger } from '../../../lib/log/index.js';
import { Registry } from '../../../lib/metrics/index.js';
import { MemoryStateStore, RedisStateStore } from '../../../lib/store/index.js';
import { StreamRegistry } from '../../../lib/streams/registry.js';
import { BreakReach, readReach, reachWarnings } from '../../../lib/squeeze/breaks/reach.js';
import { needServices, REDIS_URL, REDIS_KEY_PREFIX } from '../../helpers/services.js';
import { BreakBoard } from '../../../lib/squeeze/breaks/board.js';
import { mediaSegments } from '../../../lib/squeeze/breaks/source.js';
import type { BreakRow, SegmentRow } from '../../../lib/squeeze/breaks/repo.js';
import { livePlaylist, defaultShape } from '../../../lib/sim/live-playlist.js';
import { rewritePlaylist, splitLines } from '../../../lib/hls/index.js';
import { breakRow } from '../../helpers/break-rows.js';

const ORIGIN = 'https://origin.example.org';
const shape = { ...defaultShape, adEvery: 0 };
const SEG_MS = shape.segmentSec * 1000;
const now = shape.epochMs + 1000 * SEG_MS + 500; // live edge: seq 1000, window 971..1000
const at = (seq: number) => shape.epochMs + seq * SEG_MS;
const rules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge/dai/manifest',
  contentOrigin: ORIGIN,
  playlistUrl: 'https://dai.example.com/x/720p.m3u8',
};
/** The viewer's variant: root-relative `/content/ev/seg_N.ts` made absolute on the origin. */
const viewer = rewritePlaylist(livePlaylist('ev', now, shape), rules).text;
/** The source playlist the worker reads: the same segments, named relative to it (`seg_N.ts`) or root-relative. */
const source = (naming: 'relative' | 'root-relative', dir = 'live/ev') => {
  const text = livePlaylist('ev', now, shape);
  return naming === 'relative'
    ? text.replace(/^\/content\/ev\//gm, '')
    : text.replace(/^\/content\/ev\//gm, `/${dir}/`);
};

/** Ready outputs for the break's segments as the worker records them: keyed by the source's path. */
function readyRows(sourceText: string, sourceUri: string, fromSeq: number, toSeq: number, tag = ''): SegmentRow[] {
  const p = mediaSegments(sourceText, sourceUri);
  return p.segments
    .filter((s) => s.seq >= fromSeq && s.seq < toSeq)
    .map((s) => ({
      break_id: 'b1',
      assignment: 'a',
      content_path: s.path,
      content_uri: s.uri,
      idx: s.seq - fromSeq,
      start_time: new Date(s.pdtMs!),
      duration: s.durationSec,
      ad_index: 0,
      ad_offset: 0,
      events: [],
      output_key: `sqz${tag}/${s.seq}.ts`,
      status: 'ready',
      output_uri: `https://objects.example.com/sqz${tag}/${s.seq}.ts`,
      attempts: 1,
      error: null,
      updated_at: new Date(),
    }));
}

/**
 * What the DAI proxy tells the board of a URI (lib/delivery/manifest-fetch.ts): on the origin, by
 * path; under the variant's directory on the DAI host (`/x/`), by path and time; else an ad.
 */
const daiKind = (u: string) =>
  u.startsWith(`${ORIGIN}/`) ? true : u.startsWith(`${rules.daiHost}/x/`) ? 'timed' : false;

async function boardWith(ready: SegmentRow[], viewerText = viewer) {
  const metrics = new Registry();
  const rows: { breaks: BreakRow[]; ready: SegmentRow[] } = { breaks: [breakRow('b1', 7, at(990), 30)], ready };
  const board = new BreakBoard(
    { board: async () => rows },
    new MemoryStateStore(),
    createLogger('silent'),
    metrics,
    3_600_000,
  );
  await board.reload();
  const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(metrics.render())?.[1] ?? 0);
  const apply = () => board.apply(viewerText, 7, 'S1', daiKind, 'dai') ?? '';
  return { apply, counter };
}

const squeezedIn = (text: string) => splitLines(text).filter((l) => l.startsWith('https://objects.example.com/'));

t.test('both naming styles of the source: every break segment of the viewer’s playlist squeezed', async (t) => {
  for (const [name, text, uri] of [
    ['relative names (seg_N.ts next to the source playlist)', source('relative'), `${ORIGIN}/live/ev/720p.m3u8`],
    ['root-relative names under another directory', source('root-relative', 'live/ev'), `${ORIGIN}/other/720p.m3u8`],
    [
      'root-relative names as the DAI variant has them',
      source('root-relative', 'content/ev'),
      `${ORIGIN}/content/720p.m3u8`,
    ],
  ] as const) {
    const { apply, counter } = await boardWith(readyRows(text, uri, 990, 995));
    const out = apply();
    t.same(
      squeezedIn(out),
      [990, 991, 992, 993, 994].map((n) => `https://objects.example.com/sqz/${n}.ts`),
      `${name}: the 5 break segments squeezed`,
    );
    t.equal(counter('squeeze_segments_not_ready_total'), 0, `${name}: none counted as not ready`);
    t.equal(counter('squeeze_segments_unmatched_total'), 0, `${name}: none unmatched`);
  }
});

/** The DAI host's own variant naming content segments relative to itself: they resolve on the DAI host. */
const relativeViewer = (playlistUrl = rules.playlistUrl) =>
  rewritePlaylist(livePlaylist('ev', now, { ...shape, contentNaming: 'relative' }), { ...rules, playlistUrl }).text;

t.test('the DAI host’s variant naming segments relatively: matched by path and time', async (t) => {
  const viewerText = relativeViewer();
  t.ok(viewerText.includes(`\n${rules.daiHost}/x/seg_990.ts\n`), 'the proxy resolved them on the DAI host');
  for (const [name, text, uri] of [
    ['a source naming them relatively', source('relative'), `${ORIGIN}/live/ev/720p.m3u8`],
    ['a source naming them root-relatively', source('root-relative', 'content/ev'), `${ORIGIN}/content/720p.m3u8`],
  ] as const) {
    const { apply, counter } = await boardWith(readyRows(text, uri, 990, 995), viewerText);
    t.same(
      squeezedIn(apply()),
      [990, 991, 992, 993, 994].map((n) => `https://objects.example.com/sqz/${n}.ts`),
      `${name}: the 5 break segments squeezed`,
    );
    t.equal(counter('squeeze_segments_unmatched_total'), 0, `${name}: none unmatched`);
    t.equal(counter('squeeze_segments_not_ready_total'), 0, `${name}: none not ready`);
  }
  // Two variants of the source: the DAI variant's directory tells them apart when it names the rendition.
  const twoVariants = [
    ...readyRows(source('root-relative', 'live/ev'), `${ORIGIN}/x.m3u8`, 990, 995, 'right'),
    ...readyRows(source('root-relative', 'live/ev2'), `${ORIGIN}/x.m3u8`, 990, 995, 'wrong'),
  ];
  const inDir = await boardWith(twoVariants, relativeViewer(`${rules.daiHost}/x/ev/720p.m3u8`));
  t.same(
    squeezedIn(inDir.apply()),
    [990, 991, 992, 993, 994].map((n) => `https://objects.example.com/sqzright/${n}.ts`),
    'ev/seg_N.ts (the DAI variant’s directory) picks live/ev over live/ev2',
  );
  // Nothing in the DAI path to tell them apart: no guess, and the break says it was ready but unmatched.
  const tie = await boardWith(twoVariants, viewerText);
  t.same(squeezedIn(tie.apply()), [], 'a bare seg_N.ts with two variants of that name: not squeezed');
  t.equal(tie.counter('squeeze_segments_unmatched_total'), 5, 'counted as unmatched');
  t.equal(tie.counter('squeeze_segments_not_ready_total'), 0, 'not as not ready');
});

t.test('what stops a false match: an ad is never replaced, whatever its name', async (t) => {
  const ready = readyRows(source('relative'), `${ORIGIN}/live/ev/720p.m3u8`, 990, 995);
  // In the break window: 991 is an ad next to the variant carrying a source name of another time,
  // 992 an ad next to it with a name of its own, 993 an ad elsewhere on the DAI host with exactly
  // the source's name for that time (no cue tags around any of them: the pod rule does not apply).
  const viewerText = relativeViewer()
    .replace(`${rules.daiHost}/x/seg_991.ts`, `${rules.daiHost}/x/seg_994.ts`)
    .replace(`${rules.daiHost}/x/seg_992.ts`, `${rules.daiHost}/x/ad_1.ts`)
    .replace(`${rules.daiHost}/x/seg_993.ts`, `${rules.daiHost}/linear/pod/seg_993.ts`);
  const { apply } = await boardWith(ready, viewerText);
  const out = apply();
  t.same(
    squeezedIn(out),
    [990, 994].map((n) => `https://objects.example.com/sqz/${n}.ts`),
    'only the segments whose name and time agree with an output',
  );
  for (const ad of [
    `${rules.daiHost}/x/seg_994.ts`,
    `${rules.daiHost}/x/ad_1.ts`,
    `${rules.daiHost}/linear/pod/seg_993.ts`,
  ])
    t.ok(out.includes(`\n${ad}\n`), `${ad} kept`);
});

t.test('not ready counts only segments with no ready output; unmatched counts ready ones no URI matched', async (t) => {
  // Two of the five composed: three not ready.
  const partial = await boardWith(readyRows(source('relative'), `${ORIGIN}/live/ev/720p.m3u8`, 990, 992));
  t.equal(squeezedIn(partial.apply()).length, 2);
  t.equal(partial.counter('squeeze_segments_not_ready_total'), 3, 'three not ready');
  t.equal(partial.counter('squeeze_segments_unmatched_total'), 0);
  // Two variants of the source with the same file names and nothing else to tell them apart from the viewer's path: no guess.
  const ambiguous = await boardWith([
    ...readyRows(source('root-relative', 'live/a/ev'), `${ORIGIN}/x.m3u8`, 990, 995, 'a'),
    ...readyRows(source('root-relative', 'live/b/ev'), `${ORIGIN}/x.m3u8`, 990, 995, 'b'),
  ]);
  t.same(squeezedIn(ambiguous.apply()), [], 'the wrong variant is never served');
  t.equal(ambiguous.counter('squeeze_segments_unmatched_total'), 5, 'ready but unmatched: counted as such');
  t.equal(ambiguous.counter('squeeze_segments_not_ready_total'), 0, 'and not as not ready');
  // The longest shared trailing path decides between variants when it can.
  const twoVariants = await boardWith([
    ...readyRows(source('root-relative', 'live/content/ev'), `${ORIGIN}/x.m3u8`, 990, 995, 'right'),
    ...readyRows(source('root-relative', 'live/other/ev2'), `${ORIGIN}/x.m3u8`, 990, 995, 'wrong'),
  ]);
  t.same(
    squeezedIn(twoVariants.apply()),
    [990, 991, 992, 993, 994].map((n) => `https://objects.example.com/sqzright/${n}.ts`),
    'content/ev/seg_N.ts over other/ev2/seg_N.ts',
  );
});

t.test(
  'what a break reached, summed over two instances on one Redis: matched streams, or a warning when none matched',
  async (t) => {
    if (!(await needServices(t, ['redis']))) return;
    const log = createLogger('silent');
    const prefix = `${REDIS_KEY_PREFIX}reach${Date.now()}:`;
    const relative = readyRows(source('relative'), `${ORIGIN}/live/ev/720p.m3u8`, 990, 995);
    // Two variants the viewer's path cannot tell apart: ready, but matched nowhere.
    const ambiguous = [
      ...readyRows(source('root-relative', 'live/a/ev'), `${ORIGIN}/x.m3u8`, 990, 995, 'a'),
      ...readyRows(source('root-relative', 'live/b/ev'), `${ORIGIN}/x.m3u8`, 990, 995, 'b'),
    ];
    const asBreak = (id: string, rows: SegmentRow[]) => rows.map((r) => ({ ...r, break_id: id }));
    // Each break on its own event (one board renders every break of an event into one playlist).
    const rows = {
      breaks: [breakRow('hit', 7, at(990), 30), breakRow('miss', 8, at(990), 30)],
      ready: [...asBreak('hit', relative), ...asBreak('miss', ambiguous)],
    };
    const instance = async () => {
      const state = await RedisStateStore.connect(REDIS_URL, log, 5000, prefix);
      // A flush interval far beyond the test: only the explicit flush writes, so nothing is written by a timer.
      const streams = new StreamRegistry(state, log, 60_000, 3_600_000);
      const board = new BreakBoard({ board: async () => rows }, state, log, new Registry(), 3_600_000);
      board.reach = new BreakReach(60_000);
      streams.alsoFlush(board.reach);
      await board.reload();
      t.teardown(async () => {
        await streams.close();
        await board.stop();
        await state.close();
      });
      return { state, streams, board };
    };
    const [one, two] = [await instance(), await instance()];
    const render = (i: typeof one, eventId: number, stream: string) =>
      i.board.apply(viewer, eventId, stream, (u) => u.startsWith(ORIGIN), 'dai') ?? '';

    t.equal(squeezedIn(render(one, 7, 'S1')).length, 5, 'instance one squeezes S1');
    t.equal(squeezedIn(render(one, 7, 'S1')).length, 5, 'S1 again (counted once)');
    t.equal(squeezedIn(render(two, 7, 'S2')).length, 5, 'instance two squeezes S2');
    t.equal(squeezedIn(render(two, 7, 'S3')).length, 5, 'and S3');
    t.same(squeezedIn(render(one, 8, 'S4')), [], 'the other break matches no segment of S4 (instance one)');
    t.same(squeezedIn(render(two, 8, 'S5')), [], 'nor of S5 (instance two)');

    t.same(
      await readReach(one.state, 'hit'),
      { matched_streams: 0, unmatched_streams: 0 },
      'nothing written before a flush: the renderings waited on no store',
    );
    await Promise.all([one.streams.flush(), two.streams.flush()]);
    const hit = await readReach(one.state, 'hit');
    t.same(hit, { matched_streams: 3, unmatched_streams: 0 }, 'three streams over two instances matched');
    t.same(await readReach(two.state, 'hit'), hit, 'both instances read the same');
    t.same(reachWarnings(hit, 'completed'), [], 'no warning for a break that reached its viewers');
    const miss = await readReach(two.state, 'miss');
    t.same(
      miss,
      { matched_streams: 0, unmatched_streams: 2 },
      'no stream matched; two were served content with outputs ready',
    );
    const [warning] = reachWarnings(miss, 'active');
    t.match(warning, /^no viewer playlist matched the break's segments: 2 stream/, 'a warning says so');
    t.match(
      reachWarnings({ matched_streams: 0, unmatched_streams: 0 }, 'completed'),
      [/no viewer playlist carried/],
      'a completed break no playlist carried is reported too',
    );
    t.same(
      reachWarnings({ matched_streams: 0, unmatched_streams: 0 }, 'active'),
      [],
      'a break in progress nobody watched yet is not',
    );
    t.ok((await one.state.ttl('sqz:{br:hit}:matched')) > 0, 'the records expire with the break retention');
  },
);
