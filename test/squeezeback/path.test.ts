import t from 'tap';
import { canonicalSegment, parsePlayerPath } from '../../lib/squeezeback/path.js';

const status = (fn: () => unknown) => {
  try {
    fn();
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
};

t.test('canonicalSegment: one form for every spelling of a legitimate segment', async (t) => {
  t.equal(canonicalSegment('720p.m3u8'), '720p.m3u8', 'plain: as it is');
  t.equal(canonicalSegment('%37%32%30p.m3u8'), '720p.m3u8', 'encoded unreserved characters decoded');
  t.equal(
    canonicalSegment('my%20variant.m3u8'),
    'my%20variant.m3u8',
    'a space stays encoded (as a URL pathname writes it)',
  );
  t.equal(canonicalSegment('%C3%A9v%c3%a9.m3u8'), '%C3%A9v%C3%A9.m3u8', 'UTF-8, in upper-case hex');
  t.equal(canonicalSegment('100%25.m3u8'), '100%25.m3u8', 'an encoded percent sign');
  t.equal(canonicalSegment('%7E'), '~');
  for (const bad of [
    '',
    '.',
    '..',
    '%2e',
    '%2e%2e',
    '.%2E',
    'a%2fb',
    'a%2Fb',
    'a%5cb',
    'a%00',
    'a%0a',
    'a%7f',
    'a%zz',
    'a%',
    'a%c3',
    'a b',
    'a\\b',
    'a"b',
  ])
    t.equal(
      status(() => canonicalSegment(bad)),
      400,
      JSON.stringify(bad),
    );
});

t.test('parsePlayerPath: segments canonical, traversal refused', async (t) => {
  t.same(parsePlayerPath('/squeezeback/%53B1/master.m3u8'), { kind: 'master', assetId: 'SB1' });
  t.same(parsePlayerPath('/squeezeback/SB1/123456789/%76ariant/720p.m3u8'), {
    kind: 'variant',
    assetId: 'SB1',
    streamId: '123456789',
    rest: ['variant', '720p.m3u8'],
  });
  t.equal(
    status(() => parsePlayerPath('/squeezeback/SB1/123456789/%2e%2e/720p.m3u8')),
    400,
  );
  t.equal(
    status(() => parsePlayerPath('/squeezeback/SB1/123456789/seg%2ets')),
    400,
    'a segment spelt with an encoded dot is still not a playlist',
  );
});
