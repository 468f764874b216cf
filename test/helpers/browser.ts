/**
 * Debian's chromium for the browser tests (issue 17 part 5): whether it is there (with CI=true a
 * missing chromium fails the run, elsewhere the tests are skipped with the reason), a headless
 * launch through playwright-core with a fresh profile, and a static server for a test page on an
 * origin of its own (another port than the service's, so every request of the page is cross-origin).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { chromium, type BrowserContext } from 'playwright-core';
import { projectRoot } from '../../lib/paths.js';
import { inCI } from './services.js';

export const CHROMIUM = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
];

/** Returns false (and fails t under CI=true, else skips with the reason) when chromium is missing. */
export function needChromium(t: Test): boolean {
  if (existsSync(CHROMIUM)) return true;
  const msg = `${CHROMIUM} is not installed (apt-get install chromium)`;
  if (inCI) t.fail(msg);
  else t.test(msg, { skip: msg }, () => undefined);
  return false;
}

/** A headless chromium with a throwaway profile, closed (and the profile removed) when t ends. */
export async function launchChromium(t: Test, viewport = { width: 800, height: 600 }): Promise<BrowserContext> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'sqz-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
  });
  t.teardown(async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  });
  return context;
}

/** The players' prebuilt browser bundles (npm packages), served next to the test page. */
const BUNDLES: Record<string, string[]> = {
  '/hls.min.js': ['hls.js', 'dist', 'hls.min.js'],
  '/shaka-player.compiled.js': ['shaka-player', 'dist', 'shaka-player.compiled.js'],
  '/dash.all.min.js': ['dashjs', 'dist', 'modern', 'umd', 'dash.all.min.js'],
};

/**
 * Serves `/` (the given page; or pages by path) and the players' bundles (hls.js, Shaka Player,
 * dash.js) on its own loopback port.
 */
export async function servePage(t: Test, html: string | Record<string, string>): Promise<string> {
  const pages = new Map(Object.entries(typeof html === 'string' ? { '/': html } : html));
  const bundles = new Map(
    await Promise.all(
      Object.entries(BUNDLES).map(
        async ([p, parts]) => [p, await readFile(path.join(projectRoot, 'node_modules', ...parts))] as const,
      ),
    ),
  );
  const server = http.createServer((req, res) => {
    req.resume();
    const p = (req.url ?? '/').split('?')[0]!;
    const page = pages.get(p);
    if (page !== undefined) return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    const bundle = bundles.get(p);
    if (bundle) return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
