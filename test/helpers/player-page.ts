/**
 * The Shaka Player / dash.js test page (test/browser/shaka-dashjs.html) from a test: what the page
 * recorded, starting a player on a fresh tab, and waiting for a condition with a deadline the
 * caller derives from the media it waits for (the machine may be busy: never a short fixed sleep).
 */
import type { BrowserContext, Page } from 'playwright-core';

export interface Frag {
  url: string;
  /** Where the player appended it (the buffered end when it arrived); hls.js: the fragment's start. */
  start: number;
  shownAt: number;
  tags?: string[];
}

export interface PlayerState {
  player: string | null;
  frags: Frag[];
  id3: Array<{ owner: string; text: string; frag: string }>;
  errors: string[];
  fatal: string | null;
  started: boolean;
  /** load()/initialize() → currentTime first moved, in ms. */
  startupMs: number | null;
  maxStallMs: number;
  stallAt: number | null;
  currentTime: number;
  duration: number;
  ended: boolean;
  waiting: number;
  /** Shaka: the playlists/MPDs it fetched. */
  manifests?: string[];
  /** The Shaka/dash.js page: start-up milestones in ms after load (manifest, firstSegment, media events). */
  marks?: Record<string, number>;
}

/** How much slower than real time a busy shared machine may play (deadlines are media time × this + a margin). */
export const LOAD_FACTOR = 3;
/** The deadline for playing `mediaSec` of media. */
export const deadlineFor = (mediaSec: number, marginMs = 15_000) =>
  Math.round(mediaSec * 1000 * LOAD_FACTOR + marginMs);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false | null>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export const stateOf = <S = PlayerState>(page: Page) =>
  page.evaluate(() => (globalThis as unknown as { state: S }).state);

/** A new tab on the Shaka/dash.js page, playing `src` with `player`. */
export async function openPlayer(
  browser: BrowserContext,
  pageUrl: string,
  player: 'shaka' | 'dashjs',
  src: string,
): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(pageUrl);
  await page.evaluate(
    ([fn, s]) => void (globalThis as unknown as Record<string, (src: string) => unknown>)[fn!]!(s!),
    [player === 'shaka' ? 'playShaka' : 'playDashjs', src],
  );
  return page;
}

/** Stops counting stalls (the test has seen what it waited for). */
export const stopWatching = (page: Page) =>
  page.evaluate(() => void ((globalThis as unknown as { state: { stopWatching: boolean } }).state.stopWatching = true));

/** A diagnostic line for a failed wait. */
export const describe = (s: PlayerState) =>
  `${s.player}: errors ${s.errors.join(', ') || 'none'}; ${s.frags.length} segments; currentTime ${s.currentTime}; duration ${s.duration}; started ${s.started}`;
