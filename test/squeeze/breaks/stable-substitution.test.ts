/**
 * A break segment published as content stays content (RFC 8216 §6.2.2; docs/decisions.md "Squeeze
 * breaks: stable substitutions and /vast behind the live edge"). A break whose composition is late
 * for one segment: the first refresh lists it as content, the output is ready by the second, and
 * the URI of that media sequence must not change (hls.js: `levelParsingError`, "media sequence
 * mismatch"), on the same instance and on another one, in the DAI and the squeezeback flow.
 * BreakBoards fed from memory; instances share one state store (memory, and Redis when there).
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../../lib/log/index.js';
import { Registry } from '../../../lib/metrics/index.js';
import { MemoryStateStore, RedisStateStore, type StateStore } from '../../../lib/store/index.js';
import { BreakBoard } from '../../../lib/squeeze/breaks/board.js';
import type { BreakRow, SegmentRow } from '../../../lib/squeeze/breaks/repo.js';
import { livePlaylist, defaultShape } from '../../../lib/sim/live-playlist.js';
import { parseMedia, rewritePlaylist, splitLines } from '../../../lib/hls/index.js';
import { needServices, REDIS_URL, REDIS_KEY_PREFIX } from '../../helpers/services.js';
import { breakRow } from '../../helpers/break-rows.js';

const ORIGIN = 'https://origin.example.org';
const shape = { ...defaultShape, adEvery: 0 };
const SEG_MS = shape.segmentSec * 1000;
const at = (seq: number) => shape.epochMs + seq * SEG_MS;
/** The live edge at seq 992 (the break's third segment, the late one, is the newest), then one segment later. */
const edge = (seq: number) => at(seq) + 500;
const rules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge/dai/manifest',
  contentOrigin: ORIGIN,
  playlistUrl: 'https://dai.example.com/x/720p.m3u8',
};
const viewerAt = (nowMs: number) => rewritePlaylist(livePlaylist('ev', nowMs, shape), rules).text;
const LATE = 992;
const BREAK = [990, 991, 992, 993, 994];
const OUT = (seq: number) => `https://objects.example.com/sqz/${seq}.ts`;

function readyRow(seq: number): SegmentRow {
  return {
    break_id: 'b1',
    assignment: 'a',
    content_path: `/content/ev/seg_${seq}.ts`,
    content_uri: `${ORIGIN}/content/ev/seg_${seq}.ts`,
    idx: seq - 990,
    start_time: new Date(at(seq)),
    duration: shape.segmentSec,
    ad_index: 0,
    ad_offset: 0,
    events: [],
    output_key: `sqz/${seq}.ts`,
    status: 'ready',
    output_uri: OUT(seq),
    attempts: 1,
    error: null,
    updated_at: new Date(),
  };
}

/** The URI each media sequence of a rendered playlist names. */
function uriBySeq(text: string): Map<number, string> {
  const p = parseMedia(splitLines(text));
  return new Map(p.segments.map((s, i) => [p.mediaSequence + i, s.uri]));
}

const daiKind = (u: string) => u.startsWith(`${ORIGIN}/`);

/** The durable record every instance reads: the break, and the outputs ready so far (changed by the test). */
function record(readySeqs: number[]) {
  return { breaks: [breakRow('b1', 7, at(990), 30)], ready: readySeqs.map(readyRow) } as {
    breaks: BreakRow[];
    ready: SegmentRow[];
  };
}

async function instance(t: Test, rows: ReturnType<typeof record>, state: StateStore) {
  const metrics = new Registry();
  const board = new BreakBoard({ board: async () => rows }, state, createLogger('silent'), metrics, 3_600_000);
  await board.start(3_600_000);
  t.teardown(() => board.stop());
  const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(metrics.render())?.[1] ?? 0);
  return { board, counter };
}

/** Settles what an instance writes and announces after a rendering (setImmediate, then pub/sub). */
const settle = async (ms = 0) => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  if (ms) await new Promise((r) => setTimeout(r, ms));
};

for (const flow of ['dai', 'squeezeback'] as const) {
  t.test(`${flow}: a segment listed as content keeps its URI once its output is ready`, async (t) => {
    const rows = record(BREAK.filter((s) => s !== LATE));
    const { board, counter } = await instance(t, rows, new MemoryStateStore());
    const render = (nowMs: number) => board.apply(viewerAt(nowMs), 7, 'S1', daiKind, flow) ?? '';

    const first = uriBySeq(render(edge(LATE)));
    t.equal(first.get(990), OUT(990), 'a segment composed in time is squeezed');
    t.equal(first.get(LATE), `${ORIGIN}/content/ev/seg_${LATE}.ts`, 'the late one is listed as content');
    t.equal(counter('squeeze_segments_not_ready_total'), 1, 'counted as not ready');

    // The output is published; every instance rebuilds its snapshot.
    rows.ready = BREAK.map(readyRow);
    await board.reload();
    for (const nowMs of [edge(LATE), edge(LATE + 1)]) {
      const again = uriBySeq(render(nowMs));
      t.equal(
        again.get(LATE),
        first.get(LATE),
        nowMs === edge(LATE) ? 'the next refresh: the same URI' : 'one segment later: the same URI',
      );
      t.equal(again.get(990), OUT(990), 'the squeezed ones stay squeezed');
    }
    t.equal(uriBySeq(render(edge(LATE + 2))).get(LATE + 2), OUT(LATE + 2), 'a segment first listed ready is squeezed');
    t.equal(
      counter('squeeze_segments_kept_content_total'),
      3,
      'kept as content with its output ready: once per rendering (3)',
    );
    t.equal(counter('squeeze_segments_not_ready_total'), 1, 'and no longer as not ready');
  });
}

