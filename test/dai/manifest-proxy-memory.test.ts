/**
 * The manifest proxy with its real collaborators and no Postgres: the memory state store, the
 * stream registry, the micro-cache, event settings held in memory and a BreakBoard reading break
 * rows from memory, mounted on a uWS app against the simulated DAI host (lib/sim/dai-host.ts).
 */
import t from 'tap';
import { DaiHostSim } from '../../lib/sim/dai-host.js';
import { defaultShape } from '../../lib/sim/live-playlist.js';
import { createLogger } from '../../lib/log/index.js';
import { Registry } from '../../lib/metrics/index.js';
import { HttpServer } from '../../lib/http/server.js';
import { keys, MemoryStateStore } from '../../lib/store/index.js';
import { StreamRegistry } from '../../lib/streams/registry.js';
import { ManifestCache } from '../../lib/delivery/manifest-cache.js';
import { Upstream } from '../../lib/delivery/upstream.js';
import { ManifestProxy } from '../../lib/dai/manifest-proxy.js';
import {
  DEFAULT_EVENT_SETTINGS,
  type EventSettings,
  type EventSettingsSource,
} from '../../lib/delivery/event-settings.js';
import { BreakBoard } from '../../lib/squeeze/breaks/board.js';
import type { BreakRow, SegmentRow } from '../../lib/squeeze/breaks/repo.js';
import { breakRow } from '../helpers/break-rows.js';
import { textPathStats } from '../../lib/hls/index.js';
import { call } from '../helpers/http.js';
import { reparse } from '../hls/reparse.js';

const STREAM = '6e1d2c3b-aaaa-bbbb-cccc-1234567890ab:LOC';
const ORIGIN = 'https://origin.example.org';
const EDGE = 'https://edge.example.net';
const SEG_MS = defaultShape.segmentSec * 1000;
const path = (assetKey: string, rest: string) => `/linear/hls/pa/event/${assetKey}/stream/${STREAM}/${rest}`;

/** Event settings held in memory, as EventConfigCache holds the configured events. */
class MemoryEvents implements EventSettingsSource {
  generation = 0;
  private readonly byKey = new Map<string, EventSettings>();
  set(assetKey: string, settings: EventSettings): void {
    this.byKey.set(assetKey, settings);
    this.generation++;
  }
  forAssetKey(assetKey: string | undefined): EventSettings {
    return (assetKey !== undefined && this.byKey.get(assetKey)) || DEFAULT_EVENT_SETTINGS;
  }
}

function readySegment(breakId: string, seq: number): SegmentRow {
  const contentPath = `/content/720p/seg_${seq}.ts`;
  return {
    break_id: breakId,
    assignment: 'a',
    content_path: contentPath,
    content_uri: ORIGIN + contentPath,
    idx: seq,
    start_time: new Date(defaultShape.epochMs + seq * SEG_MS),
    duration: defaultShape.segmentSec,
    ad_index: 0,
    ad_offset: 0,
    events: [],
    output_key: `sqz/${seq}.ts`,
    status: 'ready',
    output_uri: `https://objects.example.com/sqz/720p/seg_${seq}.ts`,
    attempts: 1,
    error: null,
    updated_at: new Date(),
  };
}

