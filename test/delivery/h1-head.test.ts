/**
 * The one-pass head reader (lib/delivery/h1-head.ts) against the regular expressions and string
 * reads it replaced, as oracles: the same inputs, the same verdicts and fields. Inputs are built
 * from the pieces where the grammar decides (CR, LF, SP, HTAB, `:`, digits, a separator, a control
 * byte, obs-text, the framing fields), so near-misses are as common as valid heads.
 * h1-pool-differential.test.ts holds the client to llhttp.
 */
import t from 'tap';
import fc from 'fast-check';
import { contentLength, nameIs, readHead } from '../../lib/delivery/h1-head.js';

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]";
const STATUS_LINE = 'HTTP/1\\.[01] \\d{3}(?: [^\\r\\n]*)?\\r\\n';
const FIELD = `${TOKEN}+:[\\t\\x20-\\x7e\\x80-\\xff]*`;
const HEAD_SYNTAX = new RegExp(`^${STATUS_LINE}(?:${FIELD}\\r\\n)*\\r\\n$`);
const LENGTH_SYNTAX = /^[\t ]*\d{1,15} *$/;
const CHUNKED = /^[\t ]*chunked *$/i;

const bytes = (s: string) => Buffer.from(s, 'latin1');

/** The fields of a head HEAD_SYNTAX accepted, read as the client read them before: strings, line by line. */
function reference(h: string) {
  const out = {
    status: Number(h.slice(9, 12)),
    http10: h[7] === '0',
    length: -1,
    chunked: false,
    connectionClose: false,
    connectionKeepAlive: false,
    lastModified: undefined as string | undefined,
    fault: '',
  };
  for (const line of h.split('\r\n').slice(1, -2)) {
    if (out.fault) break;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1);
    if (name === 'content-length') {
      if (!LENGTH_SYNTAX.test(value) || out.length !== -1) out.fault = 'a malformed or repeated Content-Length';
      else out.length = Number(value);
    } else if (name === 'transfer-encoding') {
      if (!CHUNKED.test(value) || out.chunked) out.fault = `an unsupported Transfer-Encoding: ${value.slice(0, 40)}`;
      else out.chunked = true;
    } else if (name === 'connection') {
      out.connectionClose = value.toLowerCase().includes('close');
      out.connectionKeepAlive = value.toLowerCase().includes('keep-alive');
    } else if (name === 'last-modified') out.lastModified = value.trim();
  }
  if (!out.fault && out.chunked && out.length !== -1) out.fault = 'both Transfer-Encoding and Content-Length';
  return out;
}

const piece = fc.constantFrom(
  '\r\n',
  '\r',
  '\n',
  ' ',
  '\t',
  ':',
  '0',
  '9',
  'a',
  'Z',
  '-',
  '^',
  '(',
  '\x00',
  '\x7f',
  '\x1f',
  '\x80',
  '\xff',
  '\xe9',
  ' ~~~',
  'Content-Length: 12',
  'content-LENGTH:7 ',
  'Transfer-Encoding: chunked',
  'Connection: Close',
  'connection: Keep-Alive, TE',
  'Last-Modified: Sat, 28 Nov 2026 07:00:00 GMT ',
  'x:',
);
const statusLine = fc.constantFrom(
  'HTTP/1.1 200 OK\r\n',
  'HTTP/1.0 404\r\n',
  'HTTP/1.1 200\r\n',
  'HTTP/1.1 099 Low\r\n',
  'HTTP/1.1 2000 OK\r\n',
  'HTTP/1.2 200 OK\r\n',
  'HTTP/1.1 20 OK\r\n',
  'HTTP/1.1 200 \x01\xff\r\n',
  'HTTP/1.1 200OK\r\n',
  'HTTP/1.1 200 OK\n',
  'HTTP/2 200\r\n',
  '',
);
const line = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''));
/** A head as the client hands it over: ended by its first blank line. */
const head = fc
  .tuple(statusLine, fc.array(line, { maxLength: 5 }))
  .map(([s, lines]) => s + lines.map((l) => `${l}\r\n`).join('') + '\r\n')
  .map((h) => h.slice(0, h.indexOf('\r\n\r\n') + 4))
  .filter((h) => h.endsWith('\r\n\r\n'));

