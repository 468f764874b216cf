import t from 'tap';
import { readFileSync } from 'node:fs';
import { injectTimedId3, TsRewriteError, vtgTag } from '../../lib/transcoder/id3-inject.js';
import { crc32Mpeg2 as crc32Mpeg } from '../../lib/scte35/crc.js';
import { extractTags, parseId3Tag } from '../../lib/id3/index.js';

const fixture = (p: string) => readFileSync(new URL(`../fixtures/media/${p}`, import.meta.url));

t.test('vtgTag: TXXX and PRIV with the owner, readable by our ID3 parser', async (t) => {
  const tag = parseId3Tag(vtgTag('com.acme.vtg', 'brk-42 é'), 0);
  t.ok(tag);
  t.equal(tag!.version, 4);
  t.match(tag!.frames, [
    { id: 'TXXX', description: 'com.acme.vtg', value: 'brk-42 é' },
    { id: 'PRIV', description: 'com.acme.vtg' },
  ]);
  t.equal(Buffer.from(tag!.frames[1]!.data!).toString('utf8'), 'brk-42 é');
});

t.test('the PSI CRC (shared with lib/scte35): the MPEG-2 check value', async (t) => {
  t.equal(crc32Mpeg(Buffer.from('123456789', 'latin1')), 0x0376e6e7);
});

t.test('injectTimedId3: a real segment gains a metadata stream extractTags reads at the PTS', async (t) => {
  const files = ['muxjs/test-segment.ts', 'mp2ts-tools/80s_with_ad.first4000pkts.ts'];
  let read = 0;
  for (const f of files) {
    const ts = fixture(f);
    read++;
    t.same(extractTags(ts).tags, [], `${f}: no tags before`);
    const out = injectTimedId3(ts, vtgTag('com.acme.vtg', 'brk-1'), 8_589_934_000);
    t.equal(out.length % 188, 0);
    t.ok(out.length > ts.length, 'packets were added');
    const r = extractTags(out);
    t.equal(r.container, 'ts');
    t.match(
      r.tags,
      [
        {
          frame: 'TXXX',
          description: 'com.acme.vtg',
          value: 'brk-1',
          metadata: { timescale: 90000, presentation_time: 8_589_934_000 },
        },
        {
          frame: 'PRIV',
          description: 'com.acme.vtg',
          value: 'brk-1',
          metadata: { timescale: 90000, presentation_time: 8_589_934_000 },
        },
      ],
      `${f}: the tag at its PTS`,
    );
    t.equal(r.tags.length, 2);
  }
  t.equal(read, files.length);
});

t.test('injectTimedId3: refuses what it cannot rewrite', async (t) => {
  t.throws(
    () => injectTimedId3(fixture('shaka-player/id3-metadata.ts'), vtgTag('a', 'b'), 0),
    TsRewriteError,
    'already has a metadata stream',
  );
  t.throws(() => injectTimedId3(Buffer.alloc(100), vtgTag('a', 'b'), 0), TsRewriteError, 'not packets');
  t.throws(() => injectTimedId3(Buffer.alloc(188), vtgTag('a', 'b'), 0), TsRewriteError, 'no sync');
  const nullPackets = Buffer.concat([Buffer.from([0x47, 0x1f, 0xff, 0x10]), Buffer.alloc(184, 0xff)]);
  t.throws(() => injectTimedId3(nullPackets, vtgTag('a', 'b'), 0), TsRewriteError, 'no PMT');
});
