/**
 * Chromium for the operator-page browser test (docs/design.md §12): Debian's `chromium` driven by
 * playwright-core. Missing locally: the test is skipped with the reason; with CI=true that is a
 * failure. (The integrator may merge this with the other browser tests' helper.)
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { inCI } from './services.js';

export const CHROMIUM = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium';

/** Quiet, offline, reproducible headless flags (no sandbox: CI runs as root). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function needChromium(t: Test): boolean {
  if (existsSync(CHROMIUM)) return true;
  const msg = `${CHROMIUM} is not installed (apt-get install chromium)`;
  if (inCI) t.fail(msg);
  else t.test(msg, { skip: msg }, () => undefined);
  return false;
}

/** A headless chromium with a fresh profile of its own; closed (and the profile removed) when t ends. */
export async function launchChromium(t: Test): Promise<{ browser: Browser | undefined; context: BrowserContext }> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'sqz-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1400, height: 860 } });
  t.teardown(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return { browser: context.browser() ?? undefined, context };
}
