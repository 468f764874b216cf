/** The DAI hot path in the OpenAPI document (lib/http/openapi.ts): the manifest proxy and the preroll ad tag. */
import { answer, notModified, preflightOperation, problemResponses, type Operations } from '../http/openapi.js';

const HLS = 'application/vnd.apple.mpegurl';
const DASH = 'application/dash+xml';
const text = { type: 'string' };
/** The DAI host's own 4xx passes with its status (upstream-client-error), so any of these can come back. */
const UPSTREAM_4XX = [400, 401, 403, 404, 410, 429];

const manifest = (method: 'get' | 'head') => ({
  operationId: `${method}DaiManifest`,
  summary: 'The DAI manifest proxy (CDN prefix): master and variant playlists or the MPD, rewritten (spec rules 1–8)',
  security: [],
  parameters: [
    {
      name: 'path',
      in: 'path',
      required: true,
      description:
        'the DAI URL path after the CDN host (slashes kept, not encoded): …/stream/{stream_id}/…, …/event/{asset_key}/…',
      schema: text,
    },
  ],
  responses: {
    200: answer(
      'the manifest',
      { [HLS]: text, [DASH]: text },
      { Age: { schema: text }, 'Cache-Control': { schema: text }, ETag: { schema: text } },
    ),
    304: notModified(),
    ...problemResponses([...UPSTREAM_4XX, 405, 500, 502, 504]),
  },
});

export const daiOperations: Operations = {
  '/dai/manifest/{path}': {
    get: manifest('get'),
    head: manifest('head'),
    options: preflightOperation('optionsDaiManifest', 'GET, HEAD, OPTIONS'),
  },
  '/dai/adproxy': {
    get: {
      operationId: 'getDaiAdproxy',
      summary: 'The preroll ad tag: captures the targeting, registers the stream, answers an empty VAST 4.0 document',
      security: [],
      parameters: [
        { name: 'stream_id', in: 'query', required: false, schema: text },
        { name: 'asset_key', in: 'query', required: false, schema: text },
        { name: 'caid', in: 'query', required: false, schema: text },
        { name: 'X-Device-Ip', in: 'header', required: false, description: "the viewer's IP", schema: text },
      ],
      responses: { 200: answer('an empty VAST 4.0 document', { 'application/xml': text }), ...problemResponses([405]) },
    },
  },
};
