/** Operator read APIs over the stream model: who is watching an event, and one stream. */
import { listOf } from '../http/envelope.js';
import type { Route } from '../http/router.js';
import { notFound } from '../http/problem.js';
import { queryValidator } from '../http/validate.js';
import type { Stream, StreamRegistry } from './registry.js';

const answered = (s: Stream) => ({ id: s.stream_id, ...s });

const nullableText = { type: ['string', 'null'] };
/**
 * A stream as answered (lib/streams/registry.ts `Stream`): the spec's StreamID as `id` like every
 * resource's key (issue 25 item 7), and as `stream_id`, the name the rest of the API uses for it.
 */
const streamAnswer = {
  type: 'object',
  required: ['id', 'stream_id', 'event_id', 'flow', 'fw_params', 'last_seen', 'created'],
  properties: {
    id: { type: 'string', description: 'the same value as stream_id' },
    stream_id: { type: 'string' },
    event_id: { type: ['integer', 'null'] },
    asset_key: nullableText,
    flow: { type: 'string' },
    fw_params: { type: 'object', additionalProperties: { type: 'string' } },
    vprn: nullableText,
    pvrn: nullableText,
    client_ip: nullableText,
    master_path: nullableText,
    brand: nullableText,
    last_seen: { type: 'string' },
    created: { type: 'string' },
  },
};

const listQuery = {
  type: 'object',
  required: ['event_id'],
  properties: {
    event_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
    page: { type: 'integer', minimum: 0, maximum: 1000000, default: 0 },
    page_size: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;

export function streamRoutes(streams: StreamRegistry): Route[] {
  const validateList = queryValidator<{ event_id: number; page: number; page_size: number }>(listQuery);
  return [
    {
      method: 'GET',
      pattern: '/api/v1/streams',
      summary: "An event's live streams, oldest first: {results, total_results}",
      schema: { query: listQuery, response: listOf(streamAnswer) },
      handler: async (req) => {
        const q = validateList(req.query);
        await streams.flush(); // include touches of the last second
        const ids = await streams.streamIdsOf(q.event_id);
        const page = ids.slice(q.page * q.page_size, (q.page + 1) * q.page_size);
        return { json: { results: (await streams.load(page)).map(answered), total_results: ids.length } };
      },
    },
    {
      method: 'GET',
      pattern: '/api/v1/streams/:stream_id',
      summary: 'One stream: event, targeting (fw_params), vprn, pvrn, client IP, last seen',
      schema: { response: streamAnswer },
      handler: async (req) => {
        await streams.flush();
        const s = await streams.get(req.params['stream_id']!);
        if (!s) throw notFound(`stream ${req.params['stream_id']} is not known (or has expired)`);
        return { json: answered(s) };
      },
    },
  ];
}
