#!/usr/bin/env node
// `npm test`: the suite in two lanes at once, the players browser file after the second
// (docs/decisions.md "Issue 28 item 6 (lanes)").
// - First, test/loader/warm.js fills the transpile cache in one process (a clean clone has none).
// - Lane 1: every file outside test/browser, package.json's tap.jobs at a time.
// - Lane 2, beside it: the other browser files, one at a time. They wait on media time (a VOD
//   played to its end, a live edge, the operator page's poll) more than they compute, so they fit
//   in lane 1's idle CPU. Their output is held and printed after lane 1's: two TAP streams never
//   interleave, and .ci/run adds up each run's summary line as before. After them, lane 2 takes
//   the longest files that tap's alphabetical order would start last in lane 1 (LATE_LONG): on a
//   half-speed machine lane 2 was done at 162 s and lane 1 at 559 s, its tail those files.
// - Then test/browser/players.test.ts, after lane 2 and beside lane 1's last files only: the
//   reference transcoder composes its breaks in real time, which a machine busy with many other
//   files cannot keep up with (the known flake). Its output is held and printed last.
// Exits 1 when any of the three runs failed.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tap = path.join(root, 'node_modules', '.bin', 'tap');
const ALONE = 'test/browser/players.test.ts';
/** Long files late in the alphabet (30–55 s each on a half-speed machine): lane 2 runs them after the browser files. */
const LATE_LONG = [
  'test/squeeze/breaks/breaks.test.ts',
  'test/squeeze/monitor/monitor.test.ts',
  'test/transcoder/audio-slot.test.ts',
  'test/transcoder/transcoder.test.ts',
];
const beside = readdirSync(path.join(root, 'test', 'browser'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/browser/${f}`)
  .filter((f) => f !== ALONE)
  .sort()
  .concat(LATE_LONG); // tap sorts its files: test/browser/ comes before these

/** Runs tap with `args`; its output goes to ours, or into `held` when given. Resolves to its exit code. */
function run(args, held) {
  return new Promise((resolve) => {
    const child = spawn(tap, args, { cwd: root, stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (held) for (const s of [child.stdout, child.stderr]) s.on('data', (d) => held.push(d));
    child.on('close', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
  });
}

// `npm test -- <files or tap options>`: those alone, in one tap run.
const asked = process.argv.slice(2);
if (asked.length) process.exit(await run(asked));

// The transpile cache filled in one process first (test/loader/warm.js): on a clean clone every
// test process would otherwise load TypeScript and transpile its own imports.
await new Promise((resolve) =>
  spawn(process.execPath, [path.join(root, 'test', 'loader', 'warm.js')], { cwd: root, stdio: 'inherit' }).on(
    'close',
    resolve,
  ),
);
const began = Date.now();
/** Where the suite's time goes, on stderr (the TAP streams stay as they are). */
const mark = (what) => process.stderr.write(`[tests] ${Math.round((Date.now() - began) / 1000)}s ${what}\n`);
const held = [];
const heldPlayers = [];
const lane2 = run(['--jobs=1', ...beside], held).then(
  (code) => (mark('lane 2 (browser files, then LATE_LONG) done'), code),
);
const [main, browser, players] = await Promise.all([
  run(['--exclude=test/browser/**', '--exclude=**/fixtures/**', ...LATE_LONG.map((f) => `--exclude=${f}`)]).then(
    (code) => (mark('lane 1 done'), code),
  ),
  lane2,
  // After lane 2, beside lane 1's last files: fewer jobs run then than in lane 1's first minutes.
  lane2.then(() => run(['--jobs=1', ALONE], heldPlayers)).then((code) => (mark('players file done'), code)),
]);
process.stdout.write(Buffer.concat(held));
process.stdout.write(Buffer.concat(heldPlayers));
process.exit(main || browser || players ? 1 : 0);
