import t from 'tap';
import { TextMemo } from '../../../lib/squeeze/breaks/text-memo.js';

t.test('exact lookups by content, not by identity', async (t) => {
  const memo = new TextMemo<number>();
  const a = `#EXTM3U\n${'x'.repeat(2000)}\n/seg_1.ts\n`;
  memo.set(a, 1);
  t.equal(memo.get(Buffer.from(a).toString()), 1, 'an equal string built elsewhere is found');
  t.equal(memo.get(a.replace('xxxx', 'yyyy')), undefined, 'same length and tail, other content: not found');
  memo.set(a.replace('xxxx', 'yyyy'), 2);
  t.equal(memo.get(a), 1, 'entries sharing a fingerprint stay apart');
  t.equal(memo.size, 2);
  memo.set(a, 3);
  t.equal(memo.get(a), 3, 'set replaces');
  t.equal(memo.size, 2);
  memo.clear();
  t.equal(memo.get(a), undefined);
  t.equal(memo.size, 0);
});

t.test('a bucket of look-alikes is bounded', async (t) => {
  const memo = new TextMemo<number>();
  const texts = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(4, '0')}${'z'.repeat(100)}`);
  texts.forEach((s, i) => memo.set(s, i));
  t.equal(memo.size, 8, 'eight per fingerprint');
  t.equal(memo.get(texts[0]!), undefined, 'the oldest went first');
  t.equal(memo.get(texts[19]!), 19);
});
