/** `POST /api/v1/scte35/decode` (issue 15): a splice_info_section as JSON, for operators checking a cue. */
import type { Route } from '../../http/router.js';
import { registerProblems } from '../../http/problem.js';
import { bodyValidator } from '../../http/validate.js';
import { decodeSplice, Scte35Error } from '../../scte35/index.js';

/**
 * A section is at most 4,098 bytes (section_length is 12 bits, SCTE 35 §9.6): 8,194 characters
 * as `0x` hex, fewer as base64. Anything longer cannot be one.
 */
const MAX_PAYLOAD_CHARS = 8194;

/** An SCTE-35 payload that does not decode (code and byte offset in `errors`). */
const cueProblem = registerProblems({ 'bad-cue': { status: 400, title: 'Bad Request' } });

export const decodeInput = {
  type: 'object',
  additionalProperties: false,
  required: ['payload'],
  properties: {
    payload: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_PAYLOAD_CHARS,
      description: 'a splice_info_section: base64 (standard or URL-safe) or hex (0x… or bare)',
    },
    check_crc: {
      type: 'boolean',
      description: 'refuse a section whose CRC_32 does not check (default true); false decodes it and reports crc_ok',
    },
  },
} as const;

export function scte35Routes(): Route[] {
  const validate = bodyValidator<{ payload: string; check_crc?: boolean }>(decodeInput);
  return [
    {
      method: 'POST',
      pattern: '/api/v1/scte35/decode',
      body: 'json',
      summary:
        'Decode an SCTE-35 splice_info_section (base64 or 0x hex) to JSON; 400 bad-cue with the error code and byte offset when it does not decode',
      schema: { body: decodeInput },
      handler: async (_req, body) => {
        const input = validate(body);
        try {
          return { json: decodeSplice(input.payload, { checkCrc: input.check_crc !== false }) };
        } catch (err) {
          if (!(err instanceof Scte35Error)) throw err;
          throw cueProblem('bad-cue', err.message, [
            { path: '/payload', message: `${err.code} at byte ${err.offset}` },
          ]);
        }
      },
    },
  ];
}
