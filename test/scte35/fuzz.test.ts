/** Property tests: no input makes the decoder throw anything but Scte35Error, or the HLS reader throw at all. */
import fc from 'fast-check';
import t from 'tap';
import { decodeSplice, readHlsCues, Scte35Error, tryDecodeSplice } from '../../lib/scte35/index.js';
import { section } from '../helpers/scte35.js';

const numRuns = Number(process.env.FUZZ_RUNS ?? 500);

const VALID = [
  '/DAhAAAAAAAAAP/wEAUAAAHAf+9/fgAg9YDAAAAAAAA25aoh',
  '/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg==',
  '/DBIAAAAAAAA///wBQb+ek2ItgAyAhdDVUVJSAAAGH+fCAgAAAAALMvDRBEAAAIXQ1VFSUgAABl/nwgIAAAAACyk26AQAACZcuND',
  '/DBIAAAAAAAAAP/wBQb+RPVwgAAyAjBDVUVJNAAD/H/AAAFbcVAMGlRWU1Q6ZnJhbmNlMl8yMDI2MDYwNF8xMDIwNAEBAADstgk/',
  '/DBeAAAAAAAAAP/wBQb/FFKUFwBIAhRDVUVJAAX6C3//AAApMuAAADAKDwIfQ1VFSQAF+v9/vwwQQURGUgEzogE0sXwF+gWXQAIAAAIPQ1VFSQAF+gp/vwAAMQkP2DtRqg==',
].map((s) => Buffer.from(s, 'base64'));

function onlyScte35Error(payload: string | Uint8Array, checkCrc = true): boolean {
  try {
    decodeSplice(payload, { checkCrc });
  } catch (e) {
    if (!(e instanceof Scte35Error)) throw e;
  }
  const r = tryDecodeSplice(payload, { checkCrc });
  if (!r.ok && r.error.code === 'internal') throw new Error(r.error.message);
  return true;
}

t.test('random bytes', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), (b) => onlyScte35Error(b)),
    { numRuns },
  );
  t.pass();
});

t.test('random bodies inside a well-formed header and CRC reach every command and descriptor path', async (t) => {
  const body = fc.tuple(
    fc.constantFrom(0x00, 0x04, 0x05, 0x06, 0x07, 0xff, 0x42),
    fc.uint8Array({ maxLength: 200 }),
    fc.boolean(),
  );
  fc.assert(
    fc.property(body, ([type, rest, legacyLength]) => {
      const len = legacyLength ? 0xfff : Math.min(rest.length, 0xffe);
      const head = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0xff, 0xf0 | (len >> 8), len & 0xff, type]);
      return onlyScte35Error(section(Buffer.concat([head, rest]).toString('hex')));
    }),
    { numRuns },
  );
  t.pass();
});

t.test('mutated valid sections (CRC not checked, so the mutation is parsed)', async (t) => {
  const mutation = fc.tuple(
    fc.nat(VALID.length - 1),
    fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 6 }),
    fc.nat(),
  );
  fc.assert(
    fc.property(mutation, ([which, edits, cut]) => {
      const b = Buffer.from(VALID[which]!);
      for (const [at, v] of edits) b[at % b.length] = v;
      onlyScte35Error(b, false);
      return onlyScte35Error(b.subarray(0, cut % (b.length + 1)), false);
    }),
    { numRuns },
  );
  t.pass();
});

t.test('random strings, base64 and hex text', async (t) => {
  const text = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.base64String({ maxLength: 200 }),
    fc.uint8Array({ maxLength: 150 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
    fc.uint8Array({ maxLength: 150 }).map((b) => Buffer.from([0xfc, ...b]).toString('base64')),
  );
  fc.assert(
    fc.property(text, (s) => onlyScte35Error(s)),
    { numRuns },
  );
  t.pass();
});

t.test('the HLS cue reader never throws', async (t) => {
  const tags = [
    '#EXT-X-CUE-OUT',
    '#EXT-X-CUE-OUT-CONT',
    '#EXT-X-CUE-IN',
    '#EXT-OATCLS-SCTE35',
    '#EXT-X-DATERANGE',
    '#EXT-X-CUE',
    '#EXT-X-SPLICEPOINT-SCTE35',
    '#EXT-X-SCTE35',
    '#EXT-SCTE35',
    '#EXTINF',
    '#EXT-X-MEDIA-SEQUENCE',
    '#EXT-X-PROGRAM-DATE-TIME',
  ];
  const value = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom(...VALID.map((b) => b.toString('base64'))),
    fc.constantFrom(
      ...VALID.map((b) => `SCTE35-OUT=0x${b.toString('hex')}`),
      'ElapsedTime=1,Duration=x',
      '1/2',
      'CUE-OUT=YES,CUE="',
      'ID="a,SCTE35-CMD=0x',
    ),
  );
  const line = fc.oneof(
    fc.tuple(fc.constantFrom(...tags), fc.option(value)).map(([tag, v]) => (v === null ? tag : `${tag}:${v}`)),
    fc.string({ maxLength: 20 }),
  );
  fc.assert(
    fc.property(fc.array(line, { maxLength: 40 }), (lines) => {
      readHlsCues(lines);
      readHlsCues(lines.join('\n'));
      return true;
    }),
    { numRuns },
  );
  t.pass();
});
