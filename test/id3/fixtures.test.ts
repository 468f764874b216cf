import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { extractTags, type Id3TagResult } from '../../lib/id3/index.js';
import { fixtureFiles, fixturesDir } from '../helpers/fixtures.js';

const read = (rel: string) => readFileSync(path.join(fixturesDir, rel));
const at = (presentation_time: number, timescale = 90000) => ({ timescale, presentation_time });
const OWNER = 'com.apple.streaming.transportStreamTimestamp';
const ENC = 'Z/IPStream X/2 v1.24.12';

/** Every tag of every media fixture that has any; all others must yield none. */
const expected: Record<string, { container: string; tags: Id3TagResult[] }> = {
  'media/shaka-player/id3-metadata.ts': {
    container: 'ts',
    tags: [
      {
        frame: 'TIT2',
        value: 'Sam sobie jade - ADM & Białas & White 2115 & Mata & Beteo & Lanek',
        metadata: at(8102069984),
      },
      { frame: 'TENC', value: ENC, metadata: at(8102069984) },
      { frame: 'TIT2', value: 'FUKAJ SWEEPER - Imanbek', metadata: at(8102192864) },
      { frame: 'TENC', value: ENC, metadata: at(8102192864) },
    ],
  },
  'media/shaka-player/id3-metadata.aac': {
    container: 'packed-audio',
    tags: [
      {
        frame: 'PRIV',
        description: OWNER,
        value: OWNER,
        data: Buffer.from([0, 0, 0, 0, 0, 0x0d, 0x99, 0xf4]).toString('base64'),
        metadata: at(891380),
      },
    ],
  },
  'media/muxjs/test-aac-segment.aac': {
    container: 'packed-audio',
    tags: [
      {
        frame: 'PRIV',
        description: OWNER,
        value: OWNER,
        data: Buffer.from([0, 0, 0, 0, 0, 0x0d, 0xaa, 0xca]).toString('base64'),
        metadata: at(895690),
      },
    ],
  },
  'media/shaka-player/cea608-track-segment-emsg-id3.mp4': {
    container: 'isobmff',
    tags: [
      {
        frame: 'TXXX',
        description: '',
        value: " *** ID3 timed metadata from 'emsg' @ -- 00:00:10.0 *** ",
        metadata: at(1800000),
      },
    ],
  },
};

const containers: Record<string, string> = {
  '.ts': 'ts',
  '.aac': 'packed-audio',
  '.mp4': 'isobmff',
  '.m4s': 'isobmff',
  '.dat': 'unknown',
};

t.test('every media fixture: exact tags and times, or none', async (t) => {
  const files = fixtureFiles('media', ['.ts', '.aac', '.mp4', '.m4s', '.dat']);
  t.equal(files.length, 12, 'media fixtures read');
  let withTags = 0;
  for (const rel of files) {
    const got = extractTags(read(rel));
    const want = expected[rel];
    if (want) withTags++;
    t.equal(got.container, want?.container ?? containers[path.extname(rel)], `${rel}: container`);
    t.same(got.tags, want?.tags ?? [], `${rel}: tags`);
    t.same(JSON.parse(JSON.stringify(got.tags)), got.tags, `${rel}: plain data, no view of the input`);
  }
  t.equal(withTags, Object.keys(expected).length, 'every expected fixture was met');
});

t.test('sniffing is by bytes, not by name', async (t) => {
  t.equal(extractTags(read('media/shaka-player/id3-metadata.aac')).container, 'packed-audio');
  const renamedTs = Buffer.concat([Buffer.from([0, 0, 0]), read('media/shaka-player/id3-metadata.ts')]);
  t.equal(extractTags(renamedTs).tags.length, 4, 'a TS with a leading offset');
  t.same(extractTags(Buffer.alloc(0)), { container: 'unknown', tags: [] });
});

t.test('speed: a 2 MB TS segment in a few ms', async (t) => {
  const seg = Buffer.concat([
    read('media/shaka-player/id3-metadata.ts'),
    ...Array.from({ length: 10 }, () => read('media/muxjs/test-segment.ts')),
  ]);
  t.ok(seg.length > 1.9e6);
  for (let i = 0; i < 5; i++) extractTags(seg);
  const runs: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const r = extractTags(seg);
    runs.push(performance.now() - t0);
    if (r.tags.length !== 4) t.fail('tags lost');
  }
  runs.sort((a, b) => a - b);
  const median = runs[7]!;
  t.comment(
    `extractTags on ${(seg.length / 1e6).toFixed(2)} MB TS: median ${median.toFixed(2)} ms, min ${runs[0]!.toFixed(2)} ms`,
  );
  t.ok(median < 100, 'well under 100 ms (a few ms expected; loose for loaded CI machines)');
});
