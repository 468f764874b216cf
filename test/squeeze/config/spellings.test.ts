/** The event config accepts WindowsSegs and LiveEdgeDelaySegments as the spec writes them (spec "Squeeze event config"). */
import t from 'tap';
import { bodyValidator } from '../../../lib/http/validate.js';
import { HttpError } from '../../../lib/http/problem.js';
import { eventConfigInput } from '../../../lib/squeeze/config/schema.js';
import { withSnakeCaseSpellings } from '../../../lib/squeeze/config/routes.js';
import type { EventConfigInput } from '../../../lib/squeeze/config/repo.js';

const validate = bodyValidator<EventConfigInput>(eventConfigInput);
const base = { asset_id: 'EV', source_uri: 'https://o.example/x.m3u8', brand_config_id: 'acme' };
const read = (body: object) => withSnakeCaseSpellings(validate({ ...base, ...body }));

t.test('spec spellings are folded into the snake_case fields', async (t) => {
  t.same(read({ WindowsSegs: 10, LiveEdgeDelaySegments: 2 }), {
    ...base,
    windows_segs: 10,
    live_edge_delay_segments: 2,
  });
  t.same(
    read({ windows_segs: 10, live_edge_delay_segments: 2 }),
    { ...base, windows_segs: 10, live_edge_delay_segments: 2 },
    'snake_case as before',
  );
  t.same(read({ WindowsSegs: 4, windows_segs: 4 }), { ...base, windows_segs: 4 }, 'both spellings, one value');
  t.same(read({ WindowsSegs: 0 }), { ...base, windows_segs: 0 }, '0 (no trimming) is kept');
});

t.test('both spellings with different values, or a bad value in either spelling: 400', async (t) => {
  for (const body of [
    { WindowsSegs: 4, windows_segs: 5 },
    { LiveEdgeDelaySegments: 1, live_edge_delay_segments: 2 },
    { WindowsSegs: -1 },
    { LiveEdgeDelaySegments: 101 },
    { WindowsSegs: '10' },
    { windowsSegs: 10 },
  ]) {
    let status = 0;
    try {
      read(body);
    } catch (err) {
      if (err instanceof HttpError) status = err.status;
    }
    t.equal(status, 400, JSON.stringify(body));
  }
});
