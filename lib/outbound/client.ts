/**
 * Outbound requests of the workers (source playlists, ad requests, wrappers, transcoder jobs),
 * through an Agent of the outbound policy (./policy.ts). Bodies are capped, always consumed, and
 * redirects are never followed (undici 7's request follows none unless an interceptor is added).
 */
import { request, type Agent, type Dispatcher } from 'undici';
import type { OutboundPolicy } from './policy.js';

export interface OutboundOptions {
  maxResponseSize?: number;
  timeoutMs?: number;
}

export class OutboundError extends Error {
  override name = 'OutboundError';
  constructor(
    readonly code: 'timeout' | 'status' | 'too-large' | 'refused' | 'failed',
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export class OutboundClient {
  private readonly agent: Agent;
  private readonly maxResponseSize: number;

  constructor(
    private readonly policy: OutboundPolicy,
    opts: OutboundOptions = {},
  ) {
    this.maxResponseSize = opts.maxResponseSize ?? 2 * 1024 * 1024;
    this.agent = policy.agent({
      timeoutMs: opts.timeoutMs ?? 10_000,
      maxResponseSize: this.maxResponseSize,
      connections: 32,
    });
  }

  /** GET a text body; non-2xx answers throw (the body is dumped). */
  async text(url: string, signal: AbortSignal, headers: Record<string, string> = {}): Promise<string> {
    const res = await this.send(url, { method: 'GET', headers: { accept: '*/*', ...headers }, signal });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      throw new OutboundError('status', `${new URL(url).host} answered ${res.statusCode}`, res.statusCode);
    }
    return res.body.text().catch((err: unknown) => Promise.reject(classify(err)));
  }

  /**
   * GET a binary body (media segments, ad creatives); non-2xx answers throw (the body is dumped).
   * A body whose Content-Length is over the cap is refused at its headers (the connection is
   * closed, nothing of it read); undici's own cap stops one without a length at the cap.
   */
  async bytes(url: string, signal: AbortSignal, headers: Record<string, string> = {}): Promise<Buffer> {
    const res = await this.send(url, { method: 'GET', headers: { accept: '*/*', ...headers }, signal });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      throw new OutboundError('status', `${new URL(url).host} answered ${res.statusCode}`, res.statusCode);
    }
    const declared = Number(res.headers['content-length']);
    if (declared > this.maxResponseSize) {
      res.body.destroy();
      throw Object.assign(new OutboundError('too-large', `the answer is too large (${declared} bytes declared)`), {
        declaredBytes: declared,
      });
    }
    const body = await res.body.arrayBuffer().catch((err: unknown) => Promise.reject(classify(err)));
    return Buffer.from(body);
  }

  /** POST JSON and read a JSON answer; non-2xx answers throw with their status. */
  async postJson<T>(url: string, body: unknown, signal: AbortSignal): Promise<T> {
    const res = await this.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      throw new OutboundError('status', `${new URL(url).host} answered ${res.statusCode}`, res.statusCode);
    }
    return (await res.body.json().catch((err: unknown) => Promise.reject(classify(err)))) as T;
  }

  /**
   * Any method, answering the status and the body text whatever the status (the caller decides
   * what a 4xx means): for callers that speak an API, such as the demo configuring a service.
   */
  async exchange(
    method: Dispatcher.HttpMethod,
    url: string,
    signal: AbortSignal,
    opts: { headers?: Record<string, string>; body?: string } = {},
  ): Promise<{ status: number; text: string }> {
    const res = await this.send(url, {
      method,
      headers: { accept: 'application/json', ...opts.headers },
      body: opts.body ?? null,
      signal,
    });
    const text = await res.body.text().catch((err: unknown) => Promise.reject(classify(err)));
    return { status: res.statusCode, text };
  }

  private async send(
    url: string,
    opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { signal: AbortSignal },
  ): Promise<Dispatcher.ResponseData> {
    try {
      this.policy.assertUrl(url);
      return await request(url, { ...opts, dispatcher: this.agent });
    } catch (err) {
      throw classify(err);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function classify(err: unknown): OutboundError {
  if (err instanceof OutboundError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  )
    return new OutboundError('timeout', 'timed out');
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new OutboundError('too-large', 'the answer is too large');
  if (code === 'OUTBOUND_REFUSED') return new OutboundError('refused', e.message ?? 'refused');
  return new OutboundError('failed', e.message ?? 'request failed');
}
