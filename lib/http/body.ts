/** Request body reading with a byte cap. uWS hands out chunks that are only valid during the callback, so each is copied. */
import type { HttpResponse } from './uws.js';
import { HttpError, payloadTooLarge } from './problem.js';

/** Must be called synchronously in the request handler: uWS drops data that arrives before onData is set. */
export function readBody(res: HttpResponse, limit: number, onAbort: (h: () => void) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    onAbort(() => {
      failed = true;
      reject(new HttpError('client-closed', 'the client closed the connection'));
    });
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
}

/** The media type of a Content-Type header, lower-cased and without parameters. */
export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
