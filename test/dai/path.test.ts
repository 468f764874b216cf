import t from 'tap';
import { parseManifestPath } from '../../lib/dai/path.js';
import { HttpError } from '../../lib/http/problem.js';

t.test('stream id, asset key and kind', async (t) => {
  const m = parseManifestPath(
    '/dai/manifest/linear/hls/pa/event/EVKEY123/stream/6e1d2c3b-aaaa-bbbb-cccc-1234567890ab:LOC/master.m3u8',
    'a=1',
  );
  t.same(m, {
    upstreamPath: '/linear/hls/pa/event/EVKEY123/stream/6e1d2c3b-aaaa-bbbb-cccc-1234567890ab:LOC/master.m3u8?a=1',
    kind: 'master',
    streamId: '6e1d2c3b-aaaa-bbbb-cccc-1234567890ab:LOC',
    assetKey: 'EVKEY123',
  });
  const enc = parseManifestPath('/dai/manifest/linear/hls/event/K/streams/abc%3ALOC/variant/720p.m3u8', '');
  t.equal(enc.streamId, 'abc:LOC', 'encoded colon');
  t.equal(enc.kind, 'media');
  t.equal(enc.upstreamPath, '/linear/hls/event/K/streams/abc:LOC/variant/720p.m3u8');
  t.equal(parseManifestPath('/dai/manifest/linear/dash/event/K/stream/s/manifest.mpd', '').kind, 'mpd');
  t.equal(parseManifestPath('/dai/manifest/x/y.m3u8', '').streamId, undefined);
});

t.test('path attacks are 400', async (t) => {
  const attacks = [
    '/dai/manifest/../etc/passwd.m3u8',
    '/dai/manifest/a/%2e%2e/b.m3u8',
    '/dai/manifest/a/%2E%2E/b.m3u8',
    '/dai/manifest/a/%252e%252e/b.m3u8',
    '/dai/manifest/a%2fb.m3u8',
    '/dai/manifest/a%2Fb.m3u8',
    '/dai/manifest/a%252fb.m3u8',
    '/dai/manifest//evil.example.com/x.m3u8',
    '/dai/manifest/a//b.m3u8',
    '/dai/manifest/user@evil.example.com/x.m3u8',
    '/dai/manifest/a\\b.m3u8',
    '/dai/manifest/a%5cb.m3u8',
    '/dai/manifest/a%00.m3u8',
    '/dai/manifest/a%0d%0aSet-Cookie:x.m3u8',
    '/dai/manifest/./a.m3u8',
    '/dai/manifest/a/.m3u8/..',
    '/dai/manifest/a/b.ts',
    '/dai/manifest/',
  ];
  for (const a of attacks) t.throws(() => parseManifestPath(a, ''), HttpError, a);
  t.throws(() => parseManifestPath('/dai/manifest/a.m3u8', 'a=1\r\nX: y'), HttpError, 'CRLF in query');
  t.throws(() => parseManifestPath('/dai/manifest/a.m3u8', 'a=' + 'x'.repeat(9000)), HttpError, 'huge query');
});
