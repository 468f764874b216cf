/**
 * Loads the native uWebSockets.js binary. uWS reads UWS_HTTP_MAX_HEADERS_SIZE once, when the
 * module loads, so it is set here before the first load (docs/design.md §4). The package silently
 * falls back to a slow JS implementation when its binary does not load; we load the binary
 * ourselves and refuse to start without it unless the fallback is explicitly allowed.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as uwsTypes from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
export type Uws = typeof uwsTypes;

export const MAX_HEADERS_SIZE = 16 * 1024;

export class UwsLoadError extends Error {
  override name = 'UwsLoadError';
}

let loaded: Uws | undefined;

export function loadUws(allowFallback = false): Uws {
  if (loaded) return loaded;
  process.env['UWS_HTTP_MAX_HEADERS_SIZE'] ??= String(MAX_HEADERS_SIZE);
  const require = createRequire(import.meta.url);
  const pkgDir = path.dirname(require.resolve('uWebSockets.js/package.json'));
  const binary = path.join(
    pkgDir,
    'binaries',
    `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`,
  );
  try {
    loaded = require(binary) as Uws;
  } catch (err) {
    if (!allowFallback) {
      throw new UwsLoadError(
        `the native uWebSockets.js binary did not load (${binary}): ${(err as Error).message.split('\n')[0]}. ` +
          `This build supports Node 16/18/20 on glibc ≤ 2.36 systems; use Node 20, or set UWS_ALLOW_FALLBACK=true to run the slow JS fallback.`,
      );
    }
    process.env['UWS_USE_FALLBACK'] = 'true';
    loaded = require('uWebSockets.js') as Uws;
  }
  return loaded;
}

/** The text form of an address uWS returns as bytes (ASCII: an IPv4 or IPv6 literal), without a Buffer. */
export function addressText(bytes: ArrayBuffer): string {
  return String.fromCharCode.apply(null, new Uint8Array(bytes) as unknown as number[]);
}

/**
 * A header name (lower case) or other constant as a byte buffer of its own, for the hot path's
 * calls into uWS: a string argument is converted to UTF-8 on every call (`Utf8Length` and
 * `WriteUtf8` in a hot answer's profile, issue 31), an ArrayBuffer is read in place.
 */
export function latin1Bytes(text: string): ArrayBuffer {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes.buffer;
}
