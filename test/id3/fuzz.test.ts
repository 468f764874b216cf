import t from 'tap';
import fc from 'fast-check';
import { extractTags, mpdEvents, parseId3Tags } from '../../lib/id3/index.js';
import { box, emsgV1, id3, pat, pes, pmt, text, tsSegment, AOM_ID3 } from '../helpers/id3-writer.js';

const numRuns = Number(process.env.FUZZ_RUNS) || 300;
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));

/** Prefixes that steer random bytes into each reader. */
const prefixes: Buffer[] = [
  Buffer.from([0x49, 0x44, 0x33, 4, 0, 0]), // ID3 header start
  Buffer.from([0x49, 0x44, 0x33, 3, 0, 0x40]), // v2.3 with an extended header
  id3([text('TIT2', 'x')]).subarray(0, 14),
  Buffer.concat([pat(), pmt(0x102)]), // PAT + PMT, then random "packets"
  Buffer.from([0xff, 0xf1, 0x4c, 0x80]), // ADTS
  box('styp', Buffer.alloc(4)),
  Buffer.from([0, 0, 0, 40, 0x65, 0x6d, 0x73, 0x67, 0, 0, 0, 0]), // emsg v0 header
  Buffer.from([0, 0, 0, 1, 0x65, 0x6d, 0x73, 0x67]), // emsg with largesize
];

t.test('random bytes never throw out of extractTags or the ID3 reader', async (t) => {
  fc.assert(
    fc.property(bytes(4096), (b) => {
      extractTags(b);
      parseId3Tags(b);
    }),
    { numRuns },
  );
  t.pass(`${numRuns} runs`);
});

t.test('random bytes after a valid TS / ID3 / box prefix never throw', async (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...prefixes), bytes(2048), fc.integer({ min: 0, max: 2 }), (prefix, rest, mode) => {
      // modes 1 and 2: random bytes laid into 188-byte TS packets (2: on the metadata PID 0x102), to reach the PES path
      let b = Buffer.concat([prefix, rest]);
      for (let p = prefix.length; mode > 0 && p + 2 < b.length; p += 188) {
        b[p] = 0x47;
        if (mode === 2) [b[p + 1], b[p + 2]] = [(b[p + 1]! & 0x40) | 0x01, 0x02];
      }
      const r = extractTags(b);
      parseId3Tags(b);
      for (const tag of r.tags) if (typeof tag.value !== 'string') throw new Error('value not a string');
      b = Buffer.alloc(0);
    }),
    { numRuns },
  );
  t.pass(`${numRuns} runs`);
});

t.test('well-formed TS and emsg carrying random ID3-ish payloads never throw', async (t) => {
  const id3ish = fc
    .tuple(fc.constantFrom(2, 3, 4), fc.integer({ min: 0, max: 255 }), bytes(600))
    .map(([v, flags, body]) =>
      Buffer.concat([
        Buffer.from([0x49, 0x44, 0x33, v, 0, flags, 0, 0, (body.length >> 7) & 0x7f, body.length & 0x7f]),
        body,
      ]),
    );
  fc.assert(
    fc.property(id3ish, fc.nat({ max: 2 ** 33 - 1 }), (payload, pts) => {
      extractTags(tsSegment([pes(payload, { pts }), pes(payload.subarray(3), { aligned: false })]));
      extractTags(emsgV1(AOM_ID3, '', 90000, pts, payload));
    }),
    { numRuns },
  );
  t.pass(`${numRuns} runs`);
});

t.test('random MPD-ish text never throws', async (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (s) => {
      mpdEvents(
        `<MPD><Period><EventStream schemeIdUri="x" timescale="${s.length}"><Event presentationTime="1">${s}</Event></EventStream></Period></MPD>`,
      );
      mpdEvents(s);
    }),
    { numRuns },
  );
  t.pass(`${numRuns} runs`);
});
