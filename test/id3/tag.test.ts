import t from 'tap';
import { parseId3Tag, parseId3Tags, id3TagLength, tagResults } from '../../lib/id3/index.js';
import { frame, id3, priv, syncsafe, text, txxx, u32 } from '../helpers/id3-writer.js';

const at0 = { timescale: 90000, presentation_time: 0 };

t.test('TXXX in every encoding: latin1, UTF-16 with BOM (both byte orders), UTF-16BE, UTF-8', async (t) => {
  const cases: [number, 'le' | 'be'][] = [
    [0, 'le'],
    [1, 'le'],
    [1, 'be'],
    [2, 'be'],
    [3, 'le'],
  ];
  for (const [enc, order] of cases) {
    const desc = enc === 0 ? 'café' : 'café ✓';
    const value = enc === 0 ? 'Größe' : 'Größe 日本';
    const tag = parseId3Tag(id3([txxx(desc, value, enc, 4, order)]))!;
    t.same(tag.frames, [{ id: 'TXXX', description: desc, value }], `encoding ${enc} ${order}`);
  }
});

t.test('text frames, several values, URL frames, PRIV, binary frames', async (t) => {
  const body = Buffer.concat([Buffer.from([3]), Buffer.from('a\0b\0', 'utf8')]);
  const wxxx = frame(
    'WXXX',
    Buffer.concat([
      Buffer.from([1, 0xff, 0xfe]),
      Buffer.from('d', 'utf16le'),
      Buffer.alloc(2),
      Buffer.from('https://x.test/a', 'latin1'),
    ]),
  );
  const tag = parseId3Tag(
    id3([
      frame('TPE1', body),
      frame('WOAR', Buffer.from('https://a.test/\0')),
      wxxx,
      priv('owner.test', Buffer.from('ad-123')),
      frame('GEOB', Buffer.from([1, 2, 3])),
    ]),
  )!;
  t.same(tag.frames[0], { id: 'TPE1', value: 'a/b' });
  t.same(tag.frames[1], { id: 'WOAR', value: 'https://a.test/' });
  t.same(tag.frames[2], { id: 'WXXX', description: 'd', value: 'https://x.test/a' });
  t.same(tag.frames[3], { id: 'PRIV', description: 'owner.test', data: Buffer.from('ad-123') });
  t.same(tag.frames[4], { id: 'GEOB', data: Buffer.from([1, 2, 3]) });
  const res = tagResults([tag], at0);
  t.same(res[3], {
    frame: 'PRIV',
    description: 'owner.test',
    value: 'ad-123',
    data: Buffer.from('ad-123').toString('base64'),
    metadata: at0,
  });
  t.same(res[4], { frame: 'GEOB', value: '', data: 'AQID', metadata: at0 });
  const bin = tagResults(parseId3Tags(id3([priv('o', Buffer.from([0, 1, 2, 0xff]))])), at0)[0]!;
  t.equal(bin.value, 'o', 'a PRIV of non-text bytes reports its owner');
});

t.test('v2.3 frame sizes are plain 32-bit: a 300-byte frame (where a syncsafe read breaks)', async (t) => {
  const long = 'x'.repeat(300);
  const tag = parseId3Tag(id3([txxx('big', long, 0, 3), text('TIT2', 'after', 0, 3)], { version: 3 }))!;
  t.equal(tag.version, 3);
  t.same(tag.frames, [
    { id: 'TXXX', description: 'big', value: long },
    { id: 'TIT2', value: 'after' },
  ]);
  // v2.4 with the same length is syncsafe
  t.same(parseId3Tag(id3([txxx('big', long, 0, 4), text('TIT2', 'after', 0, 4)]))!.frames.length, 2);
  // v2.4 written with plain sizes (a known writer bug): a size byte with its top bit set reads plain
  const plain = Buffer.concat([
    Buffer.from('TXXX'),
    u32(0x81),
    Buffer.from([0, 0]),
    Buffer.from([0]),
    Buffer.from('d\0'),
    Buffer.alloc(0x81 - 3, 0x61),
  ]);
  t.equal(parseId3Tag(id3([plain, text('TIT2', 'z')]))!.frames[1]?.value, 'z');
});

