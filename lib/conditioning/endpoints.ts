/**
 * `GET|HEAD /{STITCH_PATH}/creatives/{key}/{file}`: the conditioned renditions (manifests and
 * segments) from the object store, immutable (a key's renditions never change once published), with
 * CORS for web players. Public like the stitched manifests that name them.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import { Exchange } from '../http/exchange.js';
import { corsOf, type Cors } from '../http/cors.js';
import { problem } from '../http/problem.js';
import { requestIdOf } from '../http/request-id.js';
import { guardMethods } from '../http/methods.js';
import type { RenditionStore } from './files.js';

const TYPES: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  mpd: 'application/dash+xml',
  ts: 'video/mp2t',
  m4s: 'video/iso.segment',
  mp4: 'video/mp4',
  aac: 'audio/aac',
};

export function mountCreativeFiles(app: TemplatedApp, stitchPath: string, files: RenditionStore, cors?: Cors): void {
  const prefix = `/${stitchPath}/creatives/`;
  const serve = (res: HttpResponse, req: HttpRequest) => {
    const ex = new Exchange(res, req.getMethod() === 'head', corsOf(cors, req), requestIdOf(req));
    const [key = '', name = '', ...rest] = req.getUrl().slice(prefix.length).split('/');
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    const notFound = () => void ex.problem(problem('not-found', 'no such conditioned rendition'));
    if (rest.length || !type || !files.file(key, name)) return notFound();
    files.read(key, name).then(
      (body) =>
        body
          ? ex.send(200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400, immutable' }, body)
          : notFound(),
      // The store failed (an S3 store down or refusing us): not a missing file, and not to be cached as one.
      () => void ex.problem(problem('unavailable', 'the conditioned rendition cannot be read now')),
    );
  };
  app.get(`${prefix}*`, serve);
  app.head(`${prefix}*`, serve);
  cors?.mountPreflight(app, `${prefix}*`, 'GET, HEAD, OPTIONS');
  // A known path asked with another method is 405, as on every other path (issue 25 item 7).
  guardMethods(app, `${prefix}*`, cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD', cors);
}
