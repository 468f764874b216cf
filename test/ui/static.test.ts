/**
 * The operator and player pages (lib/ui/static.ts): the repository's ui/ files and hls.js are
 * answered from memory with their types and caching headers; nothing outside that fixed set is
 * reachable (traversal, encoded dots, other files of the folder), HEAD and If-None-Match work, and
 * a missing file is a logged 404, not a crash.
 */
import t from 'tap';
import net from 'node:net';
import zlib from 'node:zlib';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadUws } from '../../lib/http/uws.js';
import { projectRoot } from '../../lib/paths.js';
import { UiPages, UI_FILES } from '../../lib/ui/static.js';
import type { Logger } from '../../lib/log/index.js';

const uws = loadUws();

/** A raw request: the path goes out byte for byte (fetch would normalize `..`). */
function raw(
  port: number,
  request: string,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    s.on('connect', () => s.write(request));
    s.on('data', (d) => {
      parts.push(d);
      // A HEAD answer ends with its headers (uWS keeps that connection open).
      if (request.startsWith('HEAD') && Buffer.concat(parts).includes('\r\n\r\n')) s.destroy();
    });
    s.on('error', reject);
    s.on('close', () => {
      const all = Buffer.concat(parts).toString('latin1');
      const split = all.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = all.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: all.slice(split + 4) });
    });
  });
}

const get = (port: number, p: string, extra = '') =>
  raw(port, `GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra}\r\n`);

function listen(pages: UiPages) {
  const app = uws.App();
  pages.mount(app);
  app.any('/*', (res) => void res.writeStatus('404 Not Found').end('fallback'));
  return new Promise<{ port: number; close: () => void }>((resolve) =>
    app.listen('127.0.0.1', 0, (s) =>
      resolve({ port: uws.us_socket_local_port(s as never), close: () => uws.us_listen_socket_close(s as never) }),
    ),
  );
}

function recordingLog(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const log = {
    warn: (o: unknown, m?: string) => warnings.push(typeof o === 'string' ? o : `${m} ${JSON.stringify(o)}`),
  } as unknown as Logger;
  return { log, warnings };
}

t.test("the repository's pages", async (t) => {
  const { log, warnings } = recordingLog();
  const pages = new UiPages({ dir: path.join(projectRoot, 'ui'), log });
  t.same(warnings, [], 'every page file and hls.js loaded');
  t.same(pages.paths().sort(), [...UI_FILES.map((f) => `/ui/${f}`), '/ui/vendor/hls.min.js', '/ui/'].sort());
  const { port, close } = await listen(pages);
  t.teardown(close);

  const index = await get(port, '/ui/');
  t.equal(index.status, 200);
  t.equal(index.headers['content-type'], 'text/html; charset=utf-8');
  t.match(index.headers['content-security-policy'], /default-src 'none'; script-src 'self'/);
  t.equal(index.headers['x-content-type-options'], 'nosniff');
  t.equal(index.headers['cache-control'], 'no-cache');
  t.match(index.body, /<title>Squeezeback operator<\/title>/);
  t.equal((await get(port, '/ui/index.html')).body, index.body, '/ui/ is index.html');

  const js = await get(port, '/ui/operator.js');
  t.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  t.equal((await get(port, '/ui/style.css')).headers['content-type'], 'text/css; charset=utf-8');
  t.equal((await get(port, '/ui/player.html')).status, 200);

  const hls = await get(port, '/ui/vendor/hls.min.js');
  t.equal(hls.status, 200);
  t.equal(hls.headers['cache-control'], 'public, max-age=86400');
  t.match(hls.body, /Hls/, 'hls.js itself');

  const again = await get(port, '/ui/operator.js', `If-None-Match: ${js.headers['etag']}\r\n`);
  t.equal(again.status, 304, 'revalidation answers 304');
  t.equal(again.body, '');
  const head = await raw(port, 'HEAD /ui/player.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.equal(head.status, 200);
  t.equal(head.body, '', 'HEAD has no body');

  // Compressed as every other answer is (issue 27): gzip and brotli forms made at start-up, Vary, a tag per form.
  t.equal(js.headers['vary'], 'Accept-Encoding', 'identity: Vary too');
  t.equal(js.headers['content-encoding'], undefined);
  for (const [ae, coding, decode] of [
    ['gzip', 'gzip', zlib.gunzipSync],
    ['gzip, deflate, br', 'br', zlib.brotliDecompressSync],
    ['br', 'br', zlib.brotliDecompressSync],
  ] as const) {
    const c = await get(port, '/ui/vendor/hls.min.js', `Accept-Encoding: ${ae}\r\n`);
    t.equal(c.headers['content-encoding'], coding, `${ae}: ${coding}`);
    t.equal(c.headers['vary'], 'Accept-Encoding');
    t.equal(c.headers['cache-control'], 'public, max-age=86400');
    t.ok(decode(Buffer.from(c.body, 'latin1')).equals(Buffer.from(hls.body, 'latin1')), `${ae}: decodes to the file`);
    t.equal(c.headers['etag'], `${hls.headers['etag']!.slice(0, -1)}-${coding === 'gzip' ? 'gz' : 'br'}"`);
    const nm = await get(
      port,
      '/ui/vendor/hls.min.js',
      `Accept-Encoding: ${ae}\r\nIf-None-Match: ${c.headers['etag']}\r\n`,
    );
    t.equal(nm.status, 304, `${ae}: its tag revalidates`);
    t.equal(nm.headers['vary'], 'Accept-Encoding');
    const h = await raw(
      port,
      `HEAD /ui/vendor/hls.min.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept-Encoding: ${ae}\r\n\r\n`,
    );
    t.equal(h.headers['content-encoding'], coding, 'HEAD: the same headers');
    t.equal(h.headers['content-length'], String(Buffer.byteLength(c.body, 'latin1')));
  }

  const redirect = await get(port, '/ui');
  t.equal(redirect.status, 308);
  t.equal(redirect.headers['location'], '/ui/');

  for (const p of [
    '/ui/../package.json',
    '/ui/%2e%2e/package.json',
    '/ui/..%2fpackage.json',
    '/ui/vendor/../../package.json',
    '/ui/README.md',
    '/ui/index.html/',
    '/ui/vendor/hls.js',
    '/ui//etc/passwd',
  ]) {
    const r = await get(port, p);
    t.not(r.status, 200, `${p} is not served`);
    t.notMatch(r.body, /"name": "squeezeback-service"|root:/, `${p} leaks nothing`);
  }
  const problem = await get(port, '/ui/nope.js');
  t.equal(problem.status, 404);
  t.equal(problem.headers['content-type'], 'application/problem+json');
});

t.test('a missing file is logged and answered 404', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ui-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>x</title>');
  writeFileSync(path.join(dir, 'secret.txt'), 'not a page');
  const { log, warnings } = recordingLog();
  const pages = new UiPages({ dir, log });
  t.equal(warnings.length, UI_FILES.length - 1, 'one warning per missing file');
  const { port, close } = await listen(pages);
  t.teardown(close);
  t.equal((await get(port, '/ui/')).status, 200);
  t.equal((await get(port, '/ui/operator.js')).status, 404);
  t.equal((await get(port, '/ui/secret.txt')).status, 404, 'only the fixed set is served');
  // A file changed on disk after start-up is not picked up: the set is read once.
  writeFileSync(path.join(dir, 'index.html'), 'changed');
  t.match((await get(port, '/ui/')).body, /<title>x<\/title>/);
});
