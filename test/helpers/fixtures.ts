import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/paths.js';

export const fixturesDir = path.join(projectRoot, 'test', 'fixtures');

/** Every fixture file under a folder of test/fixtures with one of the extensions, relative paths sorted. */
export function fixtureFiles(folder: string, exts: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (exts.some((e) => name.endsWith(e))) out.push(path.relative(fixturesDir, p));
    }
  };
  walk(path.join(fixturesDir, folder));
  return out.sort();
}

export function fixture(rel: string): string {
  return readFileSync(path.join(fixturesDir, rel), 'utf8');
}
