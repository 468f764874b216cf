/** Squeeze-break rows as the repository returns them, for tests that feed a BreakBoard from memory. */
import { defaultShape } from '../../lib/sim/live-playlist.js';
import type { BreakRow } from '../../lib/squeeze/breaks/repo.js';

/** A break row as the repository returns it (only the fields the board reads matter). */
export function breakRow(id: string, eventId: number, startMs: number, durationSec: number): BreakRow {
  const now = new Date();
  return {
    id,
    event_id: eventId,
    target: 'event',
    status: 'active',
    start_time: new Date(startMs),
    end_time: new Date(startMs + durationSec * 1000),
    break_duration: durationSec,
    segment_sec: defaultShape.segmentSec,
    layout: 'l-shape',
    abid: null,
    geo_lang_loc: null,
    decision_source: null,
    reason: null,
    assignments: [
      {
        key: 'a',
        source: 'curated',
        ads: [{ adId: 'ad1', uri: 'https://ads.example/a.mp4', durationSec, tracking: {} }],
      },
    ],
    stream_assignments: {},
    default_assignment: 'a',
    stream_tracking: {},
    settings: {} as BreakRow['settings'],
    trigger: { source: 'api' },
    lease_owner: null,
    lease_until: null,
    created_at: now,
    updated_at: now,
  };
}
