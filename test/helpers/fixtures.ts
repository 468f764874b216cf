import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/paths.js';

export const fixturesDir = path.join(projectRoot, 'test', 'fixtures');

/** Every file under `dir` (recursively) with one of the extensions, absolute paths sorted. */
export function filesUnder(dir: string, exts: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (exts.some((e) => name.endsWith(e))) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Every fixture file under a folder of test/fixtures with one of the extensions, relative paths sorted. */
export function fixtureFiles(folder: string, exts: string[]): string[] {
  return filesUnder(path.join(fixturesDir, folder), exts).map((p) => path.relative(fixturesDir, p));
}

export function fixture(rel: string): string {
  return readFileSync(path.join(fixturesDir, rel), 'utf8');
}
