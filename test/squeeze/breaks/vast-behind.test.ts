/**
 * `/vast` for a viewer behind the live edge (docs/decisions.md "Squeeze breaks: stable
 * substitutions and /vast behind the live edge"): the squeezeback page asks when it loads the
 * first composed segment, which for a viewer the event's live-edge delay (or its DVR window)
 * holds back comes after the break's end by the wall clock. /vast answers a break until its end
 * reaches the viewers furthest behind (the event's delay and window, in segments, capped), never
 * later: a break long over gets the empty VAST. `break_id` (the ID3 tag's value) names the break
 * when a later one has begun. PlayerEndpoints on a uWS app, a BreakBoard fed from memory.
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../../lib/log/index.js';
import { Registry } from '../../../lib/metrics/index.js';
import { MemoryStateStore } from '../../../lib/store/index.js';
import { loadUws } from '../../../lib/http/uws.js';
import { BreakBoard, MAX_BEHIND_MS } from '../../../lib/squeeze/breaks/board.js';
import { PlayerEndpoints } from '../../../lib/squeeze/breaks/player-endpoints.js';
import type { BreakRow } from '../../../lib/squeeze/breaks/repo.js';
import type { StreamRegistry } from '../../../lib/streams/registry.js';
import type { BeaconForwarder } from '../../../lib/beacons/forwarder.js';
import { breakRow } from '../../helpers/break-rows.js';

const uws = loadUws();
const SEG_SEC = 6;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A 30 s break of event `eventId` on stream `stream`, ended `endedAgoSec` ago, its event's delay and window as given. */
function ended(
  n: number,
  eventId: number,
  stream: string,
  endedAgoSec: number,
  settings: { live_edge_delay_segments: number; windows_segs: number },
  status: BreakRow['status'] = 'completed',
): BreakRow {
  const row = breakRow(id(n), eventId, Date.now() - (endedAgoSec + 30) * 1000, 30);
  return {
    ...row,
    status,
    segment_sec: SEG_SEC,
    settings: settings as unknown as BreakRow['settings'],
    stream_assignments: { [stream]: 'a' },
    default_assignment: null,
    assignments: [
      {
        key: 'a',
        source: 'vmap',
        ads: [
          {
            adId: `ad${n}`,
            uri: `https://ads.example/break-${n}.mp4`,
            durationSec: 30,
            tracking: { impression: ['https://track.example/imp'] },
          },
        ],
      },
    ],
  };
}

async function endpoint(t: Test, breaks: BreakRow[]) {
  const board = new BreakBoard(
    { board: async () => ({ breaks, ready: [] }) },
    new MemoryStateStore(),
    createLogger('silent'),
    new Registry(),
    3_600_000,
  );
  await board.reload();
  const player = new PlayerEndpoints({
    board,
    streams: { get: async () => undefined } as unknown as StreamRegistry,
    forwarder: { enqueue: () => undefined } as unknown as BeaconForwarder,
    beaconSecret: 'secret-0123456789',
    publicBaseUrl: () => 'https://edge.example',
    metrics: new Registry(),
    log: createLogger('silent'),
  });
  const app = uws.App();
  player.mount(app);
  const { port, close } = await new Promise<{ port: number; close: () => void }>((resolve) =>
    app.listen('127.0.0.1', 0, (s) =>
      resolve({ port: uws.us_socket_local_port(s as never), close: () => uws.us_listen_socket_close(s as never) }),
    ),
  );
  t.teardown(close);
  return async (query: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/vast?${query}`);
    const body = await res.text();
    return { status: res.status, body, ad: /break-(\d+)\.mp4/.exec(body)?.[1] };
  };
}

t.test('a viewer the live-edge delay holds back past the break’s end still gets its VAST', async (t) => {
  const delay8 = { live_edge_delay_segments: 8, windows_segs: 0 };
  const none = { live_edge_delay_segments: 0, windows_segs: 0 };
  const vast = await endpoint(t, [
    // Event 1: (8 + 3 + 1) × 6 s = 72 s behind at most.
    ended(1, 1, 'S1', 20, delay8),
    // Event 2: no delay: the player's own 3 segments + 1, 24 s.
    ended(2, 2, 'S2', 20, none),
    ended(3, 3, 'S3', 40, none),
    // Event 4: a window of 20 segments: a DVR viewer at its start: (2 + 20 + 1) × 6 s = 138 s.
    ended(4, 4, 'S4', 120, { live_edge_delay_segments: 2, windows_segs: 20 }),
    ended(5, 5, 'S5', 160, { live_edge_delay_segments: 2, windows_segs: 20 }),
    // Event 6: a failed break is never answered.
    ended(6, 6, 'S6', -10, delay8, 'failed'),
  ]);
  const one = await vast('stream_id=S1');
  t.equal(one.status, 200);
  t.equal(one.ad, '1', 'ended 20 s ago, 8 segments of delay: the break’s VAST');
  t.match(one.body, /\/beacon\?/, 'with signed beacon URLs');
  t.equal((await vast('stream_id=S2')).ad, '2', 'no delay, ended 20 s ago: within the player’s own distance');
  t.equal((await vast('stream_id=S3')).ad, undefined, 'no delay, ended 40 s ago: the empty VAST');
  t.equal((await vast('stream_id=S4')).ad, '4', 'a 20-segment window, ended 120 s ago: a DVR viewer may play it');
  t.equal((await vast('stream_id=S5')).ad, undefined, 'ended 160 s ago: past the window');
  t.equal((await vast('stream_id=S6')).ad, undefined, 'a failed break: empty');
});

t.test('bounded: a break long over gets the empty VAST whatever the event’s settings', async (t) => {
  const huge = { live_edge_delay_segments: 1000, windows_segs: 1000 };
  const capSec = MAX_BEHIND_MS / 1000;
  const vast = await endpoint(t, [ended(1, 1, 'S1', capSec - 30, huge), ended(2, 2, 'S2', capSec + 30, huge)]);
  t.equal((await vast('stream_id=S1')).ad, '1', `within ${capSec} s of the end: answered`);
  t.equal((await vast('stream_id=S2')).ad, undefined, `${capSec + 30} s after the end: the empty VAST`);
  t.equal((await vast('stream_id=NOSUCH')).ad, undefined, 'a stream of no break: empty');
});

t.test('break_id names the break a viewer behind the edge plays while a later one runs', async (t) => {
  const delay8 = { live_edge_delay_segments: 8, windows_segs: 0 };
  const vast = await endpoint(t, [
    ended(1, 1, 'S1', 20, delay8),
    // The event's next break, begun 5 s ago (ends 25 s from now).
    ended(2, 1, 'S1', -25, delay8, 'active'),
  ]);
  t.equal((await vast('stream_id=S1')).ad, '2', 'without break_id: the latest break');
  t.equal((await vast(`stream_id=S1&break_id=${id(1)}`)).ad, '1', 'break_id: the earlier one');
  t.equal((await vast(`stream_id=S1&break_id=${id(2)}`)).ad, '2', 'and the later one');
  t.equal((await vast(`stream_id=S1&break_id=${id(9)}`)).ad, undefined, 'a break the stream has not: empty');
  t.equal((await vast(`stream_id=S1&break_id=nope`)).status, 400, 'a break_id that is no break id: 400');
});
