/** `/api/v1/id3-tag-inspect` (spec "ID3 tag inspection"). */
import type { Route } from '../http/router.js';
import { validationFailed } from '../http/problem.js';
import { bodyValidator } from '../http/validate.js';
import { inspectInput, STREAM_ID_PATTERN, type InspectInput } from './schema.js';
import type { InspectionService } from './service.js';

const PATH = '/api/v1/id3-tag-inspect';
const STREAM_ID = new RegExp(STREAM_ID_PATTERN);

/** The ID3 inspection result (spec "ID3 inspection result"; `error` and `updated` are ours). */
const inspectionAnswer = {
  type: 'object',
  required: ['stream_id', 'status', 'ad_pods', 'created'],
  properties: {
    stream_id: { type: 'string' },
    status: { enum: ['pending', 'complete', 'failed'] },
    ad_pods: { type: ['array', 'null'], items: { type: 'object', required: ['break', 'start_time_sec'] } },
    created: { type: 'string' },
    updated: { type: 'string' },
    error: { type: 'string' },
  },
};

export function inspectionRoutes(service: InspectionService): Route[] {
  const validate = bodyValidator<InspectInput>(inspectInput);
  return [
    {
      method: 'POST',
      pattern: PATH,
      body: 'json',
      summary:
        "Inspect the ID3 tags of a stream's ad pods: starts a job (pending, ad_pods null), later answers it (complete with ad_pods, or failed with error)",
      errors: [404, 422],
      schema: { body: inspectInput, response: inspectionAnswer },
      handler: async (_r, body) => ({ json: await service.request(validate(body)) }),
    },
    {
      method: 'GET',
      pattern: `${PATH}/:stream_id`,
      summary: "A stream's ID3 inspection, without starting one (404 when there is none)",
      schema: { response: inspectionAnswer },
      handler: async (req) => {
        const id = req.params['stream_id']!;
        if (!STREAM_ID.test(id))
          throw validationFailed([{ path: '/stream_id', message: `must match ${STREAM_ID_PATTERN}` }]);
        return { json: await service.get(id) };
      },
    },
  ];
}
