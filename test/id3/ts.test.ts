import t from 'tap';
import { extractTags, tsTimedMetadata } from '../../lib/id3/index.js';
import { id3, packets, pat, pes, pmt, text, tsSegment, txxx } from '../helpers/id3-writer.js';

const values = (buf: Buffer) => tsTimedMetadata(buf).map((x) => [x.frame, x.value, x.metadata.presentation_time]);

t.test('two tags in one PES: both, at that PES PTS', async (t) => {
  const seg = tsSegment([
    pes(Buffer.concat([id3([text('TIT2', 'first')]), id3([txxx('k', 'second')])]), { pts: 900000 }),
  ]);
  t.equal(extractTags(seg).container, 'ts');
  t.same(values(seg), [
    ['TIT2', 'first', 900000],
    ['TXXX', 'second', 900000],
  ]);
});

t.test('PES after PES: each tag at its own PTS; stream_id 0xBD or 0xFC alike', async (t) => {
  const seg = tsSegment([
    pes(id3([text('TIT2', 'a')]), { pts: 1000 }),
    pes(id3([text('TIT2', 'b')]), { pts: 181000, streamId: 0xfc }),
  ]);
  t.same(values(seg), [
    ['TIT2', 'a', 1000],
    ['TIT2', 'b', 181000],
  ]);
});

t.test('a tag over 64 KiB spans two PES packets; the continuation has no PTS and alignment 0', async (t) => {
  const big = 'v'.repeat(70000);
  const tag = id3([txxx('big', big), text('TIT2', 'tail')]);
  const cut = 60000;
  const seg = tsSegment([
    pes(tag.subarray(0, cut), { pts: 123456 }),
    pes(tag.subarray(cut), { aligned: false }),
    pes(id3([text('TIT2', 'next')]), { pts: 300000 }),
  ]);
  const got = tsTimedMetadata(seg);
  t.equal(got.length, 3);
  t.equal(got[0]!.value, big, 'the whole value, reassembled');
  t.same(got[0]!.metadata, { timescale: 90000, presentation_time: 123456 });
  t.same([got[1]!.value, got[1]!.metadata.presentation_time], ['tail', 123456]);
  t.same([got[2]!.value, got[2]!.metadata.presentation_time], ['next', 300000]);
});

t.test('33-bit PTS: the top bit is read, and a wrap inside the segment stays monotonic', async (t) => {
  const max = 2 ** 33 - 1;
  t.same(values(tsSegment([pes(id3([text('TIT2', 'x')]), { pts: max })])), [['TIT2', 'x', max]]);
  const seg = tsSegment([
    pes(id3([text('TIT2', 'before')]), { pts: 2 ** 33 - 900 }),
    pes(id3([text('TIT2', 'after')]), { pts: 100 }),
  ]);
  t.same(values(seg), [
    ['TIT2', 'before', 2 ** 33 - 900],
    ['TIT2', 'after', 2 ** 33 + 100],
  ]);
});

t.test('a leading offset before the first sync byte, and a PES before the PMT', async (t) => {
  const body = pes(id3([text('TIT2', 'late pmt')]), { pts: 42 });
  const seg = Buffer.concat([Buffer.from([1, 2, 3, 4, 5]), pat(), ...packets(0x102, body), pmt(0x102)]);
  t.equal(extractTags(seg).container, 'ts');
  t.same(values(seg), [['TIT2', 'late pmt', 42]]);
});

t.test('no stream of type 0x15: no tags', async (t) => {
  const seg = Buffer.concat([pat(), pmt(0x102, 0x06), ...packets(0x102, pes(id3([text('TIT2', 'x')]), { pts: 1 }))]);
  t.same(tsTimedMetadata(seg), []);
});
