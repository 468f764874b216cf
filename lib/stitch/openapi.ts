/**
 * The stitched-manifest cache URLs, the filler, the conditioned creatives' files and the CORS
 * preflights in the OpenAPI document (the stitch POST is a router route).
 */
import { answer, notModified, preflightOperation, problemResponses, type Operations } from '../http/openapi.js';

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
    200: answer(
      'the manifest',
      {
        'application/vnd.apple.mpegurl': text,
        'application/dash+xml': text,
        'application/json': { type: 'object' },
      },
      { ETag: { schema: text }, 'Last-Modified': { schema: text } },
    ),
    304: notModified(),
    ...problemResponses([404, 405, 503]),
  },
});
const creativeOp = (method: string) => ({
  operationId: `${method}StitchCreative`,
  summary:
    "A conditioned ad creative's file (manifest or segment) that a stitched manifest names; immutable (issue 26)",
  security: [],
  parameters: [
    {
      name: 'key',
      in: 'path',
      required: true,
      description: 'the rendition key (GET /api/v1/ad-creatives)',
      schema: text,
    },
    { name: 'file', in: 'path', required: true, description: 'a manifest or segment of the rendition', schema: text },
  ],
  responses: {
    200: answer('the file', {
      'application/vnd.apple.mpegurl': text,
      'application/dash+xml': text,
      'video/mp2t': text,
      'video/iso.segment': text,
      'video/mp4': text,
      'audio/aac': text,
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
    [`/${stitchPath}/cache/{id}/{file}`]: {
      get: cacheOp('get'),
      head: cacheOp('head'),
      options: preflightOperation('optionsStitchCache', 'GET, HEAD, OPTIONS'),
    },
    [`/${stitchPath}/filler.vtt`]: {
      get: fillerOp('get'),
      head: fillerOp('head'),
      options: preflightOperation('optionsStitchFiller', 'GET, HEAD, OPTIONS'),
    },
    [`/${stitchPath}/creatives/{key}/{file}`]: {
      get: creativeOp('get'),
      head: creativeOp('head'),
      options: preflightOperation('optionsStitchCreative', 'GET, HEAD, OPTIONS'),
    },
    // The stitch POST itself is a router route; its preflight is answered by the router's CORS mount.
    [`/${stitchPath}/{protocol}/stream/{stream_id}/asset/{asset_id}`]: {
      options: preflightOperation('optionsStitch', 'POST, OPTIONS'),
    },
  };
}
