/** The memo of renderings by upstream bytes (lib/delivery/render-memo.ts): kept on a second sighting, reused only for equal bytes. */
import t from 'tap';
import { MemoEntry, RenderMemo } from '../../lib/delivery/render-memo.js';

const playlist = (seq: number, tail = `seg_${seq + 2}.ts`) =>
  Buffer.from(
    `#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:${seq}\n#EXTINF:6,\nseg_${seq}.ts\n#EXTINF:6,\n${tail}\n`,
  );

/** find, then keep under the fingerprint it answered: what one rendering does. */
function see(memo: RenderMemo, scope: object, raw: Buffer, text: string): MemoEntry | undefined {
  const found = memo.find(scope, raw);
  return typeof found === 'number' ? memo.keep(found, raw, text) : found;
}

t.test('an entry is made on the second sighting and found on the third', async (t) => {
  const memo = new RenderMemo();
  const scope = {};
  const raw = playlist(1);
  t.equal(see(memo, scope, raw, 'out'), undefined, 'first sighting: nothing kept');
  const made = see(memo, scope, raw, 'out');
  t.ok(made, 'second: kept');
  t.equal(memo.hits, 0);
  const found = memo.find(scope, Buffer.from(raw)); // equal bytes, another buffer
  t.equal(found, made, 'third: the same entry');
  t.equal(memo.hits, 1);
  t.equal((found as MemoEntry).text, 'out');
});

t.test('the kept input is a copy: a shared read buffer overwritten later does not change it', async (t) => {
  const memo = new RenderMemo();
  const scope = {};
  const shared = Buffer.from(playlist(7));
  see(memo, scope, shared, 'out');
  const entry = see(memo, scope, shared, 'out')!;
  shared.fill(0x41);
  t.same(entry.raw, playlist(7));
  t.type(memo.find(scope, playlist(7)), MemoEntry);
});

t.test('reused only for equal bytes and within its scope', async (t) => {
  const memo = new RenderMemo();
  const scope = {};
  const raw = playlist(3);
  see(memo, scope, raw, 'three');
  see(memo, scope, raw, 'three');
  // Same length and same last bytes (the fingerprint), another playlist: the bytes decide.
  const twin = Buffer.from(raw.toString('latin1').replace('DURATION:6', 'DURATION:7'), 'latin1');
  t.equal(twin.length, raw.length);
  t.type(memo.find(scope, twin), 'number', 'a fingerprint twin is not the entry');
  t.type(memo.find({}, raw), 'number', 'another settings object shares nothing');
  t.type(memo.find(scope, playlist(4)), 'number', 'the next window is another entry');
});

t.test('bounded: a table that fills up is emptied', async (t) => {
  const memo = new RenderMemo();
  const scope = {};
  see(memo, scope, playlist(0), 'x');
  t.ok(see(memo, scope, playlist(0), 'x'));
  for (let i = 1; i <= 1100; i++) see(memo, scope, playlist(i), 'x'); // 1,100 fingerprints seen once
  t.type(memo.find(scope, playlist(0)), 'number', 'the early entry went with the rest');
  const big = Buffer.alloc(2 * 1024 * 1024);
  const fingerprint = memo.find(scope, big) as number;
  memo.keep(fingerprint, big, 'big');
  t.equal(memo.keep(fingerprint, big, 'big'), undefined, 'inputs over 1 MiB are never kept');
});

t.test("a break's substitutions of an entry are kept by their text, sixteen at most", async (t) => {
  const memo = new RenderMemo();
  const scope = {};
  see(memo, scope, playlist(9), 'base');
  const entry = see(memo, scope, playlist(9), 'base')!;
  const rendering = (body: string) => ({
    status: 200,
    headers: {},
    body: Buffer.from(body),
    freshMs: 1000,
    staleMs: 0,
  });
  const squeezed = rendering('squeezed');
  memo.keepVariant(entry, 'base, squeezed', squeezed);
  t.equal(entry.variants?.get('base, squeezed'), squeezed);
  t.equal(entry.variants?.get('base'), undefined, 'the unsubstituted text is not a variant');
  for (let i = 0; i < 16; i++) memo.keepVariant(entry, `base, assignment ${i}`, rendering(String(i)));
  t.ok(entry.variants!.size <= 16, 'bounded');
  t.equal(entry.variants?.get('base, squeezed'), undefined, 'emptied when full');
});