async function twoInstances(t: Test, stores: () => Promise<StateStore>) {
  const rows = record(BREAK.filter((s) => s !== LATE));
  const one = await instance(t, rows, await stores());
  const two = await instance(t, rows, await stores());
  // Instance one lists the late segment as content; instance two had rendered nothing yet.
  const first = uriBySeq(one.board.apply(viewerAt(edge(LATE)), 7, 'S1', daiKind, 'dai') ?? '');
  t.equal(first.get(LATE), `${ORIGIN}/content/ev/seg_${LATE}.ts`, 'instance one: content');
  await settle(50);
  rows.ready = BREAK.map(readyRow);
  await Promise.all([one.board.reload(), two.board.reload()]);
  // The viewer's next refresh lands on instance two.
  const next = uriBySeq(two.board.apply(viewerAt(edge(LATE + 1)), 7, 'S1', daiKind, 'dai') ?? '');
  t.equal(next.get(LATE), first.get(LATE), 'instance two: the same URI for that media sequence');
  t.equal(next.get(991), OUT(991), 'and the others squeezed');
  // An instance started after the pin reads it from the store with its first snapshot.
  const three = await instance(t, rows, await stores());
  const late = uriBySeq(three.board.apply(viewerAt(edge(LATE + 1)), 7, 'S9', daiKind, 'squeezeback') ?? '');
  t.equal(late.get(LATE), first.get(LATE), 'an instance started later: the same URI');
}

t.test('another instance: the segment stays content there too (one memory store)', async (t) => {
  const shared = new MemoryStateStore();
  await twoInstances(t, async () => shared);
});

t.test('another instance: the segment stays content there too (Redis)', async (t) => {
  if (!(await needServices(t, ['redis']))) return;
  const prefix = `${REDIS_KEY_PREFIX}pins${Date.now()}:`;
  await twoInstances(t, async () => {
    const state = await RedisStateStore.connect(REDIS_URL, createLogger('silent'), 5000, prefix);
    t.teardown(() => state.close());
    return state;
  });
  const state = await RedisStateStore.connect(REDIS_URL, createLogger('silent'), 5000, prefix);
  t.teardown(() => state.close());
  const ttl = await state.ttl('sqz:{br:b1}:content');
  t.ok(ttl > 0 && ttl <= 3_600_000 + 20_000, `the stored pins expire with the break retention (${ttl} ms)`);
});

t.test('an instance rendered it squeezed first (the snapshots’ race): it follows the content pin', async (t) => {
  const shared = new MemoryStateStore();
  const rows = record(BREAK.filter((s) => s !== LATE));
  const one = await instance(t, rows, shared);
  // Another instance already has the output; instance one's snapshot is behind.
  const ahead = { ...rows, ready: BREAK.map(readyRow) };
  const twoAhead = await instance(t, ahead, shared);
  t.equal(
    uriBySeq(twoAhead.board.apply(viewerAt(edge(LATE)), 7, 'S1', daiKind, 'dai') ?? '').get(LATE),
    OUT(LATE),
    'the instance ahead squeezes it',
  );
  const generation = twoAhead.board.generation;
  one.board.apply(viewerAt(edge(LATE)), 7, 'S1', daiKind, 'dai');
  await settle(50);
  t.ok(twoAhead.board.generation > generation, 'the pin drops its renderings (a new generation)');
  t.equal(
    uriBySeq(twoAhead.board.apply(viewerAt(edge(LATE)), 7, 'S1', daiKind, 'dai') ?? '').get(LATE),
    `${ORIGIN}/content/ev/seg_${LATE}.ts`,
    'from the next refresh on, every instance lists content',
  );
});

t.test('a variant naming segments relative to itself (matched by path and time): stable too', async (t) => {
  const rows = record(BREAK.filter((s) => s !== LATE));
  const { board } = await instance(t, rows, new MemoryStateStore());
  const relative = (nowMs: number) =>
    rewritePlaylist(livePlaylist('ev', nowMs, { ...shape, contentNaming: 'relative' }), rules).text;
  const kind = (u: string) => (u.startsWith(`${rules.daiHost}/x/`) ? 'timed' : false);
  const render = (nowMs: number) => uriBySeq(board.apply(relative(nowMs), 7, 'S1', kind, 'dai') ?? '');
  const first = render(edge(LATE));
  t.equal(first.get(991), OUT(991), 'matched by path and time: squeezed');
  t.equal(first.get(LATE), `${rules.daiHost}/x/seg_${LATE}.ts`, 'the late one: content');
  rows.ready = BREAK.map(readyRow);
  await board.reload();
  const next = render(edge(LATE + 1));
  t.equal(next.get(LATE), first.get(LATE), 'one segment later: the same URI');
  t.equal(next.get(LATE + 1), OUT(LATE + 1), 'the next one, ready at its first listing: squeezed');
});
