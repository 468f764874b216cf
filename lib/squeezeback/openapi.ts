/** The squeezeback player flow in the OpenAPI document (lib/squeezeback/path.ts has the path rules). */
import { answer, notModified, preflightOperation, problemResponses, type Operations } from '../http/openapi.js';

const HLS = 'application/vnd.apple.mpegurl';
const text = { type: 'string' };
const errors = [400, 401, 403, 404, 405, 410, 429, 500, 502, 503, 504];
/** A variant revalidates (304); a master mints a new stream each time, so it never matches. */
const op = (method: string, id: string, summary: string, parameters: object[], revalidates = false) => ({
  operationId: `${method}${id}`,
  summary,
  security: [],
  parameters,
  responses: {
    200: answer('an HLS playlist', { [HLS]: text }, { ETag: { schema: text } }),
    ...(revalidates ? { 304: notModified() } : {}),
    ...problemResponses(errors),
  },
});
const assetId = { name: 'asset_id', in: 'path', required: true, schema: text };
const masterParams = [
  assetId,
  {
    name: 'token',
    in: 'query',
    required: false,
    description: "a player JWT signed with the brand's key (targeting)",
    schema: text,
  },
];
const variantParams = [
  assetId,
  {
    name: 'stream_id',
    in: 'path',
    required: true,
    description: 'the 9-digit stream id the master handed out',
    schema: text,
  },
  {
    name: 'path',
    in: 'path',
    required: true,
    description: "the variant's path relative to the master (slashes kept), or ~/ and its absolute path",
    schema: text,
  },
];
const MASTER =
  'The master playlist of a squeezeback event: registers a stream (9-digit id) and rewrites the variants through it';
const VARIANT = "A variant of the stream: content from the origin, the break's squeezeback segments in place";

export const squeezebackOperations: Operations = {
  '/squeezeback/{asset_id}/master.m3u8': {
    get: op('get', 'SqueezebackMaster', MASTER, masterParams),
    head: op('head', 'SqueezebackMaster', MASTER, masterParams),
    options: preflightOperation('optionsSqueezebackMaster', 'GET, HEAD, OPTIONS'),
  },
  '/squeezeback/{asset_id}/{stream_id}/{path}': {
    get: op('get', 'SqueezebackVariant', VARIANT, variantParams, true),
    head: op('head', 'SqueezebackVariant', VARIANT, variantParams, true),
    options: preflightOperation('optionsSqueezebackVariant', 'GET, HEAD, OPTIONS'),
  },
};
