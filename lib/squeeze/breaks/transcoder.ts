/**
 * Client of the transcoder's squeeze job (`POST {TRANSCODER_URL}/v3/squeeze`, docs/design.md §6): bounded
 * concurrency, retries with backoff on 5xx and network errors, and one call per output key however
 * many callers ask for it at once (the same inputs are composed once).
 */
import { OutboundError, type OutboundClient } from '../../outbound/index.js';
import type { SqueezeSettings } from '../config/types.js';

/** The job; the transcoder (and its simulator) validate it with lib/transcoder/job.ts. */
export interface SqueezeJob {
  content_uri: string;
  ad_uri: string;
  background_uri?: string;
  layout: 'dualbox' | 'lbar';
  sqz_ratios: SqueezeSettings['sqz_ratios'];
  positions: SqueezeSettings['positions'];
  animation: { phase: 'in' | 'hold' | 'out'; in_sec: number; out_sec: number };
  frames: SqueezeSettings['frames'];
  ad_offset_sec: number;
  duration_sec: number;
  id3: { owner: string; value: string };
  output_key: string;
  /** Whose audio the squeezed segment carries: the ad's (default) or the content's. */
  audio?: 'ad' | 'content';
}

export interface TranscoderOptions {
  concurrency?: number;
  attempts?: number;
  timeoutMs?: number;
  backoffMs?: number;
}

export class TranscoderClient {
  private readonly inFlight = new Map<string, Promise<string>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly baseUrl: string,
    private readonly http: OutboundClient,
    private readonly opts: TranscoderOptions = {},
  ) {}

  get configured(): boolean {
    return this.baseUrl !== '';
  }

  /** The output URI of a composed segment. */
  compose(job: SqueezeJob): Promise<string> {
    let p = this.inFlight.get(job.output_key);
    if (!p) {
      p = this.withSlot(() => this.attempt(job)).finally(() => this.inFlight.delete(job.output_key));
      this.inFlight.set(job.output_key, p);
    }
    return p;
  }

  private async attempt(job: SqueezeJob): Promise<string> {
    if (!this.configured) throw new OutboundError('refused', 'no transcoder configured (TRANSCODER_URL)');
    const attempts = this.opts.attempts ?? 3;
    for (let i = 1; ; i++) {
      try {
        const res = await this.http.postJson<{ output_uri?: unknown }>(
          `${this.baseUrl}/v3/squeeze`,
          job,
          AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        );
        if (
          typeof res.output_uri !== 'string' ||
          !/^https?:\/\/\S+$/.test(res.output_uri) ||
          /[\r\n]/.test(res.output_uri)
        )
          throw new OutboundError('failed', 'the transcoder answered without a usable output_uri');
        return res.output_uri;
      } catch (err) {
        const e = err as OutboundError;
        const retryable = !(e.code === 'status' && e.status !== undefined && e.status < 500) && e.code !== 'refused';
        if (!retryable || i >= attempts) throw err;
        await new Promise((r) => setTimeout(r, (this.opts.backoffMs ?? 200) * 2 ** (i - 1)));
      }
    }
  }

  private async withSlot<T>(fn: () => Promise<T>): Promise<T> {
    while (this.running >= (this.opts.concurrency ?? 8)) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}
