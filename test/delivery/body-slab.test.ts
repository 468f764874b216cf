import t from 'tap';
import { BodySlab, ownBytes } from '../../lib/delivery/body-slab.js';

t.test('bodies are the UTF-8 bytes of their text, packed without overlap', async (t) => {
  const slab = new BodySlab(1024, 200);
  const texts = ['#EXTM3U\n', 'é–ü 日本 🎬\n', '', 'x'.repeat(60)];
  const bodies = texts.map((s) => slab.store(s));
  texts.forEach((s, i) => t.equal(bodies[i]!.toString('utf8'), s, `text ${i} round-trips`));
  t.equal(bodies[0]!.buffer, bodies[3]!.buffer, 'small bodies share one slab');
  for (let i = 1; i < bodies.length; i++)
    t.ok(
      bodies[i]!.byteOffset >= bodies[i - 1]!.byteOffset + bodies[i - 1]!.byteLength,
      `body ${i} starts after body ${i - 1}`,
    );
  bodies[0]!.fill(0); // a neighbour's bytes are not touched
  t.equal(bodies[1]!.toString('utf8'), texts[1]);
});

t.test('a full slab starts a new one; large bodies get their own allocation', async (t) => {
  const slab = new BodySlab(1024, 300);
  const first = slab.store('a'.repeat(60)); // reserves up to 180 bytes
  const many = Array.from({ length: 10 }, () => slab.store('b'.repeat(90)));
  t.not(many.at(-1)!.buffer, first.buffer, 'moved on to a new slab');
  t.equal(first.toString(), 'a'.repeat(60), 'the old slab still holds its bodies');
  const large = slab.store('c'.repeat(101)); // 303 worst-case bytes > 300
  t.equal(large.byteOffset, 0);
  t.equal(large.buffer.byteLength, 101, 'exactly its bytes');
  t.equal(ownBytes('ü').byteLength, 2);
});
