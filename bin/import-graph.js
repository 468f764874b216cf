#!/usr/bin/env node
/**
 * docs/architecture.md's two generated parts: the layer table (from config/layers.js, the table
 * ESLint enforces) and the drawing of lib/'s actual imports, folder to folder, as a Mermaid graph.
 * `npm run graph` writes both (`node bin/import-graph.js` alone prints them); `npm run graph -- --check` fails when the document is out of date,
 * when a folder of lib/ is missing from the table, or when an import breaks it.
 * Type-only imports count: they are dependencies of the design all the same.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYERS, layerOf, mayImport } from '../config/layers.js';

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

const folderOf = (file) => layerOf(path.relative(lib, file));

export function importEdges() {
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
  return [...edges].sort();
}

export function layerTable() {
  const name = (f) => (statSafe(path.join(lib, f)) ? `\`${f}/\`` : `\`${f}.ts\``);
  const rows = Object.entries(LAYERS).map(
    ([f, { role, mayImport: may }]) =>
      `| ${name(f)} | ${role} | ${may.length ? may.map((m) => (m === '*' ? 'anything' : `\`${m}\``)).join(', ') : 'nothing of lib/'} |`,
  );
  return ['| folder | role | may import |', '|---|---|---|', ...rows].join('\n');
}

function statSafe(p) {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

const edges = importEdges();
const graph = ['```mermaid', 'graph LR', ...edges.map((e) => `  ${e}`), '```'].join('\n');
const table = layerTable();

if (process.argv.includes('--check')) {
  const problems = [];
  const folders = readdirSync(lib).map((n) => n.replace(/\.ts$/, ''));
  for (const f of folders) if (!LAYERS[f]) problems.push(`lib/${f} is not in config/layers.js`);
  for (const e of edges) {
    const [from, to] = e.split(' --> ');
    if (!mayImport(from, to)) problems.push(`lib/${from} imports lib/${to}, which config/layers.js does not allow`);
  }
  const doc = readFileSync(DOC, 'utf8');
  if (!doc.includes(table)) problems.push('docs/architecture.md: the layer table is out of date; run `npm run graph`');
  if (!doc.includes(graph)) problems.push('docs/architecture.md: the import graph is out of date; run `npm run graph`');
  if (problems.length) {
    process.stderr.write(problems.join('\n') + '\n');
    process.exit(1);
  }
} else if (process.argv.includes('--write')) {
  let doc = readFileSync(DOC, 'utf8');
  doc = doc.replace(/\| folder \| role \| may import \|\n\|---\|---\|---\|\n(?:\|.*\|\n)*/, `${table}\n`);
  doc = doc.replace(/```mermaid\n[\s\S]*?```/, graph);
  process.stdout.write(
    doc === readFileSync(DOC, 'utf8') ? 'docs/architecture.md is current\n' : 'docs/architecture.md rewritten\n',
  );
  await import('node:fs').then((fs) => fs.writeFileSync(DOC, doc));
} else {
  process.stdout.write(`${table}\n\n${graph}\n`);
}
