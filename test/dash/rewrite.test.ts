import t from 'tap';
import { rewriteMpd } from '../../lib/dash/index.js';
import { fixture, fixtureFiles } from '../helpers/fixtures.js';

const rules = {
  daiHost: 'https://dai.example.com',
  proxyBase: 'https://edge.example.net/dai/manifest',
  contentOrigin: 'https://origin.example.org',
  playlistUrl: 'https://dai.example.com/linear/dash/event/E/stream/S:LOC/manifest.mpd?a=1&b=2',
};

t.test('Location and PatchLocation on the DAI host point back at the service', async (t) => {
  const src = `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic">
  <Location>https://dai.example.com/linear/dash/event/E/stream/S:LOC/manifest.mpd?x=1&amp;y=2</Location>
  <PatchLocation ttl="60">https://dai.example.com/linear/dash/patch.mpp</PatchLocation>
  <Period id="p0" start="PT0S"><AdaptationSet><Representation id="v"><SegmentTemplate media="seg_$Number$.m4s"/></Representation></AdaptationSet></Period>
</MPD>`;
  const { valid, text } = rewriteMpd(src, rules);
  t.equal(valid, true);
  t.match(
    text,
    /<Location>https:\/\/edge\.example\.net\/dai\/manifest\/linear\/dash\/event\/E\/stream\/S:LOC\/manifest\.mpd\?x=1&amp;y=2<\/Location>/,
  );
  t.match(
    text,
    /<PatchLocation ttl="60">https:\/\/edge\.example\.net\/dai\/manifest\/linear\/dash\/patch\.mpp<\/PatchLocation>/,
  );
  t.match(
    text,
    /<BaseURL>https:\/\/dai\.example\.com\/linear\/dash\/event\/E\/stream\/S:LOC\/<\/BaseURL>\s*<Location>/,
    'relative segments pinned upstream, BaseURL before Location',
  );
  t.match(text, /media="seg_\$Number\$\.m4s"/, 'segment templates untouched');
});

t.test('an MPD-level relative BaseURL is made absolute; absolute ones and other hosts untouched', async (t) => {
  const rel = rewriteMpd('<MPD><BaseURL>media/</BaseURL><Period/></MPD>', rules).text;
  t.equal(
    rel,
    '<MPD><BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/media/</BaseURL><Period/></MPD>',
  );
  const abs =
    '<MPD><BaseURL>https://cdn.example.com/x/</BaseURL><Location>https://other.example.com/m.mpd</Location><Period/></MPD>';
  t.equal(rewriteMpd(abs, rules).text, abs);
});

t.test('garbage is flagged invalid', async (t) => {
  t.equal(rewriteMpd('<html></html>', rules).valid, false);
  t.equal(rewriteMpd('#EXTM3U', rules).valid, false);
});

t.test('every DASH fixture stays well-formed and keeps its Periods', async (t) => {
  const files = fixtureFiles('dash', ['.mpd']);
  t.ok(files.length > 30, `${files.length} fixtures`);
  for (const f of files) {
    const src = fixture(f);
    const { valid, text } = rewriteMpd(src, rules);
    if (!valid) {
      if (/<MPD/.test(src)) t.fail(`${f}: judged invalid`);
      continue;
    }
    const count = (s: string, re: RegExp) => (s.match(re) ?? []).length;
    if (count(text, /<Period[\s>]/g) !== count(src, /<Period[\s>]/g)) t.fail(`${f}: periods changed`);
    if (count(text, /<BaseURL>/g) < count(src, /<BaseURL>/g)) t.fail(`${f}: lost a BaseURL`);
    if (/<Location>https:\/\/dai\.example\.com/.test(text)) t.fail(`${f}: DAI Location left`);
  }
  t.pass('checked');
});

// Found by test/fuzz/dash.test.ts: markup inside a comment is not an element.
t.test('elements in comments are not elements: a commented-out BaseURL or Period', async (t) => {
  const base = 'https://dai.example.com/linear/dash/event/E/stream/S:LOC/';
  t.equal(
    rewriteMpd('<MPD>\n<!-- a <Period> in a comment --><Period/></MPD>', rules).text,
    `<MPD>\n<!-- a <Period> in a comment --><BaseURL>${base}</BaseURL><Period/></MPD>`,
  );
  t.equal(
    rewriteMpd('<MPD><!-- <BaseURL>old/</BaseURL> --><Period/></MPD>', rules).text,
    `<MPD><!-- <BaseURL>old/</BaseURL> --><BaseURL>${base}</BaseURL><Period/></MPD>`,
  );
});

