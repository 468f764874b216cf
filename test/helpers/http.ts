/** Small HTTP helpers for tests: JSON requests with undici, and raw sockets for what a well-behaved client would never send. */
import net from 'node:net';
import { request } from 'undici';

export interface JsonResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(base + path, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

/** Sends raw bytes, then reads until the server answers and closes or `waitMs` passes. */
export function rawExchange(
  port: number,
  chunks: string[],
  opts: { waitMs?: number; closeAfterSend?: boolean } = {},
): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const done = () => {
      s.destroy();
      resolve(out);
    };
    const timer = setTimeout(done, opts.waitMs ?? 2000);
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    s.on('error', () => undefined);
    s.on('connect', () => {
      for (const c of chunks) s.write(c);
      if (opts.closeAfterSend) {
        clearTimeout(timer);
        setTimeout(done, 50);
      }
    });
  });
}
