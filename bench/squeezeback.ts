/**
 * Target (h) of the benchmark (issue 14): the squeezeback player flow's variant path with 1,000
 * distinct streams of one event, measured in the service process of (b) so that its ratio to the
 * `/dai/manifest` distinct figure compares like with like. Before the load, 1,000 masters create the
 * streams (service-generated 9-digit ids); the load then round-robins over their variant paths, each
 * request with a unique query, so every request goes to the origin (the simulator), as (b)'s do.
 */
import type { LoadSpec } from './load.js';
import type { Target } from './procs.js';

/** The benchmark service's squeezeback event (bench/targets/service.ts): its source is the simulator's master. */
export const SQUEEZEBACK_ASSET = 'SQB';
const STREAMS = 1000;
const CONCURRENCY = 50;

/** Creates `count` streams through the master and answers their variant paths (the 720p rendition). */
export async function squeezebackStreams(port: number, count = STREAMS): Promise<string[]> {
  const paths: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const res = await fetch(`http://127.0.0.1:${port}/squeezeback/${SQUEEZEBACK_ASSET}/master.m3u8?viewer=${next}`);
      const body = await res.text();
      const variant = /^(\d{9}\/variant\/720p\.m3u8)$/m.exec(body)?.[1];
      if (res.status !== 200 || !variant)
        throw new Error(`squeezeback master answered ${res.status}: ${body.slice(0, 200)}`);
      paths.push(`/squeezeback/${SQUEEZEBACK_ASSET}/${variant}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (new Set(paths).size !== count) throw new Error('squeezeback masters handed out a stream id twice');
  return paths;
}

/**
 * The run for bench/run.ts's `measure`: its `paths` are filled by `before` (the list is shared with
 * the load spec, which is built before `before` runs).
 */
export function squeezebackRun(): Pick<LoadSpec, 'kind' | 'scenario' | 'paths'> & {
  label: string;
  before: (t: Target) => Promise<void>;
} {
  const paths: string[] = [];
  return {
    kind: 'variant',
    scenario: 'distinct',
    label: '(h) squeezeback variant',
    paths,
    before: async (t) => {
      if (!paths.length) paths.push(...(await squeezebackStreams(await t.port)));
    },
  };
}
