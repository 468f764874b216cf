#!/usr/bin/env node
/**
 * Every Markdown document a source comment cites must exist in the repository (a citation of a
 * document a reader cannot open is a dead end). Checks lib/, test/ (fixtures aside), bench/, bin/,
 * ui/ and config/; a bare file name counts when a tracked document of that name exists.
 * Part of `npm run lint`.
 */
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['lib', 'test', 'bench', 'bin', 'ui', 'config'];
const SKIP = new Set(['node_modules', 'fixtures', 'dist']);
const CODE = /\.(ts|js|sql|html|css)$/;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

const docNames = new Set(
  walk(root)
    .filter((p) => p.endsWith('.md'))
    .map((p) => path.basename(p)),
);
for (const d of ['docs', 'bench', 'test/fixtures'])
  if (existsSync(path.join(root, d))) for (const p of readdirSync(path.join(root, d))) docNames.add(p);

const problems = [];
for (const dir of SOURCES) {
  if (!existsSync(path.join(root, dir))) continue;
  for (const file of walk(path.join(root, dir)).filter((p) => CODE.test(p))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/(^|[^\w/.:-])((?:[\w.-]+\/)*[\w.-]+\.md)\b/g)) {
        const cited = m[2];
        if (/^\/|:\/\//.test(cited) || line.includes(`'/${cited}`) || line.includes(`"/${cited}`)) continue;
        const exists = cited.includes('/') ? existsSync(path.join(root, cited)) : docNames.has(cited);
        if (!exists)
          problems.push(`${path.relative(root, file)}:${i + 1}: cites ${cited}, which is not in the repository`);
      }
    });
  }
}
if (problems.length) {
  process.stderr.write(problems.join('\n') + '\n');
  process.exit(1);
}
