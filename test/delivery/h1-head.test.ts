/**
 * The byte-level head checks (lib/delivery/h1-head.ts) against the regular expressions they
 * replaced, as oracles: the same inputs, the same verdicts. Inputs are built from the pieces where
 * the grammar decides (CR, LF, SP, HTAB, `:`, digits, a separator, a control byte, obs-text), so
 * near-misses are as common as valid heads. h1-pool-differential.test.ts holds the client to llhttp.
 */
import t from 'tap';
import fc from 'fast-check';
import { contentLength, nameIs, statusOf, validHead } from '../../lib/delivery/h1-head.js';

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]";
const STATUS_LINE = 'HTTP/1\\.[01] \\d{3}(?: [^\\r\\n]*)?\\r\\n';
const FIELD = `${TOKEN}+:[\\t\\x20-\\x7e\\x80-\\xff]*`;
const HEAD_SYNTAX = new RegExp(`^${STATUS_LINE}(?:${FIELD}\\r\\n)*\\r\\n$`);
const LENGTH_SYNTAX = /^[\t ]*\d{1,15} *$/;

const bytes = (s: string) => Buffer.from(s, 'latin1');

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
  '\xe9',
  'Content-Length: 12',
  'x:',
);
const statusLine = fc.constantFrom(
  'HTTP/1.1 200 OK\r\n',
  'HTTP/1.0 404\r\n',
  'HTTP/1.1 200\r\n',
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

t.test('validHead decides as the head regular expression does', async (t) => {
  fc.assert(
    fc.property(head, fc.nat(3), (h, pad) => {
      const buf = Buffer.concat([Buffer.alloc(pad, 0x41), bytes(h)]);
      return validHead(buf, pad, buf.length) === HEAD_SYNTAX.test(h);
    }),
    { numRuns: 20_000 },
  );
  t.ok(validHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n'), 0, 38), 'a plain head');
  t.ok(validHead(bytes('HTTP/1.0 204\r\n\r\n'), 0, 16), 'no reason, no fields');
  t.notOk(validHead(bytes('HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n'), 0, 31), 'obs-fold');
  t.notOk(validHead(bytes('HTTP/1.1 200 OK\r\nName : x\r\n\r\n'), 0, 28), 'a space before the colon');
  t.notOk(validHead(bytes('HTTP/1.1 200 OK\r\nA: \x7f\r\n\r\n'), 0, 25), 'DEL in a value');
});

t.test('statusOf reads the three digits', async (t) => {
  t.equal(statusOf('HTTP/1.1 204 No Content\r\n'), 204);
  t.equal(statusOf('HTTP/1.0 099\r\n'), 99);
});

t.test('nameIs matches a field name in any case, and nothing else', async (t) => {
  const tchar = fc.constantFrom(..."!#$%&'*+-.^_`|~09azAZkK".split(''));
  fc.assert(
    fc.property(
      fc.array(tchar, { maxLength: 16 }),
      fc.constantFrom('content-length', 'connection', 'te'),
      (n, lower) => {
        const name = n.join('');
        const text = ` ${name}:`;
        return nameIs(text, 1, 1 + name.length, lower) === (name.toLowerCase() === lower);
      },
    ),
    { numRuns: 5_000 },
  );
  t.ok(nameIs('Content-LENGTH', 0, 14, 'content-length'));
  t.notOk(nameIs('Content~Length', 0, 14, 'content-length'), '~ is not -');
  t.notOk(nameIs('Content-Lengt', 0, 13, 'content-length'), 'shorter');
});

t.test('contentLength takes what the Content-Length expression takes, as Number reads it', async (t) => {
  const v = fc.array(fc.constantFrom(' ', '\t', '0', '1', '7', '9', 'x', '-', '+', '.'), { maxLength: 20 });
  fc.assert(
    fc.property(v, (p) => {
      const value = p.join('');
      return contentLength(`:${value}\r`, 1, 1 + value.length) === (LENGTH_SYNTAX.test(value) ? Number(value) : -1);
    }),
    { numRuns: 20_000 },
  );
  t.equal(contentLength(' 0012 ', 0, 6), 12);
  t.equal(contentLength('1234567890123456', 0, 16), -1, 'sixteen digits');
  t.equal(contentLength('12\t', 0, 3), -1, 'a trailing tab');
});