t.test('manifest proxy on the memory state store', async (t) => {
  const log = createLogger('silent');
  const metrics = new Registry();
  const state = new MemoryStateStore();
  const sim = await new DaiHostSim().start();
  const streams = new StreamRegistry(state, log, 60_000);
  const cache = new ManifestCache();
  const upstream = new Upstream(sim.url, { deadlineMs: 800 });
  const events = new MemoryEvents();
  const rows: { breaks: BreakRow[]; ready: SegmentRow[] } = { breaks: [], ready: [] };
  const board = new BreakBoard({ board: async () => rows }, state, log, metrics, 3_600_000);
  await board.start();
  const http = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    allowUwsFallback: false,
    metrics,
    log,
    readiness: { state_store: () => state.ping() },
  });
  new ManifestProxy(
    { daiHost: sim.url, publicBaseUrl: EDGE, contentOrigin: ORIGIN, accessLogSampleRate: 0 },
    { upstream, cache, events, streams, breaks: board, metrics, log, inFlight: http.inFlight },
  ).mount(http.app);
  http.mountFallback();
  const { url } = await http.listen();
  t.teardown(async () => {
    await http.drain(0, 0);
    await board.stop();
    await streams.close();
    cache.close();
    await upstream.close();
    sim.stop();
  });
  const get = (p: string) => call(url, 'GET', `/dai/manifest${p}`);

  t.test('master: variants and renditions back through the proxy', async (t) => {
    const r = await get(path('EVKEY', 'master.m3u8?token=abc'));
    t.equal(r.status, 200);
    t.equal(r.headers['content-type'], 'application/vnd.apple.mpegurl');
    t.notMatch(r.text, sim.url, 'no DAI-host URL left');
    t.match(r.text, `${EDGE}/dai/manifest${path('EVKEY', 'variant/720p.m3u8?token=abc')}`);
    t.equal(reparse(r.text).playlists?.length, 2);
  });

  t.test('variant without settings: content to the origin, ads on the DAI host, window unchanged', async (t) => {
    const r = await get(path('EVKEY', 'variant/720p.m3u8'));
    t.equal(r.status, 200);
    const out = reparse(r.text);
    t.equal(out.segments.length, defaultShape.windowSegments);
    t.ok(
      out.segments.every((s) => s.uri.startsWith(`${ORIGIN}/content/`) || s.uri.startsWith(`${sim.url}/linear/pod/`)),
    );
    t.ok(
      out.segments.some((s) => s.uri.startsWith(`${sim.url}/linear/pod/`)),
      'DAI ads kept',
    );
  });

  t.test('the stream is registered in the memory state store', async (t) => {
    await streams.flush();
    const stream = await state.hgetall(keys.stream(STREAM));
    t.equal(stream['asset_key'], 'EVKEY');
    t.equal(stream['flow'], 'dai');
  });

  t.test('DASH: Location back through the proxy, segments pinned upstream', async (t) => {
    const r = await get(`/linear/dash/event/EVKEY/stream/${STREAM}/manifest.mpd`);
    t.equal(r.status, 200);
    t.equal(r.headers['content-type'], 'application/dash+xml');
    t.match(r.text, `<Location>${EDGE}/dai/manifest/linear/dash/event/EVKEY/stream/${STREAM}/manifest.mpd</Location>`);
    t.match(r.text, `<BaseURL>${sim.url}/linear/dash/event/EVKEY/stream/${STREAM}/</BaseURL>`);
  });

  t.test('an event with a window, a delay and a break: trimmed by offsets, break applied on the text', async (t) => {
    events.set('EVBRK', { eventId: 7, windowSegs: 10, liveEdgeDelaySegments: 2 });
    // The break opens six segments before the live edge, inside the kept window even if the edge moves on.
    const live = Math.floor((Date.now() - defaultShape.epochMs) / SEG_MS);
    const startSeq = live - 6;
    rows.breaks = [breakRow('b1', 7, defaultShape.epochMs + startSeq * SEG_MS, 60)];
    rows.ready = Array.from({ length: 20 }, (_, i) => readySegment('b1', live - 14 + i));
    await board.reload();
    const before = { ...textPathStats };
    const r = await get(path('EVBRK', 'variant/720p.m3u8'));
    t.equal(r.status, 200);
    t.equal(textPathStats.trimOffsets - before.trimOffsets, 1, 'trimmed by offsets');
    t.equal(
      textPathStats.trimReference + textPathStats.trimRewrittenFirst - before.trimReference - before.trimRewrittenFirst,
      0,
      'no fallback for the trim',
    );
    // A window with the provider's cue tags (a pod, or its CUE-IN) is rendered line by line, to keep the break from nesting with them.
    const byText = textPathStats.breakText - before.breakText;
    const byLines = textPathStats.breakReference - before.breakReference;
    t.equal(byText + byLines, 1, 'the break rendered once');
    const pod = byLines === 1;
    if (pod)
      t.match(
        r.text,
        /#EXT-X-CUE-(OUT:18|IN)\n#EXT-X-DISCONTINUITY\n/,
        'line by line only when the window has the provider’s cue tags',
      );
    else t.notMatch(r.text, /\/linear\/pod\//, 'on the text when it has none');
    const out = reparse(r.text);
    t.equal(out.segments.length, 10, 'WindowsSegs 10');
    const contentSeqs = out.segments
      .map((s) => /\/seg_(\d+)\.ts$/.exec(s.uri))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]));
    t.ok(
      contentSeqs.length > 0 && Math.max(...contentSeqs) <= live - 1,
      'the live-edge delay held segments back (the edge may move on by one)',
    );
    // With a pod inside the break, the part after it opens with CUE-OUT:<seconds left>.
    t.match(
      r.text,
      pod ? /#EXT-X-CUE-OUT:[\d.]+\n(#[^\n]*\n)*https:\/\/objects\.example\.com\/sqz\// : /#EXT-X-CUE-OUT:60\n/,
      'the break opens with CUE-OUT',
    );
    const squeezed = out.segments.filter((s) => s.uri.startsWith('https://objects.example.com/sqz/'));
    t.ok(squeezed.length >= 1, `${squeezed.length} squeezed segments`);
    for (const s of squeezed) t.ok(Number(/seg_(\d+)/.exec(s.uri)![1]) >= startSeq, `${s.uri} inside the break`);
    t.notMatch(
      r.text,
      new RegExp(`${ORIGIN}/content/720p/seg_(${startSeq})\\.ts`),
      'the break’s first content segment is replaced',
    );
    const plain = await get(path('EVKEY', 'variant/720p.m3u8'));
    t.notMatch(plain.text, /objects\.example\.com|CUE-OUT:60/, 'another event is untouched');
    const scraped = metrics.render();
    t.match(scraped, /hls_text_path_total\{op="trim",way="offsets"\} [1-9]/, 'exported to Prometheus');
  });
});
