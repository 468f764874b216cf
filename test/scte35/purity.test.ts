import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../lib/paths.js';

t.test('lib/scte35 is pure: it imports only its own modules', async (t) => {
  const dir = path.join(projectRoot, 'lib', 'scte35');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  t.ok(files.length >= 10, `${files.length} modules`);
  for (const f of files) {
    const imports = [
      ...readFileSync(path.join(dir, f), 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '([^']+)'/gms),
    ].map((m) => m[1]!);
    t.same(
      imports.filter((i) => !i.startsWith('./')),
      [],
      `${f} imports nothing outside lib/scte35`,
    );
  }
});
