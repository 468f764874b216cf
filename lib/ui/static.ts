/**
 * The operator and player pages (issue 17): a fixed set of files read once at start-up into
 * memory and answered under `/ui/`. Nothing on disk is looked up per request (no path is ever
 * joined from the URL, so no traversal), each answer has its Content-Type, an ETag and caching
 * headers, and the pages carry a Content-Security-Policy. Only `/ui/*` routes are added: the hot
 * path's routes and their cost are untouched.
 *
 * Negotiation is lib/http/representation.ts's, as on every other path (issue 27): each file's gzip
 * and brotli forms are made at start-up (hls.js: 624 KB → 190 KB either way, ~90 ms once), kept with it, and
 * answered with `Vary: Accept-Encoding`, a strong ETag per form and 304s.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Exchange, NO_HEADERS } from '../http/exchange.js';
import { conditionsOf, negotiate, sendNegotiated, type Body } from '../http/representation.js';
import { guardMethods } from '../http/methods.js';
import { requestIdOf } from '../http/request-id.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import { notFound } from '../http/problem.js';
import { answer, problemResponses, type Operations } from '../http/openapi.js';
import type { Logger } from '../log/index.js';

/** The files of the pages' folder that are served: the name under /ui/ is the file's name. */
export const UI_FILES = ['index.html', 'operator.js', 'player.html', 'player.js', 'common.js', 'style.css'] as const;
/** hls.js from node_modules (a dependency), answered as /ui/vendor/hls.min.js. */
const VENDOR = { name: 'vendor/hls.min.js', module: 'hls.js/dist/hls.min.js' };

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/**
 * The pages load their own scripts and styles only; hls.js transmuxes in a blob: worker and plays
 * through blob: media URLs; playlists and segments may come from any http(s) origin.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  'connect-src http: https:',
  'media-src blob: data: http: https:',
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** One file for every request: its forms are built once (lib/http/representation.ts keys them on the body). */
const SHARED = Object.freeze({ shared: true });

function asset(name: string, body: Buffer, cacheControl: string): Body {
  const headers: Record<string, string> = {
    'Content-Type': TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
  if (name.endsWith('.html')) headers['Content-Security-Policy'] = CSP;
  const a: Body = { status: 200, headers: Object.freeze(headers), body };
  // Compressed now, not on the first request that asks (the forms are kept with the body).
  negotiate(a, '', '', 'gzip', SHARED);
  negotiate(a, '', '', 'br', SHARED);
  return a;
}

export interface UiPagesOptions {
  /** The folder holding UI_FILES (the repository's `ui/`). */
  dir: string;
  log: Logger;
}

/** A file of ui/: GET, or HEAD (the same headers, no body). */
const uiFileOp = (method: 'get' | 'head') => ({
  operationId: `${method}UiFile`,
  summary: 'The operator and player pages and their scripts (304 on a matching If-None-Match)',
  security: [],
  parameters: [
    {
      name: 'file',
      in: 'path',
      required: true,
      description: 'a file of ui/ (slashes kept)',
      schema: { type: 'string' },
    },
  ],
  responses: {
    200: answer('the file', {
      'text/html': { type: 'string' },
      'text/javascript': { type: 'string' },
      'text/css': { type: 'string' },
    }),
    304: answer('not modified'),
    ...problemResponses([404, 405]),
  },
});

/** Reads the pages once; a missing file (or hls.js) is logged and answered 404, never a crash. */
/** The pages in the OpenAPI document (lib/http/openapi.ts). */
export const uiOperations: Operations = {
  '/ui': {
    get: {
      operationId: 'getUi',
      summary: 'Redirects to /ui/',
      security: [],
      responses: {
        308: answer('to /ui/', { 'text/plain': { type: 'string' } }, { Location: { schema: { type: 'string' } } }),
        ...problemResponses([405]),
      },
    },
  },
  '/ui/{file}': { get: uiFileOp('get'), head: uiFileOp('head') },
};

export class UiPages {
  private readonly assets = new Map<string, Body>();

  constructor(opts: UiPagesOptions) {
    const load = (name: string, file: string, cacheControl: string) => {
      try {
        this.assets.set(`/ui/${name}`, asset(name, readFileSync(file), cacheControl));
      } catch (err) {
        opts.log.warn(
          { file, err: (err as Error).message },
          'operator page file not readable: /ui/ will answer 404 for it',
        );
      }
    };
    // Revalidated on every load (ETag), so a new version of the pages shows at once.
    for (const name of UI_FILES) load(name, path.join(opts.dir, name), 'no-cache');
    let vendor = '';
    try {
      vendor = createRequire(import.meta.url).resolve(VENDOR.module);
    } catch {
      opts.log.warn('hls.js is not installed: the pages cannot play streams');
    }
    if (vendor) load(VENDOR.name, vendor, 'public, max-age=86400');
    const index = this.assets.get('/ui/index.html');
    if (index) this.assets.set('/ui/', index);
  }

  /** The paths answered (tests). */
  paths(): string[] {
    return [...this.assets.keys()];
  }

  mount(app: TemplatedApp): void {
    app.get(
      '/ui',
      (res, req) =>
        void new Exchange(res, false, NO_HEADERS, requestIdOf(req)).send(
          308,
          { Location: '/ui/', 'Content-Type': 'text/plain' },
          '/ui/',
        ),
    );
    app.get('/ui/*', (res, req) => this.answer(res, req, false));
    app.head('/ui/*', (res, req) => this.answer(res, req, true));
    guardMethods(app, '/ui', 'GET');
    guardMethods(app, '/ui/*', 'GET, HEAD');
  }

  private answer(res: HttpResponse, req: HttpRequest, head: boolean): void {
    const found = this.assets.get(req.getUrl());
    const ex = new Exchange(res, head, NO_HEADERS, requestIdOf(req));
    if (!found) {
      ex.problem(notFound(`no page ${req.getUrl().slice(0, 200)}`));
      return;
    }
    sendNegotiated(ex, found, conditionsOf(req), undefined, SHARED);
  }
}
