#!/usr/bin/env node
/**
 * Fills the transpile cache (./hooks.js) with every TypeScript file under lib/ and test/, in one
 * process, before a full `npm test` (bin/run-tests.js). On a clean clone the cache is empty, and
 * every test process then missed at least its own file: each loaded TypeScript (~0.5 s of CPU) and
 * transpiled what it imported, ~143 times over. Here TypeScript is loaded once. A warm cache makes
 * this a hash and an existence check per file. Nothing is done with TEST_TS_CACHE=0.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiled } from './hooks.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function tsUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : tsUnder(p);
    return /\.m?ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

if (process.env['TEST_TS_CACHE'] !== '0') {
  const began = Date.now();
  let made = 0;
  const files = ['lib', 'test'].flatMap((d) => tsUnder(path.join(root, d)));
  for (const file of files) if (!compiled(file).hit) made++;
  process.stderr.write(
    `[tests] transpile cache: ${made} of ${files.length} files transpiled in ${Date.now() - began} ms\n`,
  );
}
