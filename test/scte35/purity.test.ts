import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../lib/paths.js';

/** What lib/scte35 may lean on besides itself (config/layers.js): the HLS line reader, pure like it (lib/hls imports nothing: the layer rule). */
const PURE_NEIGHBOURS = ['../hls/lines.js'];

t.test('lib/scte35 is pure: it imports only its own modules and the pure HLS readers', async (t) => {
  const dir = path.join(projectRoot, 'lib', 'scte35');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  t.ok(files.length >= 10, `${files.length} modules`);
  for (const f of files) {
    const imports = [
      ...readFileSync(path.join(dir, f), 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '([^']+)'/gms),
    ].map((m) => m[1]!);
    t.same(
      imports.filter((i) => !i.startsWith('./') && !PURE_NEIGHBOURS.includes(i)),
      [],
      `${f} imports nothing outside lib/scte35 but the pure HLS readers`,
    );
  }
});