t.test('readHead decides as the head regular expression does, and reads the same fields', async (t) => {
  let accepted = 0;
  fc.assert(
    fc.property(head, fc.nat(3), (h, pad) => {
      const buf = Buffer.concat([Buffer.alloc(pad, 0x41), bytes(h)]);
      const got = { ...readHead(buf, pad, buf.length) };
      if (!HEAD_SYNTAX.test(h)) return got.status === -1 && got.fault !== '';
      accepted++;
      const want = reference(h);
      return Object.entries(want).every(([k, v]) => got[k as keyof typeof got] === v);
    }),
    { numRuns: 20_000 },
  );
  t.ok(accepted > 1000, `valid heads among the inputs: ${accepted}`);
  const read = (h: string) => ({ ...readHead(bytes(h), 0, h.length) });
  t.match(read('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n'), { status: 200, length: 3, fault: '' }, 'a plain head');
  t.match(read('HTTP/1.0 204\r\n\r\n'), { status: 204, http10: true, fault: '' }, 'no reason, no fields');
  t.match(read('HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n'), { status: -1 }, 'obs-fold');
  t.match(read('HTTP/1.1 200 OK\r\nName : x\r\n\r\n'), { status: -1 }, 'a space before the colon');
  t.match(read('HTTP/1.1 200 OK\r\nA: \x7f\r\n\r\n'), { status: -1 }, 'DEL in a value');
  t.match(read('HTTP/2.0 200 OK\r\n\r\n'), { status: -1, fault: 'the answer is not HTTP/1.x' });
});

t.test('a head read again, byte for byte, gives what its first reading gave; one byte apart, its own', async (t) => {
  const a = 'HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\nLast-Modified: Sat\r\n\r\n';
  const b = a.replace('12', '13').replace('Sat', 'Sun');
  const c = a.replace('close', 'clos\x01');
  const read = (h: string, pad = 0) => ({
    ...readHead(Buffer.concat([Buffer.alloc(pad, 0x41), bytes(h)]), pad, pad + h.length),
  });
  const first = read(a);
  t.match(first, { status: 200, length: 12, connectionClose: true, lastModified: 'Sat', fault: '' });
  t.match(read(b), { status: 200, length: 13, lastModified: 'Sun' }, 'the same length, other bytes');
  t.same(read(a, 3), first, 'the same bytes elsewhere in another buffer');
  t.same(read(a), first, 'and again');
  t.match(read(c), { status: -1 }, 'a control byte where the first had a letter');
  t.same(read(a), first);
  const long = `HTTP/1.1 200 OK\r\nX: ${'y'.repeat(2000)}\r\nContent-Length: 5\r\n\r\n`;
  t.match(read(long), { status: 200, length: 5 }, 'a head longer than what is remembered');
  t.match(read(long.replace('5\r\n', '6\r\n')), { status: 200, length: 6 });
});

t.test('nameIs matches a field name in any case, and nothing else', async (t) => {
  const tchar = fc.constantFrom(..."!#$%&'*+-.^_`|~09azAZkK".split(''));
  fc.assert(
    fc.property(
      fc.array(tchar, { maxLength: 16 }),
      fc.constantFrom('content-length', 'connection', 'te'),
      (n, lower) => {
        const name = n.join('');
        return nameIs(bytes(` ${name}:`), 1, 1 + name.length, lower) === (name.toLowerCase() === lower);
      },
    ),
    { numRuns: 5_000 },
  );
  t.ok(nameIs(bytes('Content-LENGTH'), 0, 14, 'content-length'));
  t.notOk(nameIs(bytes('Content~Length'), 0, 14, 'content-length'), '~ is not -');
  t.notOk(nameIs(bytes('Content-Lengt'), 0, 13, 'content-length'), 'shorter');
});

t.test('contentLength takes what the Content-Length expression takes, as Number reads it', async (t) => {
  const v = fc.array(fc.constantFrom(' ', '\t', '0', '1', '7', '9', 'x', '-', '+', '.'), { maxLength: 20 });
  fc.assert(
    fc.property(v, (p) => {
      const value = p.join('');
      const want = LENGTH_SYNTAX.test(value) ? Number(value) : -1;
      return contentLength(bytes(`:${value}\r`), 1, 1 + value.length) === want;
    }),
    { numRuns: 20_000 },
  );
  t.equal(contentLength(bytes(' 0012 '), 0, 6), 12);
  t.equal(contentLength(bytes('1234567890123456'), 0, 16), -1, 'sixteen digits');
  t.equal(contentLength(bytes('12\t'), 0, 3), -1, 'a trailing tab');
});