// Found by test/fuzz/dash.test.ts: with a prefix, the closing tag of an element was taken for an opening one.
t.test('prefixed MPD: the closing </mpd:BaseURL> is not an element', async (t) => {
  const src =
    '<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011"><mpd:BaseURL>https://cdn.example.com/x/</mpd:BaseURL>\n<mpd:Period id="p0"><mpd:AdaptationSet/></mpd:Period></mpd:MPD>';
  t.equal(rewriteMpd(src, rules).text, src);
  const loc =
    '<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011"><mpd:Location>https://dai.example.com/m.mpd</mpd:Location> <mpd:Period/></mpd:MPD>';
  t.equal(
    rewriteMpd(loc, rules).text,
    '<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011"><BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL><mpd:Location>https://edge.example.net/dai/manifest/m.mpd</mpd:Location> <mpd:Period/></mpd:MPD>',
  );
});

// Found by test/fuzz/dash.test.ts: without a Period the BaseURL was appended after the root element.
t.test('an MPD without a Period stays well-formed', async (t) => {
  t.equal(
    rewriteMpd('<MPD type="static"></MPD>', rules).text,
    '<MPD type="static"><BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL></MPD>',
  );
  t.equal(
    rewriteMpd('<mpd:MPD xmlns:mpd="urn:x"><mpd:UTCTiming value="x"/></mpd:MPD >', rules).text,
    '<mpd:MPD xmlns:mpd="urn:x"><mpd:UTCTiming value="x"/><BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL></mpd:MPD >',
  );
  t.equal(rewriteMpd('<MPD type="static"/>', rules).text, '<MPD type="static"/>');
});

// Found by test/fuzz/dash.test.ts: the CDATA markup was taken for part of the URL.
t.test('a BaseURL or Location in CDATA is mapped inside it; other markup in the text is left alone', async (t) => {
  const abs = '<MPD><BaseURL><![CDATA[https://cdn.example.com/x/?a=1&b=2]]></BaseURL><Period/></MPD>';
  t.equal(rewriteMpd(abs, rules).text, abs);
  t.equal(
    rewriteMpd('<MPD><BaseURL> <![CDATA[media/]]> </BaseURL><Period/></MPD>', rules).text,
    '<MPD><BaseURL><![CDATA[https://dai.example.com/linear/dash/event/E/stream/S:LOC/media/]]></BaseURL><Period/></MPD>',
  );
  t.equal(
    rewriteMpd(
      '<MPD><Location><![CDATA[https://dai.example.com/m.mpd]]></Location><BaseURL>a/<!-- c --></BaseURL><Period/></MPD>',
      rules,
    ).text,
    '<MPD><Location><![CDATA[https://edge.example.net/dai/manifest/m.mpd]]></Location><BaseURL>a/<!-- c --></BaseURL><Period/></MPD>',
  );
});

// Found by test/fuzz/dash.test.ts (a mutated MPD): markup quoted in CDATA is text, as in a comment.
t.test('markup inside CDATA is not an element, nor the end of one', async (t) => {
  t.equal(
    rewriteMpd(
      '<MPD><Location><![CDATA[https://x.example/m.mpd?q=</a> <BaseURL>y</BaseURL>]]></Location><Period/></MPD>',
      rules,
    ).text,
    '<MPD><BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL><Location><![CDATA[https://x.example/m.mpd?q=</a> <BaseURL>y</BaseURL>]]></Location><Period/></MPD>',
  );
  // A CDATA opener quoted in a comment opens nothing.
  t.equal(
    rewriteMpd('<!--<![CDATA[ x --><MPD><Period/></MPD>', rules).text,
    '<!--<![CDATA[ x --><MPD><BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL><Period/></MPD>',
  );
});

