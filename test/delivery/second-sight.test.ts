import t from 'tap';
import { SecondSight } from '../../lib/delivery/second-sight.js';

t.test('a key is seen again within the window, then forgotten', async (t) => {
  const s = new SecondSight(10, 10);
  t.equal(s.seen('/a?u=1', 0), false, 'first sight');
  t.equal(s.seen('/a?u=1', 1_000), true, 'second sight');
  t.equal(s.seen('/a?u=2', 1_000), false, 'another key');
  t.equal(s.seen('/a?u=1', 11_000), true, 'within the window of its last sight');
  t.equal(s.seen('/a?u=1', 22_000), false, 'past the window: a first sight again');
});

t.test('a fixed table: many keys push older ones out, nothing grows', async (t) => {
  const s = new SecondSight(60, 4); // 16 slots
  s.seen('old', 0);
  for (let i = 0; i < 1000; i++) s.seen(`k${i}`, 0);
  t.equal(s.seen('old', 0), false, 'pushed out by a thousand newer keys');
  let again = 0;
  for (let i = 990; i < 1000; i++) if (s.seen(`k${i}`, 0)) again++;
  t.ok(again >= 5, `most of the latest keys are remembered (${again} of 10 in 16 slots)`);
});
