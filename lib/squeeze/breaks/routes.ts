/** `/api/v1/squeeze-ad-break` (spec "Squeeze configuration and ad-break operations"; docs/design.md §3). */
import type { Route } from '../../http/router.js';
import { bodyValidator, queryValidator } from '../../http/validate.js';
import {
  breakInput,
  breakListQuery,
  breakListView,
  breakView,
  daiBreakInput,
  extendInput,
  type BreakInput,
} from './schema.js';
import type { BreakService } from './service.js';

const PATH = '/api/v1/squeeze-ad-break';

/** A break as answered (service.ts `view`), also by the POST/PUT that start one: `id`, and `break_id` for existing clients. */
const breakAnswer = {
  type: 'object',
  required: ['id', 'break_id', 'status', 'event_id', 'start_time', 'end_time', 'break_duration'],
};

export function breakRoutes(breaks: BreakService): Route[] {
  const validateEvent = bodyValidator<BreakInput>(breakInput);
  const validateDai = bodyValidator<BreakInput>(daiBreakInput);
  const validateExtend = bodyValidator<{ additional_sec: number }>(extendInput);
  const validateList = queryValidator<{ event_id: number; page: number; page_size: number }>(breakListQuery);
  return [
    {
      method: 'POST',
      pattern: PATH,
      body: 'json',
      summary: 'Start a squeeze break on an event (curated ads, else the ad server); 409 while one is in progress',
      errors: [404, 409, 422, 502, 504],
      schema: { body: breakInput, response: breakAnswer },
      handler: async (_r, body) => ({ json: await breaks.create(validateEvent(body), 'event') }),
    },
    {
      method: 'PUT',
      pattern: PATH,
      body: 'json',
      summary:
        "Start a squeeze break on an event's DAI streams (optionally stream_ids), deciding ads per stream from its targeting; 422 when no live stream matches",
      errors: [404, 409, 422, 502, 504],
      schema: { body: daiBreakInput, response: breakAnswer },
      handler: async (_r, body) => ({ json: await breaks.create(validateDai(body), 'streams') }),
    },
    {
      method: 'GET',
      pattern: PATH,
      summary: "An event's breaks, newest first, each with its segments: {results, total_results}",
      schema: { query: breakListQuery, response: breakListView },
      handler: async (req) => {
        const q = validateList(req.query);
        return { json: await breaks.list(q.event_id, q.page, q.page_size) };
      },
    },
    {
      method: 'GET',
      pattern: `${PATH}/:break_id`,
      summary:
        'Show a break with its planned segments, the streams it reached (matched_streams, unmatched_streams) and warnings',
      schema: { response: breakView },
      handler: async (req) => ({ json: await breaks.get(req.params['break_id']!) }),
    },
    {
      method: 'POST',
      pattern: `${PATH}/:break_id/extend`,
      body: 'json',
      summary: 'Extend a break in progress by additional_sec',
      errors: [409],
      schema: { body: extendInput, response: breakAnswer },
      handler: async (req, body) => ({
        json: await breaks.extend(req.params['break_id']!, validateExtend(body).additional_sec),
      }),
    },
    {
      method: 'DELETE',
      pattern: `${PATH}/:break_id`,
      summary: 'Terminate a break: its end moves to the next segment boundary and cue-in follows',
      schema: { response: breakAnswer },
      errors: [409],
      handler: async (req) => ({ json: await breaks.terminate(req.params['break_id']!) }),
    },
  ];
}