t.test(
  'issue 25: root-relative content segments go to the content origin, whatever BaseURL the DAI host sets',
  async (t) => {
    const src = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic">
  <BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL>
  <Period id="content-1">
    <BaseURL>/content/p1/</BaseURL>
    <AdaptationSet><Representation id="v"><SegmentTemplate timescale="90000" initialization="/content/init_$RepresentationID$.mp4" media='/content/seg_$Number$.m4s' startNumber="1"/></Representation></AdaptationSet>
    <AdaptationSet><Representation id="a"><SegmentList><Initialization sourceURL="/content/a/init.mp4"/><SegmentURL media="/content/a/1.m4s" index="/content/a/1.sidx"/><SegmentURL media="a/2.m4s"/></SegmentList></Representation></AdaptationSet>
  </Period>
  <Period id="dai_pod-0001-ad-1">
    <AdaptationSet><Representation id="v"><SegmentTemplate media="https://dai.example.com/linear/pod/ad_$Number$.m4s" initialization="//dai.example.com/linear/pod/init.mp4"/></Representation></AdaptationSet>
  </Period>
  <Period id="content-2"><AdaptationSet><!-- media="/not/a/segment.m4s" --><Representation id="v"><SegmentTemplate media="chunk_$Number$.m4s" initialization="/content/init.mp4"/></Representation></AdaptationSet></Period>
</MPD>`;
    const { text } = rewriteMpd(src, rules);
    t.match(
      text,
      '<BaseURL>https://dai.example.com/linear/dash/event/E/stream/S:LOC/</BaseURL>',
      'the MPD-level BaseURL on the DAI host stays',
    );
    t.match(
      text,
      '<BaseURL>https://origin.example.org/content/p1/</BaseURL>',
      'a root-relative Period BaseURL: the content origin',
    );
    t.match(
      text,
      'initialization="https://origin.example.org/content/init_$RepresentationID$.mp4"',
      'SegmentTemplate@initialization',
    );
    t.match(
      text,
      "media='https://origin.example.org/content/seg_$Number$.m4s'",
      'SegmentTemplate@media, single-quoted',
    );
    t.match(
      text,
      '<Initialization sourceURL="https://origin.example.org/content/a/init.mp4"/>',
      'Initialization@sourceURL',
    );
    t.match(
      text,
      '<SegmentURL media="https://origin.example.org/content/a/1.m4s" index="https://origin.example.org/content/a/1.sidx"/>',
      'SegmentURL@media and @index',
    );
    t.match(text, '<SegmentURL media="a/2.m4s"/>', 'a relative SegmentURL still resolves upstream');
    t.match(
      text,
      'media="https://dai.example.com/linear/pod/ad_$Number$.m4s" initialization="//dai.example.com/linear/pod/init.mp4"',
      'DAI ad segments untouched',
    );
    t.match(text, '<!-- media="/not/a/segment.m4s" -->', 'a comment is not an attribute');
    t.match(text, 'media="chunk_$Number$.m4s" initialization="https://origin.example.org/content/init.mp4"');
    // What a player resolves (RFC 3986 §5.2): the content segments on the origin, the ad segments on the DAI host.
    const base = 'https://dai.example.com/linear/dash/event/E/stream/S:LOC/';
    t.equal(new URL('https://origin.example.org/content/seg_7.m4s', base).host, 'origin.example.org');
    t.equal(
      (text.match(/https:\/\/origin\.example\.org\//g) ?? []).length,
      7,
      'every root-relative URL and only those',
    );
  },
);

t.test(
  'the content origin pins nothing in MPDs with no root-relative URL (fixtures unchanged but for the pinned MPD BaseURL)',
  async (t) => {
    let same = 0;
    for (const f of fixtureFiles('dash', ['.mpd'])) {
      const src = fixture(f);
      const withOrigin = rewriteMpd(src, rules).text;
      const without = rewriteMpd(src, { ...rules, contentOrigin: '' }).text;
      const rootRelative = /\s(media|initialization|sourceURL|index)\s*=\s*["']\/(?!\/)|<BaseURL[^>]*>\s*\/(?!\/)/.test(
        src,
      );
      if (!rootRelative && withOrigin !== without) t.fail(`${f}: changed with no root-relative URL`);
      else same++;
    }
    t.ok(same > 10, `${same} fixtures checked`);
  },
);