t.test('zero-size frames are skipped, not fatal; padding ends the frames', async (t) => {
  const zero = Buffer.concat([Buffer.from('TXXX'), Buffer.alloc(6)]);
  const tag = parseId3Tag(id3([zero, text('TIT2', 'kept')], { padding: 64 }))!;
  t.same(tag.frames, [{ id: 'TIT2', value: 'kept' }]);
});

t.test('extended headers (v2.3 and v2.4 forms) and the v2.4 footer', async (t) => {
  const v3ext = Buffer.concat([u32(6), Buffer.alloc(6)]); // size excludes itself
  const v3 = parseId3Tag(id3([text('TIT2', 'v3', 0, 3)], { version: 3, flags: 0x40, ext: v3ext }))!;
  t.same(v3.frames, [{ id: 'TIT2', value: 'v3' }]);
  const v4ext = Buffer.concat([syncsafe(6), Buffer.from([1, 0])]); // size includes itself
  const v4 = parseId3Tag(id3([text('TIT2', 'v4')], { flags: 0x40, ext: v4ext }))!;
  t.same(v4.frames, [{ id: 'TIT2', value: 'v4' }]);
  const withFooter = id3([text('TIT2', 'f')], { flags: 0x10, footer: true });
  t.equal(id3TagLength(withFooter), withFooter.length, 'footer counted in the tag length');
  const two = parseId3Tags(Buffer.concat([withFooter, id3([text('TIT2', 'g')])]));
  t.same(
    two.map((x) => x.frames[0]?.value),
    ['f', 'g'],
    'the next tag starts after the footer',
  );
});

t.test('unsynchronisation: v2.3 whole tag, v2.4 per frame', async (t) => {
  // 0xFF followed by 0xE0 must be written 0xFF 0x00 0xE0.
  const raw = Buffer.from([0xff, 0xe0, 0x41]);
  const unsync = Buffer.from([0xff, 0x00, 0xe0, 0x41]);
  const v3body = Buffer.concat([Buffer.from('PRIV'), u32(5), Buffer.from([0, 0]), Buffer.from('o\0'), raw]);
  const v3bytes = Buffer.concat([v3body.subarray(0, 12), unsync]); // frame size counts the decoded bytes
  const v3 = parseId3Tag(id3([v3bytes], { version: 3, flags: 0x80 }))!;
  t.same(v3.frames[0]?.data, raw);
  const v4 = parseId3Tag(id3([frame('PRIV', Buffer.concat([Buffer.from('o\0'), unsync]), 4, 0x02)]))!;
  t.same(v4.frames[0]?.data, raw);
  const dli = parseId3Tag(
    id3([frame('TIT2', Buffer.concat([syncsafe(3), Buffer.from([3]), Buffer.from('ab')]), 4, 0x01)]),
  )!;
  t.same(dli.frames, [{ id: 'TIT2', value: 'ab' }], 'data length indicator skipped');
});

t.test('v2.2 tags (three-character ids)', async (t) => {
  const f = Buffer.concat([Buffer.from('TT2'), Buffer.from([0, 0, 4]), Buffer.from([0]), Buffer.from('abc')]);
  const tag = parseId3Tag(id3([f], { version: 2 }))!;
  t.same(tag, { version: 2, frames: [{ id: 'TT2', value: 'abc' }] });
});

t.test('garbage and truncation: no tags, no exception', async (t) => {
  t.same(parseId3Tags(Buffer.from('not an id3 tag')), []);
  t.same(parseId3Tags(Buffer.from([0x49, 0x44, 0x33, 9, 0, 0, 0, 0, 0, 1])), [], 'unknown major version');
  t.same(parseId3Tags(Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0x80, 0, 0, 1])), [], 'size not syncsafe');
  const whole = id3([text('TIT2', 'one'), text('TIT3', 'two'.repeat(50))]);
  t.same(
    parseId3Tag(whole.subarray(0, 30))!.frames,
    [{ id: 'TIT2', value: 'one' }],
    'a truncated tag keeps its whole frames',
  );
  const badId = id3([Buffer.concat([Buffer.from('ti t'), syncsafe(2), Buffer.alloc(4)])]);
  t.same(parseId3Tag(badId)!.frames, []);
});
