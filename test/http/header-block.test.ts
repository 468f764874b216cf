/**
 * Pre-joined header blocks (lib/http/exchange.ts headerBlock, pairsBlock): one writeHeader call puts
 * the same lines on the wire as one call per header, and a set holding a CR, LF or NUL gets no
 * block (it would split a line).
 */
import t from 'tap';
import net from 'node:net';
import { loadUws } from '../../lib/http/uws.js';
import { Exchange, headerBlock, pairsBlock, type HeaderPair } from '../../lib/http/exchange.js';
import { answerHead, extraFor, negotiate } from '../../lib/http/representation.js';

const uws = loadUws();

const HEADERS = {
  'Content-Type': 'application/vnd.apple.mpegurl',
  'Cache-Control': 'public, max-age=1, stale-while-revalidate=2',
  ETag: '"abc"',
};
const CORS: readonly HeaderPair[] = Object.freeze([
  ['Access-Control-Allow-Origin', 'https://player.example'],
  ['Vary', 'Origin'],
  ['Vary', 'Accept-Encoding'],
] as const);

/** The raw head a request to path gets (the Date line dropped: it moves). */
function rawHead(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let all = '';
    s.on('connect', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    s.on('data', (d) => (all += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () =>
      resolve(
        all
          .slice(0, all.indexOf('\r\n\r\n'))
          .split('\r\n')
          .filter((l) => !/^date:/i.test(l))
          .join('\r\n'),
      ),
    );
  });
}

t.test('a block writes the lines that one write per header writes', async (t) => {
  const app = uws.App();
  app.get('/*', (res, req) => {
    const joined = req.getUrl() === '/joined';
    const ex = new Exchange(res, false, CORS, 'req-1');
    ex.send(200, { ...HEADERS }, 'body', joined ? headerBlock(HEADERS) : undefined);
  });
  const socket = await new Promise<Parameters<typeof uws.us_socket_local_port>[0]>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen')))),
  );
  t.teardown(() => uws.us_listen_socket_close(socket));
  const port = uws.us_socket_local_port(socket);
  const one = await rawHead(port, '/one');
  const joined = await rawHead(port, '/joined');
  t.equal(joined, one, 'the same head');
  t.match(one, /\r\nContent-Type: application\/vnd\.apple\.mpegurl\r\nCache-Control: public, max-age=1/);
  t.match(one, /\r\nX-Request-Id: req-1\r\n/);
  t.match(one, /\r\nVary: Origin\r\nVary: Accept-Encoding/, 'a repeated name keeps both lines');
});

t.test('no block for a set that would split a line', async (t) => {
  t.equal(headerBlock({ A: '1', B: 'x\r\nSet-Cookie: y' }), undefined);
  t.equal(headerBlock({ A: '1', 'B\n': 'x' }), undefined);
  t.equal(headerBlock({ A: '1\0' }), undefined);
  t.equal(headerBlock({}), undefined);
  t.same(headerBlock({ A: '1', B: '2' }), ['A', '1\r\nB: 2']);
  t.equal(pairsBlock(Object.freeze([['A', 'x\ry']] as const)), undefined);
  const pairs = Object.freeze([
    ['A', '1'],
    ['B', '2'],
  ] as const);
  t.equal(pairsBlock(pairs), pairsBlock(pairs), 'memoized per set');
});

/** The CORS set of a listed origin (lib/http/cors.ts): one Vary, which extraFor extends. */
const PLAYER_CORS: readonly HeaderPair[] = Object.freeze([
  ['Access-Control-Allow-Origin', 'https://player.example'],
  ['Vary', 'Origin'],
] as const);

t.test('an answer head (one writeHeader of bytes) puts the lines the exchange writes on the wire', async (t) => {
  const v = negotiate({ status: 200, headers: HEADERS, body: Buffer.from('body'), forms: undefined }, '', '', '');
  const extra = extraFor(v, PLAYER_CORS);
  const head = answerHead(v, extra);
  t.ok(head instanceof ArrayBuffer, 'the variant has a head');
  t.equal(answerHead(v, extra), head, 'built once per variant and extra set');
  const app = uws.App();
  app.get('/*', (res, req) => {
    if (req.getUrl() === '/head') {
      res.writeHeader(head!, 'req-1');
      res.end('body');
    } else new Exchange(res, false, extra, 'req-1').send(200, v.headers, 'body');
  });
  const socket = await new Promise<Parameters<typeof uws.us_socket_local_port>[0]>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen')))),
  );
  t.teardown(() => uws.us_listen_socket_close(socket));
  const port = uws.us_socket_local_port(socket);
  const lines = (head: string) => head.split('\r\n').sort();
  const viaHead = await rawHead(port, '/head');
  t.same(lines(viaHead), lines(await rawHead(port, '/exchange')), 'the same lines');
  t.match(viaHead, /\r\nETag: "[\w-]{22}"\r\n/);
  t.match(viaHead, /\r\nX-Request-Id: req-1\r\n/);
  t.match(viaHead, /\r\nVary: Origin, Accept-Encoding\r\n/, 'Vary merged as extraFor merges it');
  t.not(
    answerHead(v, Object.freeze([['Access-Control-Allow-Origin', '*']] as const)),
    head,
    'another extra set, another head',
  );
});

t.test('no answer head for a variant whose headers would split a line', async (t) => {
  const v = negotiate(
    { status: 200, headers: { ...HEADERS, Link: 'x\r\nSet-Cookie: y' }, body: Buffer.from('b'), forms: undefined },
    '',
    '',
    '',
  );
  t.equal(answerHead(v, CORS), undefined);
});

t.test('a header value beyond ASCII keeps the string path (uWS sends it as UTF-8)', async (t) => {
  const v = negotiate(
    {
      status: 200,
      headers: { ...HEADERS, 'Content-Disposition': 'inline; filename="café.m3u8"' },
      body: Buffer.from('b'),
      forms: undefined,
    },
    '',
    '',
    '',
  );
  t.ok(v.block, 'the block itself is fine');
  t.equal(answerHead(v, PLAYER_CORS), undefined);
});
