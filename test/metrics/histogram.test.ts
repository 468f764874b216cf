import t from 'tap';
import { Registry } from '../../lib/metrics/index.js';

t.test('histogram buckets are cumulative however observe() counts them', async (t) => {
  const r = new Registry();
  const h = r.histogram('op_seconds', 'an operation', [0.01, 0.1, 1]).with({ op: 'x' });
  for (const v of [0.005, 0.01, 0.05, 0.5, 0.5, 3]) h.observe(v);
  const text = r.render();
  t.match(text, /op_seconds_bucket\{op="x",le="0\.01"\} 2\n/);
  t.match(text, /op_seconds_bucket\{op="x",le="0\.1"\} 3\n/);
  t.match(text, /op_seconds_bucket\{op="x",le="1"\} 5\n/);
  t.match(text, /op_seconds_bucket\{op="x",le="\+Inf"\} 6\n/);
  t.match(text, /op_seconds_count\{op="x"\} 6\n/);
  t.match(text, /op_seconds_sum\{op="x"\} 4\.06\d*\n/);
});
