/**
 * The HLS readers every consumer off the hot path uses (issue 28 item 3): lines, target duration,
 * URI resolution, the master reader with its options, the media reader. Each consumer's own tests
 * (stitching, the break source, the cue monitor, ID3 inspection) pin what it makes of them.
 */
import t from 'tap';
import {
  masterUris,
  numberedLines,
  playlistLines,
  readMaster,
  readMedia,
  resolveUri,
  targetDuration,
  uriResolver,
} from '../../lib/hls/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

t.test('playlistLines: LF, CRLF and a bare CR end a line; lines trimmed, blank lines and a BOM dropped', async (t) => {
  const want = ['#EXTM3U', '#EXTINF:4,', 'a.ts', '#EXT-X-ENDLIST'];
  t.same(playlistLines('#EXTM3U\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n'), want);
  t.same(playlistLines('\ufeff#EXTM3U\r\n\r\n  #EXTINF:4,  \ra.ts \n\n#EXT-X-ENDLIST'), want);
  t.same(playlistLines(''), []);
  t.same(
    numberedLines('a\r\n\r\nb\rc'),
    ['a', '', 'b', 'c'],
    'numberedLines keeps blank lines: an index is a line number',
  );
});

t.test('targetDuration: the first tag at a line start; absent, zero or unreadable is undefined', async (t) => {
  t.equal(targetDuration('#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\na.ts\n'), 6);
  t.equal(targetDuration('#EXTM3U\r\n  #EXT-X-TARGETDURATION:10\r\n'), 10);
  t.equal(targetDuration('#EXTM3U\n#EXT-X-TARGETDURATION:4.5'), 4.5, 'at the end of the text');
  t.equal(targetDuration('#EXTM3U\n#EXT-X-TARGETDURATION:9\nx.ts\n#EXT-X-TARGETDURATION:10\n'), 9, 'the first');
  t.equal(targetDuration('#EXTM3U\n#EXTINF:6,\na.ts\n'), undefined);
  t.equal(targetDuration('#EXTM3U\n#EXT-X-TARGETDURATION:0\n'), undefined);
  t.equal(targetDuration('#EXTM3U\n#EXT-X-TARGETDURATION:-1\n'), undefined);
  t.equal(targetDuration('#EXTM3U\n#EXT-X-TARGETDURATION:six\n'), undefined);
  t.equal(targetDuration('#EXTM3U\n#X-NOTE:#EXT-X-TARGETDURATION:6\n'), undefined, 'not inside another line');
});

t.test('resolveUri and uriResolver: a URI with a scheme untouched, others against the playlist', async (t) => {
  const base = 'https://cdn.example.com/live/ev/master.m3u8?token=abc';
  t.equal(resolveUri('v/720p.m3u8', base), 'https://cdn.example.com/live/ev/v/720p.m3u8');
  t.equal(resolveUri('/root/a.m3u8', base), 'https://cdn.example.com/root/a.m3u8');
  t.equal(resolveUri('../up/a.m3u8?x=1', base), 'https://cdn.example.com/live/up/a.m3u8?x=1');
  t.equal(resolveUri('HTTPS://Other.example.org/a/../b.m3u8', base), 'HTTPS://Other.example.org/a/../b.m3u8');
  t.equal(resolveUri('//cdn2.example.com/a.ts', base), 'https://cdn2.example.com/a.ts');
  t.equal(resolveUri('a.ts', 'not a url'), undefined, 'nothing resolves it');
  const resolve = uriResolver(base);
  for (const uri of ['seg_1.ts', 'v/seg_2.ts?x=1', '../a.ts', './b.ts', '/c.ts', 'https://x.example/d.ts', 'e f.ts'])
    t.equal(resolve(uri), resolveUri(uri, base), `the fast path agrees with URL: ${uri}`);
});

const MASTER = [
  '#EXTM3U',
  '#EXT-X-VERSION:6',
  '#EXT-X-INDEPENDENT-SEGMENTS',
  '#EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="x"',
  '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,URI="audio/en.m3u8"',
  '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",URI="subs/en.m3u8"',
  '#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"',
  '#EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,AUDIO="aac"',
  'v/720p.m3u8',
  '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="v/720p-iframes.m3u8"',
  '#EXT-X-STREAM-INF:BANDWIDTH=oops',
  '',
  'v/360p.m3u8',
  '#EXT-X-STREAM-INF:BANDWIDTH=2500000',
  'v/720p.m3u8',
  'stray.m3u8',
].join('\r\n');
const BASE = 'https://cdn.example.com/live/master.m3u8';

