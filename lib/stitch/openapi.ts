/** The stitched-manifest cache URLs in the OpenAPI document (the stitch POST is a router route). */
import { answer, problemResponses, type Operations } from '../http/openapi.js';

const text = { type: 'string' };
const cacheOp = (method: string) => ({
  operationId: `${method}StitchCache`,
  summary: 'A stitched manifest (the cache_url of the stitch answer), a rendition of it, or an interstitial asset list',
  security: [],
  parameters: [
    { name: 'id', in: 'path', required: true, schema: text },
    {
      name: 'file',
      in: 'path',
      required: true,
      description: '{name}.m3u8, {name}.mpd or assets/{n}.json (slash kept)',
      schema: text,
    },
  ],
  responses: {
    200: answer('the manifest', {
      'application/vnd.apple.mpegurl': text,
      'application/dash+xml': text,
      'application/json': { type: 'object' },
    }),
    ...problemResponses([404, 405, 503]),
  },
});
const fillerOp = (method: string) => ({
  operationId: `${method}StitchFiller`,
  summary: 'The empty WebVTT segment that fills subtitle playlists during ads',
  security: [],
  responses: { 200: answer('WebVTT', { 'text/vtt': text }), ...problemResponses([405]) },
});

export function stitchOperations(stitchPath: string): Operations {
  return {
    [`/${stitchPath}/cache/{id}/{file}`]: { get: cacheOp('get'), head: cacheOp('head') },
    [`/${stitchPath}/filler.vtt`]: { get: fillerOp('get'), head: fillerOp('head') },
  };
}
