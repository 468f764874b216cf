/** The wall clock read from the monotonic one (lib/http/wall-clock.ts): Date.now() to the millisecond, re-synchronised each second. */
import t from 'tap';
import { performance } from 'node:perf_hooks';
import { WallClock, wallNow } from '../../lib/http/wall-clock.js';

t.test('what Date.now() reads, from a performance.now() reading', async (t) => {
  const outside: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const before = Date.now();
    const now = wallNow(performance.now());
    const after = Date.now();
    // The offset is taken from a whole millisecond: a reading may be one below Date.now()'s.
    if (now < before - 1 || now > after || now !== Math.floor(now)) outside.push(`${before} ${now} ${after}`);
  }
  t.same(outside, [], 'every reading between the Date.now() before and after it, in whole milliseconds');
});

t.test('a step of the wall clock shows once a second of the monotonic one has passed', async (t) => {
  let mono = 1000;
  let wall = 1_800_000_000_000;
  const clock = new WallClock(
    () => mono,
    () => wall,
  );
  t.equal(clock.at(1000), 1_800_000_000_000);
  mono = 1500.7;
  wall += 500.7;
  t.equal(clock.at(mono), 1_800_000_000_500, 'the monotonic reading carried over, in whole milliseconds');
  wall += 5000; // the system clock is stepped forward
  mono = 1600;
  t.equal(clock.at(mono), 1_800_000_000_600, 'within the second: not yet seen');
  t.equal(clock.at(1200), 1_800_000_000_200, 'an older reading: the offset then in force, no resynchronisation');
  mono = 2000;
  wall = 1_800_000_006_000;
  t.equal(clock.at(mono), 1_800_000_006_000, 'a second after the last synchronisation: the step shows');
  t.equal(clock.at(1999), 1_800_000_005_999, 'and older readings follow the new offset');
});
