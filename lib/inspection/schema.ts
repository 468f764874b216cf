/** Request schemas of `/api/v1/id3-tag-inspect` (ajv, lib/http/validate.ts; listed in the OpenAPI document). */
export const STREAM_ID_PATTERN = '^[A-Za-z0-9._:~-]{1,256}$';

export const inspectInput = {
  type: 'object',
  additionalProperties: false,
  required: ['stream_id'],
  properties: {
    stream_id: { type: 'string', pattern: STREAM_ID_PATTERN },
    // A pod manifest to inspect directly (e.g. Google pod serving's …/ad_break_id/{id}.m3u8): on DAI_HOST or CONTENT_ORIGIN only.
    manifest_url: { type: 'string', minLength: 8, maxLength: 2048, pattern: '^https?://[^\\s]+$' },
  },
} as const;

export interface InspectInput {
  stream_id: string;
  manifest_url?: string;
}
