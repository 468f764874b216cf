import t from 'tap';
import { parseMrss, MrssError, clockSeconds } from '../../lib/catalog/mrss.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

// Catalogued items per fixture (items without guid, contentId or link cannot be keyed and are skipped).
const expected: Record<string, number> = {
  'mrss/rss-parser/guardian.rss': 55,
  'mrss/rss-parser/atom-customfields.atom': 15,
  'mrss/rssreader/youtube_example1.xml': 15,
  'mrss/rssreader/mediarss_media-rss.xml': 10,
  'mrss/rssreader/opensearch_example2.xml': 1,
  'mrss/rss-parser/feedburner.atom': 25,
  'mrss/rss-parser/reddit.rss': 24,
};

t.test('every MRSS fixture parses with the expected item count', async (t) => {
  const files = fixtureFiles('mrss', ['.xml', '.rss', '.atom']);
  t.equal(files.length, 28);
  for (const f of files) {
    const text = fixture(f);
    const { items, skipped } = parseMrss(text);
    if (f.startsWith('mrss/feedparser/')) t.equal(items.length + skipped, 1, `${f}: one item, read`);
    else t.equal(items.length, expected[f] ?? 1, f);
    for (const i of items) if (!/^[0-9a-f]{64}$/.test(i.content_hash)) t.fail(`${f}: hash`);
  }
});

t.test('fields, precedence and renditions', async (t) => {
  const { items } = parseMrss(fixture('mrss/rssreader/mediarss_media-rss-example-1.xml'));
  const [i] = items;
  t.equal(i!.guid, 'http://www.foo.com/item1.htm', 'no guid: the link');
  t.equal(i!.title, 'Movie Title: Is this a good movie?');
  t.same(i!.renditions, [{ url: 'http://www.foo.com/trailer.mov', type: 'video/quicktime', kind: 'other' }]);
  t.same(i!.thumbnails, ['http://www.example.com/examples/mrss/example.jpg', 'http://www.foo.com/keyframe.jpg']);
});

t.test('vendor cue points, guid fallbacks, undeclared prefixes, BOM', async (t) => {
  const xml = `\uFEFF  <?xml version="1.0"?>
<rss version="2.0"><channel><atom:link rel="next" href="https://feeds.example.com/p2"/>
<item><dfpvideo:contentId>c-1</dfpvideo:contentId><title>One</title><pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate>
<dfpvideo:cuepoints>30,90.5</dfpvideo:cuepoints>
<media:group><media:content url="https://cdn.example.com/a/master.m3u8" type="application/x-mpegURL" bitrate="3000" width="1280" height="720" duration="120"/></media:group>
</item>
<item><guid>g-2</guid><title>Two</title><jwplayer:cuepoints>00:00:10.50,00:01:00</jwplayer:cuepoints><ad:cuepoints>1500</ad:cuepoints>
<media:content url="https://cdn.example.com/b.mpd" type="application/dash+xml"/><media:content url="https://cdn.example.com/b.mp4" type="video/mp4"/></item>
<item><title>no id at all</title></item>
</channel></rss>`;
  const { items, nextLink } = parseMrss(xml);
  t.equal(nextLink, 'https://feeds.example.com/p2');
  t.equal(items.length, 2, 'an item without guid, contentId or link is skipped');
  t.match(items[0], {
    guid: 'c-1',
    title: 'One',
    published: '2026-11-02T10:00:00.000Z',
    duration: 120,
    cue_points: [30, 90.5],
    renditions: [{ kind: 'hls', bitrate: 3000, width: 1280, height: 720 }],
  });
  t.same(items[1]!.cue_points, [1.5, 10.5, 60]);
  t.same(
    items[1]!.renditions.map((r) => r.kind),
    ['dash', 'mp4'],
  );
});

t.test('channel-level media elements are the last fallback', async (t) => {
  const { items } =
    parseMrss(`<rss xmlns:media="http://search.yahoo.com/mrss/"><channel><media:thumbnail url="https://img.example.com/ch.jpg"/><media:content url="https://cdn.example.com/ch.m3u8"/>
<item><guid>a</guid></item><item><guid>b</guid><media:thumbnail url="https://img.example.com/b.jpg"/><media:group><media:content url="https://cdn.example.com/b.mpd"/></media:group></item></channel></rss>`);
  t.same(items[0]!.thumbnails, ['https://img.example.com/ch.jpg']);
  t.same(
    items[0]!.renditions.map((r) => r.url),
    ['https://cdn.example.com/ch.m3u8'],
  );
  t.same(items[1]!.thumbnails, ['https://img.example.com/b.jpg']);
  t.same(
    items[1]!.renditions.map((r) => r.kind),
    ['dash'],
  );
});

t.test('hostile and malformed input is rejected cleanly', async (t) => {
  t.throws(
    () =>
      parseMrss(
        '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x "y">]><rss><channel><item><guid>&x;</guid></item></channel></rss>',
      ),
    MrssError,
  );
  t.throws(() => parseMrss('<rss><channel><item><guid>a</guid></channel>'), MrssError);
  t.throws(() => parseMrss('not xml at all <'), MrssError);
  t.throws(() => parseMrss(''), MrssError);
  t.throws(
    () =>
      parseMrss(`<rss><channel>${'<item><guid>x</guid></item>'.repeat(20)}</channel></rss>`, {
        maxItems: 10,
        maxItemChars: 1000,
        maxDepth: 64,
      }),
    /more than 10 items/,
  );
  t.throws(
    () =>
      parseMrss(`<rss><channel><item><guid>${'x'.repeat(5000)}</guid></item></channel></rss>`, {
        maxItems: 10,
        maxItemChars: 1000,
        maxDepth: 64,
      }),
    /exceeds/,
  );
  t.throws(() => parseMrss(`${'<a>'.repeat(100)}${'</a>'.repeat(100)}`), /nests too deep/);
});

t.test('clockSeconds', async (t) => {
  t.equal(clockSeconds('01:02:03.5'), 3723.5);
  t.equal(clockSeconds('90'), 90);
  t.equal(clockSeconds('a:b'), undefined);
});
