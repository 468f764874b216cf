/** The wall clock read from the monotonic one (lib/http/wall-clock.ts): Date.now() to the millisecond, re-synchronised each second. */
import t from 'tap';
import { performance } from 'node:perf_hooks';
import { wallNow } from '../../lib/http/wall-clock.js';

t.test('what Date.now() reads, from a performance.now() reading', async (t) => {
  const outside: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const before = Date.now();
    const now = wallNow(performance.now());
    const after = Date.now();
    // One clock's millisecond may tick before the other's: a millisecond either side.
    if (now < before - 1 || now > after + 1 || now !== Math.floor(now)) outside.push(`${before} ${now} ${after}`);
  }
  t.same(outside, [], 'every reading between the Date.now() before and after it, in whole milliseconds');
  t.end();
});

t.test('a reading a second or more after the last synchronisation reads the offset again', async (t) => {
  // A reading from "the future" resynchronises: the answer is then Date.now() itself, whatever the reading.
  const ahead = performance.now() + 5_000;
  const now = wallNow(ahead);
  t.ok(Math.abs(now - Date.now()) <= 1, 'synchronised at the new reading');
  // A reading earlier than the last synchronisation (a caller's older value) resynchronises too.
  const back = wallNow(performance.now());
  t.ok(Math.abs(back - Date.now()) <= 1, 'and back');
  t.end();
});
