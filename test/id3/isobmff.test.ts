import t from 'tap';
import { emsgTags, extractTags, parseEmsg } from '../../lib/id3/index.js';
import { AOM_ID3, box, emsgV0, emsgV1, id3, largeBox, moof, text, txxx, u32 } from '../helpers/id3-writer.js';

const times = (buf: Buffer, trackTimescale?: number) =>
  emsgTags(buf, { trackTimescale }).map((x) => [x.value, x.metadata.timescale, x.metadata.presentation_time]);
const mdat = box('mdat', Buffer.alloc(32));
const styp = box('styp', Buffer.from('msdh'), u32(0));

t.test('emsg v1: its own timescale and presentation time', async (t) => {
  const seg = Buffer.concat([styp, emsgV1(AOM_ID3, '', 90000, 1800000, id3([txxx('', 'ad 1')])), moof(0), mdat]);
  t.same(extractTags(seg), {
    container: 'isobmff',
    tags: [
      { frame: 'TXXX', description: '', value: 'ad 1', metadata: { timescale: 90000, presentation_time: 1800000 } },
    ],
  });
});

t.test('emsg v0: the following moof tfdt plus the delta; the delta alone when no moof follows', async (t) => {
  const seg = Buffer.concat([styp, emsgV0(AOM_ID3, '1', 90000, 500, id3([text('TIT2', 'v0')])), moof(900000), mdat]);
  t.same(times(seg), [['v0', 90000, 900500]]);
  t.same(
    times(Buffer.concat([styp, moof(900000), mdat, emsgV0(AOM_ID3, '1', 90000, 500, id3([text('TIT2', 'last')]))])),
    [['last', 90000, 500]],
  );
  // a track timescale that differs from the emsg's: tfdt rescaled
  t.same(times(Buffer.concat([emsgV0(AOM_ID3, '', 1000, 20, id3([text('TIT2', 'ms')])), moof(900000)]), 90000), [
    ['ms', 1000, 10020],
  ]);
});

t.test('emsg between two fragments, Apple scheme, other schemes ignored', async (t) => {
  const apple = 'https://developer.apple.com/streaming/emsg-id3';
  const seg = Buffer.concat([
    moof(0),
    mdat,
    emsgV0(apple, '', 90000, 10, id3([text('TIT2', 'between')])),
    emsgV1('urn:scte:scte35:2013:bin', '', 90000, 5, Buffer.from([0xfc, 0x30])),
    moof(180000),
    mdat,
  ]);
  t.same(times(seg), [['between', 90000, 180010]]);
});

t.test('64-bit largesize and size 0 (to the end)', async (t) => {
  const tag = id3([text('TIT2', 'large')]);
  const v1Body = [
    Buffer.from([1, 0, 0, 0]),
    u32(90000),
    Buffer.from([0, 0, 0, 0, 0, 0, 0, 7]),
    u32(0),
    u32(1),
    Buffer.from(AOM_ID3 + '\0\0'),
    tag,
  ];
  const large = largeBox('emsg', ...v1Body);
  t.same(times(Buffer.concat([moof(0), large])), [['large', 90000, 7]]);
  const toEnd = box('emsg', ...v1Body);
  toEnd.writeUInt32BE(0, 0);
  t.same(times(Buffer.concat([moof(0), toEnd])), [['large', 90000, 7]]);
});

t.test('truncated or malformed emsg: skipped, never thrown', async (t) => {
  const good = emsgV1(AOM_ID3, '', 90000, 1, id3([text('TIT2', 'x')]));
  t.equal(parseEmsg(good, 8, 20), undefined);
  t.same(times(good.subarray(0, 30)), []);
  const noNul = box('emsg', Buffer.from([0, 0, 0, 0]), Buffer.from('https://aomedia.org/emsg/ID3'));
  t.same(times(noNul), []);
  t.same(times(Buffer.concat([box('emsg', Buffer.from([7, 0, 0, 0])), moof(1)])), [], 'unknown version');
});
