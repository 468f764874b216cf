import t from 'tap';
import { PlaylistRewriter, rewritePlaylist, splitLines, type UriRules } from '../../lib/hls/index.js';
import { livePlaylist, masterPlaylist, defaultShape } from '../../lib/sim/live-playlist.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';
import { reparse } from './reparse.js';

const rules: UriRules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge.example.net/dai/manifest',
  contentOrigin: 'https://origin.example.org',
  playlistUrl: 'https://dai.example.com/linear/hls/event/EV1/stream/s1:LOC/variant/720p.m3u8?tok=1',
};

const rewrite = (text: string) => rewritePlaylist(text, rules).text;
const linesOf = (text: string) => {
  const r = rewritePlaylist(text, rules);
  return { ...r, lines: splitLines(r.text) };
};

t.test('master: DAI-host variant and rendition URIs go through the proxy, query kept', async (t) => {
  const src = masterPlaylist('https://dai.example.com', '/linear/hls/event/EV1/stream/s1:LOC', 'a=1&b=2');
  const { kind, text: out } = rewritePlaylist(src, rules);
  t.equal(kind, 'master');
  t.notMatch(out, /https:\/\/dai\.example\.com/, 'no DAI-host URI left');
  t.match(
    out,
    /^https:\/\/edge\.example\.net\/dai\/manifest\/linear\/hls\/event\/EV1\/stream\/s1:LOC\/variant\/720p\.m3u8\?a=1&b=2$/m,
  );
  t.match(
    out,
    /URI="https:\/\/edge\.example\.net\/dai\/manifest\/linear\/hls\/event\/EV1\/stream\/s1:LOC\/audio\/en\.m3u8\?a=1&b=2"/,
  );
  t.match(out, /#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=200000,URI="https:\/\/edge\.example\.net\/dai\/manifest\//);
  const parsed = reparse(out);
  t.equal(parsed.playlists?.length, 2);
  t.ok(parsed.playlists?.every((p) => p.uri.startsWith('https://edge.example.net/dai/manifest/')));
});

t.test('master: other hosts and relative URIs', async (t) => {
  const src =
    '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nhttps://other.example.com/a.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2\n/root/b.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=3\nrel/c.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=4\nHTTPS://DAI.EXAMPLE.COM/d.m3u8\n';
  t.equal(
    rewrite(src),
    '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nhttps://other.example.com/a.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2\nhttps://edge.example.net/dai/manifest/root/b.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=3\nrel/c.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=4\nhttps://edge.example.net/dai/manifest/d.m3u8\n',
  );
});

t.test('media: root-relative → origin, absolute DAI ads untouched, document-relative resolved upstream', async (t) => {
  const src = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:6',
    '#EXT-X-MAP:URI="/init.mp4"',
    '#EXT-X-KEY:METHOD=AES-128,URI="/keys/k1",IV=0x1',
    '#EXTINF:6,',
    '/content/seg1.ts',
    '#EXTINF:6,',
    'https://dai.example.com/ads/ad1.ts',
    '#EXTINF:6,',
    'seg3.ts',
    '#EXTINF:6,',
    '../up/seg4.ts',
    '#EXTINF:6,',
    '//cdn.example.com/seg5.ts',
  ].join('\n');
  const { kind, lines } = linesOf(src);
  t.equal(kind, 'media');
  t.same(
    lines.filter((l) => !l.startsWith('#')),
    [
      'https://origin.example.org/content/seg1.ts',
      'https://dai.example.com/ads/ad1.ts',
      'https://dai.example.com/linear/hls/event/EV1/stream/s1:LOC/variant/seg3.ts',
      'https://dai.example.com/linear/hls/event/EV1/stream/s1:LOC/up/seg4.ts',
      '//cdn.example.com/seg5.ts',
    ],
  );
  t.ok(lines.includes('#EXT-X-MAP:URI="https://origin.example.org/init.mp4"'));
  t.ok(lines.includes('#EXT-X-KEY:METHOD=AES-128,URI="https://origin.example.org/keys/k1",IV=0x1'));
});

t.test('garbage is flagged invalid; BOM and CRLF tolerated', async (t) => {
  t.equal(rewritePlaylist('<html>oops</html>', rules).valid, false);
  t.equal(rewritePlaylist('', rules).valid, false);
  const bom = linesOf('\uFEFF#EXTM3U\r\n#EXT-X-TARGETDURATION:6\r\n#EXTINF:6,\r\n/a.ts\r\n');
  t.equal(bom.valid, true);
  t.same(bom.lines, ['#EXTM3U', '#EXT-X-TARGETDURATION:6', '#EXTINF:6,', 'https://origin.example.org/a.ts']);
});

