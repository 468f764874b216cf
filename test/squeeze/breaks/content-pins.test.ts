/**
 * The record of break segments published as content (lib/squeeze/breaks/content-pins.ts): bounded
 * per break, dropped when the break leaves the snapshot, read from the state store when a break
 * enters it, announced to the other instances.
 */
import t from 'tap';
import { createLogger } from '../../../lib/log/index.js';
import { MemoryStateStore } from '../../../lib/store/index.js';
import { ContentPins, MAX_PER_BREAK, parsePin, pinOf } from '../../../lib/squeeze/breaks/content-pins.js';

const log = createLogger('silent');
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

t.test('members: assignment, path and, for a timed URI, its time step', async (t) => {
  t.same(parsePin(pinOf('a', '/x/seg_1.ts')), { assignment: 'a', path: '/x/seg_1.ts', step: undefined });
  t.same(parsePin(pinOf('a', '/x/seg_1.ts', 42)), { assignment: 'a', path: '/x/seg_1.ts', step: 42 });
});

t.test('bounded per break; dropped with the break', async (t) => {
  const pins = new ContentPins(new MemoryStateStore(), log);
  for (let i = 0; i < MAX_PER_BREAK; i++) pins.add('b1', pinOf('a', `/seg_${i}.ts`), 60_000);
  t.notOk(pins.add('b1', pinOf('a', '/one-more.ts'), 60_000), 'past the cap: not pinned');
  t.ok(pins.add('b1', pinOf('a', '/seg_0.ts'), 60_000), 'one already held still answers true');
  t.ok(pins.add('b2', pinOf('a', '/seg_0.ts'), 60_000), 'another break has its own room');
  await settle();
  await pins.track(['b2']);
  t.notOk(pins.has('b1', pinOf('a', '/seg_0.ts')), 'b1 left the snapshot: its pins are gone');
  t.ok(pins.has('b2', pinOf('a', '/seg_0.ts')), 'b2 kept');
});

t.test('shared: written, announced, and read by an instance that meets the break later', async (t) => {
  const state = new MemoryStateStore();
  const one = new ContentPins(state, log);
  const two = new ContentPins(state, log);
  const heard: string[] = [];
  await two.start((breakId, member) => heard.push(`${breakId} ${member}`));
  t.teardown(() => two.stop());
  one.add('b1', pinOf('a', '/seg_7.ts'), 60_000);
  await settle();
  t.same(heard, [`b1 ${pinOf('a', '/seg_7.ts')}`], 'the other instance heard it');
  t.ok(two.has('b1', pinOf('a', '/seg_7.ts')), 'and holds it');
  t.ok((await state.ttl('sqz:{br:b1}:content')) > 0, 'the stored set expires');
  const three = new ContentPins(state, log);
  t.notOk(three.has('b1', pinOf('a', '/seg_7.ts')), 'a third instance, before its snapshot has the break');
  await three.track(['b1']);
  t.ok(three.has('b1', pinOf('a', '/seg_7.ts')), 'reads the stored pins when the break enters it');
});
