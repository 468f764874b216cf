/** The squeezeback player endpoints in the OpenAPI document: `/vast` and `/beacon`. */
import { answer, preflightOperation, problemResponses, type Operations } from '../../http/openapi.js';

const text = { type: 'string' };
const beacon = (method: string) => ({
  operationId: `${method}Beacon`,
  summary:
    'A tracking beacon the service signed: forwarded to the ad server asynchronously (400 for one it did not sign)',
  security: [],
  parameters: [
    {
      name: 'u',
      in: 'query',
      required: false,
      description: 'the original tracking URL (with the signature parameters the service added)',
      schema: text,
    },
  ],
  responses: { 200: answer('accepted', { 'text/plain': text }), ...problemResponses([400, 405, 429]) },
});

const vast = (method: 'get' | 'head') => ({
  operationId: `${method}Vast`,
  summary:
    method === 'get'
      ? "The VAST of the squeeze break a stream's viewer may be playing (until the break's end reaches the viewers furthest behind the live edge), tracking through /beacon (an empty VAST 4.0 document otherwise)"
      : 'The headers GET /vast would answer',
  security: [],
  parameters: [
    { name: 'stream_id', in: 'query', required: true, schema: text },
    {
      name: 'break_id',
      in: 'query',
      required: false,
      description: 'the break the player plays: the value of the com.<brand>.vtg ID3 tag',
      schema: text,
    },
  ],
  responses: { 200: answer('VAST', { 'application/xml': text }), ...problemResponses([400, 405, 429]) },
});

export const playerOperations: Operations = {
  '/vast': { get: vast('get'), head: vast('head'), options: preflightOperation('optionsVast', 'GET, HEAD, OPTIONS') },
  '/beacon': {
    get: beacon('get'),
    head: beacon('head'),
    post: { ...beacon('post'), requestBody: { required: false, content: { '*/*': { schema: text } } } },
    options: preflightOperation('optionsBeacon', 'GET, HEAD, POST, OPTIONS'),
  },
};
