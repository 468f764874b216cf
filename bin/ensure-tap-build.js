#!/usr/bin/env node
// tap builds its plugin set into node_modules, and a run that notices a changed plugin list rebuilds
// it but starts its own test processes with the old one (their flags come from the runner's loaded
// plugins). After `npm ci` the first `npm test` would so run every main-phase file with ts-node and
// @tapjs/mock's loader hook, which package.json's tap config removes (docs/decisions.md "Issue 28
// item 6"). Built here first, once per plugin list (a stamp under node_modules, gone with it).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'node_modules', '.cache', 'tap-plugins.json');
const wanted = JSON.stringify(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).tap?.plugin ?? []);

let built = '';
try {
  built = readFileSync(stamp, 'utf8');
} catch {
  // never built here
}
if (built !== wanted) {
  process.stderr.write('building tap with the configured plugins …\n');
  execFileSync(path.join(root, 'node_modules', '.bin', 'tap'), ['build'], { cwd: root, stdio: 'inherit' });
  mkdirSync(path.dirname(stamp), { recursive: true });
  writeFileSync(stamp, wanted);
}
