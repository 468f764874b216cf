/**
 * The squeeze job of the transcoder contract (docs/design.md §6, `POST /v3/squeeze`): its validation,
 * shared by the reference transcoder (./server.ts) and the simulator (lib/sim/transcoder.ts) so both
 * refuse the same jobs, and the composition the reference transcoder draws from it (defaults filled).
 * The layout fields are checked with the squeeze configuration's own schema: what the service may
 * configure is exactly what the transcoder accepts (colours end up in an ffmpeg filter graph, so
 * the schema's colour pattern is also what keeps the graph safe).
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { FieldError } from '../errors/index.js';
import { brandDefaults, brandFields } from '../squeeze/config/schema.js';
import type { SqueezeJob } from '../squeeze/breaks/transcoder.js';
import type { Box, Frame } from '../squeeze/config/types.js';

export type { SqueezeJob };

function isHttpUrl(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

const isNonNegative = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

const layoutFields = new Ajv({ allErrors: true, strict: false }).compile({
  type: 'object',
  properties: { sqz_ratios: brandFields.sqz_ratios, positions: brandFields.positions, frames: brandFields.frames },
});

/** `/positions/ad_box/x` → `positions.ad_box.x`, the simulator's path style. */
const dotted = (e: ErrorObject) => {
  const base = e.instancePath.slice(1).replaceAll('/', '.');
  const extra = e.keyword === 'additionalProperties' ? String(e.params['additionalProperty']) : '';
  return [base, extra].filter(Boolean).join('.');
};

/** An output key names a file and a URL path: no empty, `.` or `..` segment. */
const badKey = (k: unknown) =>
  typeof k !== 'string' ||
  k.length === 0 ||
  k.length > 1024 ||
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f\\]/.test(k) ||
  k.split('/').some((s) => s === '' || s === '.' || s === '..');

/** Field errors of a squeeze job; empty when it is acceptable. */
export function validateSqueezeJob(body: unknown): FieldError[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return [{ path: '', message: 'must be a JSON object' }];
  const j = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const f of ['content_uri', 'ad_uri'] as const) {
    if (j[f] === undefined) errors.push({ path: f, message: 'is required' });
    else if (!isHttpUrl(j[f])) errors.push({ path: f, message: 'must be an http(s) URL' });
  }
  if (j['background_uri'] !== undefined && j['background_uri'] !== null && !isHttpUrl(j['background_uri']))
    errors.push({ path: 'background_uri', message: 'must be an http(s) URL' });
  if (j['layout'] === undefined) errors.push({ path: 'layout', message: 'is required' });
  else if (j['layout'] !== 'dualbox' && j['layout'] !== 'lbar')
    errors.push({ path: 'layout', message: 'must be dualbox or lbar' });
  const key = j['output_key'];
  if (key === undefined) errors.push({ path: 'output_key', message: 'is required' });
  else if (badKey(key))
    errors.push({
      path: 'output_key',
      message:
        'must be a non-empty string of at most 1024 characters, without control characters, backslashes or empty, "." or ".." segments',
    });
  for (const f of ['ad_offset_sec', 'duration_sec'] as const)
    if (j[f] !== undefined && !isNonNegative(j[f])) errors.push({ path: f, message: 'must be a non-negative number' });
  if (j['audio'] !== undefined && j['audio'] !== 'ad' && j['audio'] !== 'content')
    errors.push({ path: 'audio', message: 'must be ad or content' });
  const a = j['animation'];
  if (a !== undefined) {
    if (typeof a !== 'object' || a === null) errors.push({ path: 'animation', message: 'must be an object' });
    else {
      const anim = a as Record<string, unknown>;
      if (anim['phase'] !== 'in' && anim['phase'] !== 'hold' && anim['phase'] !== 'out')
        errors.push({ path: 'animation.phase', message: 'must be in, hold or out' });
      for (const f of ['in_sec', 'out_sec'])
        if (anim[f] !== undefined && !isNonNegative(anim[f]))
          errors.push({ path: `animation.${f}`, message: 'must be a non-negative number' });
    }
  }
  const id3 = j['id3'];
  if (id3 !== undefined) {
    const o = id3 as Record<string, unknown> | null;
    if (
      typeof o !== 'object' ||
      o === null ||
      typeof o['owner'] !== 'string' ||
      !o['owner'] ||
      o['owner'].length > 255 ||
      typeof o['value'] !== 'string' ||
      o['value'].length > 4096
    )
      errors.push({ path: 'id3', message: 'must be {owner, value} strings (owner 1–255, value ≤ 4096 characters)' });
  }
  if (!layoutFields(j))
    for (const e of layoutFields.errors ?? []) errors.push({ path: dotted(e), message: e.message ?? 'is invalid' });
  return errors;
}

/** What the reference transcoder draws: the job with every default filled. */
export interface Composition {
  contentUri: string;
  adUri: string;
  backgroundUri: string | undefined;
  layout: 'dualbox' | 'lbar';
  /** Fractions of the frame width. */
  ratios: { content: number; ad: number };
  /** Top-left corners as fractions of the frame. */
  positions: { content: Box; ad: Box };
  frames: { content: Frame; ad: Frame };
  phase: 'in' | 'hold' | 'out';
  inSec: number;
  outSec: number;
  adOffsetSec: number;
  /** The planned duration; the content segment's own duration wins when it can be read. */
  durationSec: number | undefined;
  audio: 'ad' | 'content';
  id3: { owner: string; value: string } | undefined;
  outputKey: string;
}

type Partial2<T> = { [K in keyof T]?: Partial<T[K]> };

/** The composition of a job validateSqueezeJob accepted: brand defaults (docs/decisions.md "Squeeze configuration") where it is silent. */
export function compositionOf(job: SqueezeJob): Composition {
  const d = brandDefaults;
  const r = (job.sqz_ratios ?? {}) as Partial<typeof d.sqz_ratios>;
  const p = (job.positions ?? {}) as Partial2<typeof d.positions>;
  const f = (job.frames ?? {}) as Partial2<typeof d.frames>;
  const anim: Partial<SqueezeJob['animation']> = job.animation ?? {};
  return {
    contentUri: job.content_uri,
    adUri: job.ad_uri,
    backgroundUri: job.background_uri ?? undefined,
    layout: job.layout,
    ratios: { content: r.content_box ?? d.sqz_ratios.content_box, ad: r.ad_box ?? d.sqz_ratios.ad_box },
    positions: {
      content: { ...d.positions.content_box, ...p.content_box },
      ad: { ...d.positions.ad_box, ...p.ad_box },
    },
    frames: { content: { ...d.frames.content_box, ...f.content_box }, ad: { ...d.frames.ad_box, ...f.ad_box } },
    phase: anim.phase ?? 'hold',
    inSec: anim.in_sec ?? d.animations.in_sec,
    outSec: anim.out_sec ?? d.animations.out_sec,
    adOffsetSec: job.ad_offset_sec ?? 0,
    durationSec: job.duration_sec,
    audio: job.audio ?? 'ad',
    id3: job.id3,
    outputKey: job.output_key,
  };
}