t.test('readMaster: variants with their URI line, renditions, master tags', async (t) => {
  const m = readMaster(MASTER);
  t.ok(m.header);
  t.notOk(m.hasSegments);
  t.equal(m.version, 6);
  t.ok(m.independentSegments);
  t.same(m.session, ['#EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="x"']);
  t.same(
    m.variants.map((v) => [v.uri, v.bandwidth]),
    [
      ['v/720p.m3u8', 2500000],
      ['v/360p.m3u8', 0],
      ['v/720p.m3u8', 2500000],
    ],
    'a URI line after anything but EXT-X-STREAM-INF is no variant; no I-frame playlist',
  );
  t.same(
    m.renditions.map((r) => [r.type, r.uri]),
    [
      ['AUDIO', 'audio/en.m3u8'],
      ['SUBTITLES', 'subs/en.m3u8'],
      ['CLOSED-CAPTIONS', undefined],
    ],
  );
  t.equal(m.entries.length, 6, 'document order: renditions, then variants');
  t.ok(readMaster('#EXTM3U\n#EXTINF:4,\na.ts\n').hasSegments, 'a media playlist');
  t.notOk(readMaster('<html>').header);
});

t.test('masterUris: the consumers’ choices as options, each URL once', async (t) => {
  const urls = (opts: Parameters<typeof masterUris>[2]) => masterUris(MASTER, BASE, opts).map((u) => u.url);
  const abs = (p: string) => `https://cdn.example.com/live/${p}`;
  t.same(
    urls({}),
    [abs('audio/en.m3u8'), abs('subs/en.m3u8'), abs('v/720p.m3u8'), abs('v/360p.m3u8')],
    'document order',
  );
  t.same(urls({ order: 'variants-first' }), [
    abs('v/720p.m3u8'),
    abs('v/360p.m3u8'),
    abs('audio/en.m3u8'),
    abs('subs/en.m3u8'),
  ]);
  t.same(urls({ renditions: { except: ['SUBTITLES', 'CLOSED-CAPTIONS'] } }), [
    abs('audio/en.m3u8'),
    abs('v/720p.m3u8'),
    abs('v/360p.m3u8'),
  ]);
  t.same(urls({ renditions: 'none', limit: 1 }), [abs('v/720p.m3u8')], 'the first variant');
  t.same(urls({ limit: 2 }), [abs('audio/en.m3u8'), abs('subs/en.m3u8')]);
  t.same(
    masterUris(MASTER, BASE, { renditions: 'none' }).map((u) => u.bandwidth),
    [2500000, undefined],
    'a bandwidth only when positive',
  );
  t.same(masterUris('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n', 'relative/base'), [], 'unresolvable: left out');
});

t.test('readMedia reads what parseMedia reads, from the text', async (t) => {
  const p = readMedia('#EXTM3U\r\n#EXT-X-TARGETDURATION:6\r\n#EXT-X-MEDIA-SEQUENCE:7\r\n\r\n#EXTINF:6,\r\n a.ts \r\n');
  t.equal(p.targetDuration, 6);
  t.equal(p.mediaSequence, 7);
  t.same(
    p.segments.map((s) => [s.uri, s.duration]),
    [['a.ts', 6]],
  );
  // Two EXTINF before one URI: one segment, its duration the last one's (a duration without a segment plays nothing).
  t.same(
    readMedia('#EXTM3U\n#EXTINF:22,\n#EXTINF:10,\nb.ts\n#EXTINF:6,\n').segments.map((s) => s.duration),
    [10],
  );
});

t.test('the corpus: the two target-duration readings agree wherever the tag heads the playlist', async (t) => {
  let n = 0;
  for (const f of fixtureFiles('hls', ['.m3u8'])) {
    const text = fixture(f);
    const p = readMedia(text);
    if (!p.header.some((l) => l.startsWith('#EXT-X-TARGETDURATION:'))) continue;
    n++;
    t.equal(targetDuration(text) ?? 0, Math.max(0, p.targetDuration), f); // parseMedia keeps a negative one as written
  }
  t.ok(n > 50, `${n} media playlists`);
});
