#!/usr/bin/env node
// Builds dist/ with tsc when it is missing or older than any source file, so `npm start` works on a fresh clone.
// Test files that start the built server call it too, several at once under parallel tap jobs: one
// builds while the others wait on a lock folder, then find dist/ current.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', 'bin', 'server.js');
const lock = path.join(root, 'dist', '.build-lock');
/** A lock older than any build can take was left by a killed builder. */
const STALE_LOCK_MS = 10 * 60_000;

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(
      newest,
      entry.isDirectory() ? newestSource(p) : entry.name.endsWith('.ts') ? statSync(p).mtimeMs : 0,
    );
  }
  return newest;
}

const current = () =>
  (existsSync(stamp) ? statSync(stamp).mtimeMs : 0) >=
  Math.max(...['lib', 'bin', 'bench'].map((d) => newestSource(path.join(root, d))));
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function takeLock() {
  mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      } catch {}
      pause(100);
    }
  }
}

if (!current()) {
  takeLock();
  try {
    // Another process may have built while this one waited.
    if (!current()) {
      process.stderr.write('building dist/ …\n');
      execFileSync(
        process.execPath,
        [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')],
        { stdio: 'inherit' },
      );
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
