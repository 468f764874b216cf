/**
 * Fetching a job's inputs to files: through an Agent of the outbound policy (lib/outbound: http(s)
 * only, checked addresses unless private ones are allowed, connect/header/body timeouts), with a size
 * cap per input and an overall deadline; redirects are not followed. The reference transcoder
 * allows private addresses by default (its inputs usually sit next to it; TRANSCODER_ALLOW_PRIVATE).
 */
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request, type Agent } from 'undici';
import type { OutboundPolicy } from '../outbound/index.js';

export class InputError extends Error {
  override name = 'InputError';
  constructor(
    /** `unusable`: the input itself is wrong (4xx, too large, refused) — retrying will not help. */
    readonly code: 'unusable' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

export class InputFetcher {
  private readonly agent: Agent;

  constructor(
    private readonly policy: OutboundPolicy,
    private readonly opts: { timeoutMs: number; maxBytes: number },
  ) {
    this.agent = policy.agent({ timeoutMs: opts.timeoutMs, maxResponseSize: opts.maxBytes, connections: 16 });
  }

  /** Downloads `url` (named `what` in errors) to `file`, at most `maxBytes` (≤ the fetcher's cap). */
  async toFile(what: string, url: string, file: string, maxBytes = this.opts.maxBytes): Promise<void> {
    try {
      this.policy.assertUrl(url);
    } catch (err) {
      throw new InputError('unusable', `${what}: ${(err as Error).message}`);
    }
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    let res;
    try {
      res = await request(url, { method: 'GET', headers: { accept: '*/*' }, dispatcher: this.agent, signal });
    } catch (err) {
      throw classify(what, err);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump().catch(() => undefined);
      throw new InputError(
        res.statusCode >= 500 ? 'unavailable' : 'unusable',
        `${what}: ${new URL(url).host} answered ${res.statusCode}`,
      );
    }
    if (Number(res.headers['content-length'] ?? 0) > maxBytes) {
      res.body.destroy();
      throw new InputError('unusable', `${what} is larger than ${maxBytes} bytes`);
    }
    let seen = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        done(seen > maxBytes ? new InputError('unusable', `${what} is larger than ${maxBytes} bytes`) : null, chunk);
      },
    });
    try {
      await pipeline(res.body, cap, createWriteStream(file));
    } catch (err) {
      throw classify(what, err);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function classify(what: string, err: unknown): InputError {
  if (err instanceof InputError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new InputError('unusable', `${what} is too large`);
  if (code === 'OUTBOUND_REFUSED') return new InputError('unusable', `${what}: ${e.message ?? 'refused'}`);
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code ?? ''))
    return new InputError('unavailable', `${what}: timed out`);
  return new InputError('unavailable', `${what}: ${e.message ?? 'request failed'}`);
}
