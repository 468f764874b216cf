import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root, whether this file runs from lib/ (tests) or dist/lib/ (npm start). */
function findRoot(): string {
  const up2 = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  return path.basename(up2) === 'dist' ? path.dirname(up2) : up2;
}

export const projectRoot = findRoot();
