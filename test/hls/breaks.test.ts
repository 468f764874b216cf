import t from 'tap';
import { applyBreak, joinLines, rewritePlaylist, splitLines, trimLiveWindow } from '../../lib/hls/index.js';
import { livePlaylist, defaultShape, type LiveShape } from '../../lib/sim/live-playlist.js';
import { reparse } from './reparse.js';

const shape: LiveShape = { ...defaultShape, adEvery: 0 };
const rules = { daiHost: 'https://dai.example.com', proxyBase: 'https://edge/dai/manifest', contentOrigin: 'https://origin.example.org', playlistUrl: 'https://dai.example.com/x/v.m3u8' };
const now = shape.epochMs + 1000 * 6000 + 500; // live edge: seq 1000, window 971..1000
const at = (seq: number) => shape.epochMs + seq * 6000;
const media = () => splitLines(rewritePlaylist(livePlaylist('ev', now, shape), rules).text);
const squeezedUri = (u: string) => u.replace('https://origin.example.org/content/', 'https://objects.example.com/sqz/');

t.test('break segments replaced, cue-out / cue-out-cont / cue-in placed', async (t) => {
  const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
  const { lines, notReady, squeezed } = applyBreak(media(), window, squeezedUri);
  t.equal(notReady, 0);
  t.equal(squeezed.length, 5);
  const text = joinLines(lines);
  t.match(text, /#EXT-X-CUE-OUT:30\n#EXT-X-PROGRAM-DATE-TIME:[^\n]+\n#EXTINF:6\.000,\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_990\.ts\n/);
  t.match(text, /#EXT-X-CUE-OUT-CONT:ElapsedTime=6,Duration=30\n[^\n]+\n[^\n]+\nhttps:\/\/objects\.example\.com\/sqz\/ev\/seg_991\.ts\n/);
  t.match(text, /#EXT-X-CUE-IN\n[^\n]+\n[^\n]+\nhttps:\/\/origin\.example\.org\/content\/ev\/seg_995\.ts\n/);
  t.equal(lines.filter((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')).length, 4);
  t.equal(reparse(text).segments.length, 30, 'still 30 segments');
});

t.test('not-ready squeezeback segments leave the content in place', async (t) => {
  const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
  const ready = new Set(['https://origin.example.org/content/ev/seg_990.ts']);
  const { lines, notReady } = applyBreak(media(), window, (u) => (ready.has(u) ? squeezedUri(u) : undefined));
  t.equal(notReady, 4);
  t.ok(lines.includes('https://origin.example.org/content/ev/seg_991.ts'));
  t.ok(lines.includes('https://objects.example.com/sqz/ev/seg_990.ts'));
});

t.test('a break that began before the window head starts with cue-out-cont; an open break has no cue-in', async (t) => {
  const window = { startMs: at(960), endMs: at(2000), durationSec: 600 };
  const { lines } = applyBreak(media(), window, squeezedUri);
  t.notOk(lines.some((l) => l.startsWith('#EXT-X-CUE-OUT:')));
  t.notOk(lines.includes('#EXT-X-CUE-IN'));
  t.equal(lines.find((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')), '#EXT-X-CUE-OUT-CONT:ElapsedTime=66,Duration=600');
});

t.test('absolute DAI ad segments are never squeezed', async (t) => {
  const withAds = splitLines(rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text);
  const window = { startMs: at(971), endMs: at(1001), durationSec: 180 };
  const { lines } = applyBreak(withAds, window, squeezedUri, (u) => u.startsWith('https://origin.example.org/'));
  t.ok(lines.some((l) => l.startsWith('https://dai.example.com/linear/pod/')), 'ads kept');
  t.notOk(lines.some((l) => l.startsWith('https://origin.example.org/content/')), 'every content segment squeezed');
});

t.test('trim then break (the variant rewrite order)', async (t) => {
  const window = { startMs: at(990), endMs: at(995), durationSec: 30 };
  const trimmed = trimLiveWindow(media(), { windowSegments: 10, delaySegments: 2 });
  const { lines } = applyBreak(trimmed, window, squeezedUri);
  const parsed = reparse(joinLines(lines));
  t.equal(parsed.segments.length, 10);
  t.equal(parsed.mediaSequence, 989);
  t.equal(lines.filter((l) => l.startsWith('https://objects.example.com/')).length, 5);
});
