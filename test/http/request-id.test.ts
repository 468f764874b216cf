import t from 'tap';
import { requestId, requestIdForHeader } from '../../lib/http/request-id.js';

const latin1 = (v: string | Uint8Array) => (typeof v === 'string' ? v : Buffer.from(v).toString('latin1'));

t.test('an incoming id of 1–64 safe characters is kept; others are replaced', async (t) => {
  t.equal(requestId('cdn-edge.42:a_b'), 'cdn-edge.42:a_b');
  t.equal(requestId('x'.repeat(64)), 'x'.repeat(64));
  t.equal(requestIdForHeader('cdn-edge.42:a_b'), 'cdn-edge.42:a_b', 'kept for a header too');
  for (const bad of ['', 'x'.repeat(65), 'a b', 'a\r\nb', 'ü', '<script>']) {
    const made = requestId(bad || undefined);
    t.not(made, bad, JSON.stringify(bad.slice(0, 20)));
    t.match(made, /^[a-z0-9]{1,6}-[a-z0-9]+$/);
    t.match(latin1(requestIdForHeader(bad)), /^[a-z0-9]{1,6}-[a-z0-9]+$/, 'made for a header');
  }
});

t.test('made ids count up in base 36, in both forms, across every carry up to 36^3 + 1', async (t) => {
  const first = requestId(undefined);
  const [prefix, start] = first.split('-') as [string, string];
  const seen = new Set([first]);
  let wrong = 0;
  for (let k = 1; k <= 36 ** 3 + 1; k++) {
    // Alternate the two forms: one counter behind both.
    const id = k % 2 ? requestId(undefined) : latin1(requestIdForHeader(''));
    seen.add(id);
    if (id !== `${prefix}-${(parseInt(start, 36) + k).toString(36)}`) wrong++;
  }
  t.equal(wrong, 0, 'each id is the next number');
  t.equal(seen.size, 36 ** 3 + 2, 'no id repeats');
});
