#!/usr/bin/env node
/**
 * The drawing of lib/'s imports, folder to folder, as a Mermaid graph (docs/architecture.md).
 * `npm run graph` prints it; `npm run graph -- --check` fails when the document is out of date.
 * Type-only imports count: they are dependencies of the design all the same.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = path.join(root, 'lib');
const DOC = path.join(root, 'docs', 'architecture.md');

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return filesUnder(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

/** lib/a/b.ts → "a"; lib/app.ts → "app" (top-level files are nodes of their own). */
const folderOf = (file) => path.relative(lib, file).split(path.sep)[0].replace(/\.ts$/, '');

export function importGraph() {
  const edges = new Set();
  for (const file of filesUnder(lib)) {
    const from = folderOf(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.resolve(path.dirname(file), m[1]);
      if (!target.startsWith(lib + path.sep)) continue;
      const to = folderOf(target.replace(/\.js$/, '.ts'));
      if (to !== from) edges.add(`${from} --> ${to}`);
    }
  }
  return ['```mermaid', 'graph LR', ...[...edges].sort().map((e) => `  ${e}`), '```'].join('\n');
}

const graph = importGraph();
if (process.argv.includes('--check')) {
  const doc = readFileSync(DOC, 'utf8');
  if (!doc.includes(graph)) {
    process.stderr.write('docs/architecture.md: the import graph is out of date; run `npm run graph` and paste it\n');
    process.exit(1);
  }
} else {
  process.stdout.write(`${graph}\n`);
}
