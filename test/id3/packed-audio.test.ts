import t from 'tap';
import { extractTags, packedAudioTags } from '../../lib/id3/index.js';
import { id3, text, tsTimestamp } from '../helpers/id3-writer.js';

/** An ADTS frame of `len` bytes, 48 kHz, one raw data block (1024 samples = 1920 ticks at 90 kHz). */
function adts(len: number): Buffer {
  const b = Buffer.alloc(len);
  b[0] = 0xff;
  b[1] = 0xf1;
  b[2] = (1 << 6) | (3 << 2); // AAC LC, sampling index 3 = 48 kHz
  b[3] = (2 << 6) | ((len >> 11) & 0x03);
  b[4] = (len >> 3) & 0xff;
  b[5] = ((len & 0x07) << 5) | 0x1f;
  b[6] = 0xfc;
  return b;
}

t.test('leading timestamp tag, then a tag after three ADTS frames', async (t) => {
  const buf = Buffer.concat([
    id3([tsTimestamp(2 ** 33 + 891380)]),
    adts(100),
    adts(120),
    adts(90),
    id3([text('TIT2', 'later')]),
    adts(100),
  ]);
  const r = extractTags(buf);
  t.equal(r.container, 'packed-audio');
  t.same(
    r.tags.map((x) => [x.frame, x.value, x.metadata.presentation_time]),
    [
      ['PRIV', 'com.apple.streaming.transportStreamTimestamp', 891380],
      ['TIT2', 'later', 891380 + 3 * 1920],
    ],
    'the timestamp keeps the low 33 bits only',
  );
});

t.test('tags before the timestamp take it; no timestamp at all means time 0', async (t) => {
  const buf = Buffer.concat([id3([text('TIT2', 'first')]), id3([tsTimestamp(5000)]), adts(50)]);
  t.same(
    packedAudioTags(buf).map((x) => [x.value, x.metadata.presentation_time]),
    [
      ['first', 5000],
      ['com.apple.streaming.transportStreamTimestamp', 5000],
    ],
  );
  t.same(
    packedAudioTags(Buffer.concat([id3([text('TIT2', 'x')]), adts(50)])).map((x) => x.metadata.presentation_time),
    [0],
  );
  t.same(packedAudioTags(Buffer.concat([adts(50), adts(50)])), [], 'no tags in plain ADTS');
});
