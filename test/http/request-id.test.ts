import t from 'tap';
import { requestId } from '../../lib/http/request-id.js';

t.test('an incoming id of 1–64 safe characters is kept; others are replaced', async (t) => {
  t.equal(requestId('cdn-edge.42:a_b'), 'cdn-edge.42:a_b');
  t.equal(requestId('x'.repeat(64)), 'x'.repeat(64));
  for (const bad of ['', 'x'.repeat(65), 'a b', 'a\r\nb', 'ü', '<script>']) {
    const made = requestId(bad || undefined);
    t.not(made, bad, JSON.stringify(bad.slice(0, 20)));
    t.match(made, /^[a-z0-9]{1,6}-[a-z0-9]+$/);
  }
});

t.test('made ids count up (base 36)', async (t) => {
  const first = requestId(undefined);
  const [prefix, start] = first.split('-') as [string, string];
  const seen = new Set([first]);
  let wrong = 0;
  for (let k = 1; k <= 5000; k++) {
    const id = requestId(undefined);
    seen.add(id);
    if (id !== `${prefix}-${(parseInt(start, 36) + k).toString(36)}`) wrong++;
  }
  t.equal(wrong, 0, 'each id is the next number');
  t.equal(seen.size, 5001, 'no id repeats');
});
