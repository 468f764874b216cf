import t from 'tap';
import { applyBreak, applyBreakText, joinLines, parseMedia, rewritePlaylist, splitLines, textPathSnapshot, textPathStats, trimLiveWindow } from '../../lib/hls/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { livePlaylist, defaultShape, type LiveShape } from '../../lib/sim/live-playlist.js';
import { reparse } from './reparse.js';
import { lateHeaderTag } from './text-path-shapes.js';

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
  t.equal(
    lines.find((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')),
    '#EXT-X-CUE-OUT-CONT:ElapsedTime=66,Duration=600',
  );
});

t.test('absolute DAI ad segments are never squeezed', async (t) => {
  const withAds = splitLines(rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text);
  const window = { startMs: at(971), endMs: at(1001), durationSec: 180 };
  const { lines } = applyBreak(withAds, window, squeezedUri, (u) => u.startsWith('https://origin.example.org/'));
  t.ok(
    lines.some((l) => l.startsWith('https://dai.example.com/linear/pod/')),
    'ads kept',
  );
  t.notOk(
    lines.some((l) => l.startsWith('https://origin.example.org/content/')),
    'every content segment squeezed',
  );
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

t.test('the text form equals the line-based form on every fixture and live shape, for windows at every segment boundary', async (t) => {
  const docs: Array<[string, string]> = fixtureFiles('hls', ['.m3u8']).map((f) => [f, fixture(f)]);
  t.equal(docs.length, 254, 'HLS fixtures read');
  docs.push(['live', rewritePlaylist(livePlaylist('ev', now, shape), rules).text]);
  docs.push(['live with DAI pods', rewritePlaylist(livePlaylist('ev', now, { ...shape, adEvery: 20, adSegments: 3 }), rules).text]);
  docs.push(['no trailing newline', rewritePlaylist(livePlaylist('ev', now, shape), rules).text.trimEnd()]);
  docs.push(['header tag among the first segment’s tags', '#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00Z\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\na.ts\n#EXTINF:6,\nb.ts\n']);
  let compared = 0;
  const wrongWay: string[] = [];
  let referenced = 0;
  for (const [name, text] of docs) {
    const lines = splitLines(text);
    // The text form defers to the line-based one only for a header tag after a segment's tag.
    const toReference = lateHeaderTag(text);
    if (toReference) referenced++;
    const before = textPathSnapshot();
    let calls = 0;
    const times = parseMedia(lines)
      .segments.map((s) => s.pdt)
      .filter((x): x is number => x !== undefined);
    const base = times[0] ?? Date.UTC(2026, 0, 1);
    const starts = [base - 10_000, ...times, ...times.map((x) => x + 1500), base + 3_600_000];
    for (const startMs of starts) {
      for (const len of [6_000, 18_000, 600_000]) {
        const window = { startMs, endMs: startMs + len, durationSec: len / 1000 };
        let i = 0;
        const squeeze = (u: string) => (i++ % 3 === 2 ? undefined : `https://objects.example.com/sqz/${u.length}.ts`);
        const reference = applyBreak(lines, window, squeeze, (u) => !u.includes('/linear/pod/'));
        i = 0;
        const fast = applyBreakText(text, window, squeeze, (u) => !u.includes('/linear/pod/'));
        calls++;
        if (fast.text !== joinLines(reference.lines) || fast.notReady !== reference.notReady || fast.squeezed.join() !== reference.squeezed.join()) {
          t.fail(`${name}: differs for window ${startMs}+${len}`);
          return;
        }
        compared++;
      }
    }
    const byText = textPathStats.breakText - before.breakText;
    const byLines = textPathStats.breakReference - before.breakReference;
    if (toReference ? byText !== 0 || byLines !== calls : byLines !== 0 || byText !== calls) wrongWay.push(`${name}: ${byText} on the text, ${byLines} by lines`);
  }
  t.ok(compared > 100, `${compared} renderings identical`);
  t.same(wrongWay, [], 'on the text, unless a header tag stands after a segment tag (then always by lines)');
  // Raw fixtures here: CRLF ones count too (`#EXTM3U\r` is no header tag); on rewritten text it is 65 of 176.
  t.equal(referenced, 77, 'documents left to the line-based form (76 fixtures and the synthetic one)');
});

t.test('a window that starts between segment boundaries still opens with CUE-OUT', async (t) => {
  const window = { startMs: at(990) + 3000, endMs: at(995) + 3000, durationSec: 30 };
  for (const text of [joinLines(applyBreak(media(), window, squeezedUri).lines), applyBreakText(joinLines(media()), window, squeezedUri).text]) {
    const lines = splitLines(text);
    const out = lines.indexOf('#EXT-X-CUE-OUT:30');
    t.ok(out > 0, 'CUE-OUT present');
    t.equal(
      lines.slice(out).find((l) => !l.startsWith('#')),
      'https://objects.example.com/sqz/ev/seg_991.ts',
      'on the first segment inside the window',
    );
    t.equal(lines.filter((l) => l.startsWith('#EXT-X-CUE-OUT-CONT')).length, 4);
  }
});

t.test('back-to-back breaks: the first one’s CUE-IN comes before the next one’s CUE-OUT', async (t) => {
  const first = { startMs: at(985), endMs: at(990), durationSec: 30 };
  const second = { startMs: at(990), endMs: at(993), durationSec: 18 };
  const once = applyBreakText(joinLines(media()), first, squeezedUri).text;
  const twice = applyBreakText(once, second, squeezedUri).text;
  t.equal(twice, joinLines(applyBreak(splitLines(once), second, squeezedUri).lines), 'text and line forms agree');
  t.match(twice, /#EXT-X-CUE-IN\n#EXT-X-CUE-OUT:18\n#EXT-X-PROGRAM-DATE-TIME/);
});