t.test('streaming equals whole-document output at every split of a live playlist (CRLF too)', async (t) => {
  const live = livePlaylist('s1', defaultShape.epochMs + 500 * 6000).replace(/\n/g, '\r\n');
  const whole = rewrite(live);
  const bytes = Buffer.from(live);
  let mismatches = 0;
  for (let split = 0; split <= bytes.length; split++) {
    const r = new PlaylistRewriter(rules);
    if (r.push(bytes.subarray(0, split)) + r.push(bytes.subarray(split)) + r.end() !== whole) mismatches++;
  }
  t.equal(mismatches, 0, `all ${bytes.length + 1} two-way splits match`);
});

/**
 * The two-piece splits that can differ for PlaylistRewriter. Its state at a split is the lines
 * before it (one block), the partial line after the last LF (the carry) and, for bytes, an
 * incomplete UTF-8 tail; each chunk's line ends are normalised before the carry is put in front.
 * So two splits inside one line's ASCII interior, neither next to a CR or LF, leave the same state:
 * every position near a line end, near a non-ASCII byte and in the first bytes (BOM, #EXTM3U) is
 * tried, and two more in each line. The two fixtures over 20,000 bytes are split at every 97th
 * position. (Every position took 19 s of CPU.)
 */
function splitPoints(bytes: Buffer): Iterable<number> {
  const at = new Set<number>();
  const add = (from: number, to: number) => {
    for (let p = Math.max(0, from); p <= Math.min(bytes.length, to); p++) at.add(p);
  };
  add(0, 16);
  add(bytes.length - 4, bytes.length);
  if (bytes.length > 20_000) {
    for (let p = 0; p < bytes.length; p += 97) at.add(p);
    return at;
  }
  let lineStart = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b > 0x7f) add(i - 3, i + 4);
    if (b !== 0x0a && b !== 0x0d) continue;
    add(i - 1, i + 2);
    add(lineStart + 1, lineStart + 1);
    add((lineStart + i) >> 1, (lineStart + i) >> 1);
    lineStart = i + 1;
  }
  return at;
}

t.test(
  'streaming equals whole-document output for every HLS fixture, split at every distinct position (two pieces) and in 1-byte chunks',
  async (t) => {
    const files = fixtureFiles('hls', ['.m3u8']);
    t.ok(files.length > 50, `${files.length} fixtures`);
    for (const f of files) {
      const text = fixture(f);
      const whole = rewrite(text);
      const bytes = Buffer.from(text);
      let bad = 0;
      for (const split of splitPoints(bytes)) {
        const r = new PlaylistRewriter(rules);
        if (r.push(bytes.subarray(0, split)) + r.push(bytes.subarray(split)) + r.end() !== whole) bad++;
        const s = new PlaylistRewriter(rules);
        if (s.push(text.slice(0, split)) + s.push(text.slice(split)) + s.end() !== whole) bad++;
      }
      const r = new PlaylistRewriter(rules);
      let bytewise = '';
      for (let i = 0; i < bytes.length; i++) bytewise += r.push(bytes.subarray(i, i + 1));
      bytewise += r.end();
      if (bad || bytewise !== whole) t.fail(`${f}: ${bad} split mismatches`);
    }
    t.pass('checked');
  },
);

t.test('every HLS fixture rewrites into a playlist the independent parser reads alike', async (t) => {
  const files = fixtureFiles('hls', ['.m3u8']);
  t.equal(files.length, 254, 'HLS fixtures read');
  for (const f of files) {
    const text = fixture(f);
    const before = reparse(text);
    const after = reparse(rewrite(text));
    if (
      before.segments.length !== after.segments.length ||
      (before.playlists?.length ?? 0) !== (after.playlists?.length ?? 0) ||
      before.mediaSequence !== after.mediaSequence
    ) {
      t.fail(
        `${f}: segments ${before.segments.length}→${after.segments.length}, playlists ${before.playlists?.length}→${after.playlists?.length}`,
      );
      continue;
    }
    for (const s of after.segments) {
      if (s.uri.startsWith('/') && !s.uri.startsWith('//')) t.fail(`${f}: root-relative URI left: ${s.uri}`);
    }
  }
  t.pass('checked');
});

// Found by test/fuzz/hls.test.ts: a "relative" URI that the URL parser reads as a host-less network path made the rewrite throw.
t.test('a URI that cannot resolve is left as it is, never a throw', async (t) => {
  const src =
    '#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-KEY:METHOD=AES-128,URI=" //#../k"\n#EXTINF:6,\n\\\\?../a.ts\n#EXTINF:6,\n\\/#../b.ts\n';
  t.equal(rewrite(src), src);
});
