/**
 * Browser test (c) of issue 17: the operator page, in a real chromium, against the real service.
 * It takes its token from the URL fragment (and drops it from the address bar), lists the event,
 * starts a break that shows scheduled/active, terminates it (cancelled), and shows a break that a
 * SCTE-35 cue of the source started with its cue decoded by the decode API.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { CueOriginSim } from '../../lib/sim/cue-origin.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { configureDemo, scheduleCues, DEMO_ASSET, DEMO_CHANNEL } from '../../lib/sim/demo-setup.js';
import { freshSchemaUrl, needServices, startTestService, token } from '../helpers/services.js';
import { launchChromium, needChromium } from '../helpers/browser.js';

const firstBreak = (page: Page) => page.locator('[data-testid=break]').first();
/** The source's segment length and the page's poll interval (ui/operator.js POLL_MS). */
const SEG_MS = 1000;
const POLL_MS = 2000;
/** How much slower than real time a busy CI machine may run the page, the service and the origin. */
const SLACK = 4;
/** A deadline for a change the page shows after `segments` source segments and a poll. */
const shownWithin = (segments: number) => (segments * SEG_MS + 2 * POLL_MS) * SLACK;

t.test('the operator page starts a break, shows it active, then terminated', async (t) => {
  if (!needChromium(t) || !(await needServices(t, ['postgres']))) return;
  const origin = await new CueOriginSim({ segmentSec: 1, windowSegments: 30 }).start();
  t.teardown(() => origin.stop());
  const adServer = await new AdServerSim().start();
  t.teardown(() => adServer.stop());
  const service = await startTestService(t, {
    databaseUrl: await freshSchemaUrl(t),
    contentOrigin: origin.url,
    adServerUrl: `${adServer.url}/ad`,
    allowPrivateOutbound: true,
    breakTickMs: 250,
  });
  const tok = await token(service, { ttlSec: 600 });
  const event = await configureDemo({
    baseUrl: service.url,
    token: tok,
    originUrl: origin.url,
    ads: [{ id: 'ad-1', uri: adServer.creativeUrl('ad-1'), durationSec: 15 }],
  });

  const context = await launchChromium(t, { width: 1400, height: 860 });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${service.url}/ui/#token=${tok}`);

  const row = page.locator(`#events tr[data-event="${event.id}"]`);
  await row.waitFor({ timeout: shownWithin(0) });
  t.match(
    await row.innerText(),
    new RegExp(`${DEMO_ASSET}\\s+acme\\s+scte35`),
    'the event is listed with its brand and trigger',
  );
  t.notMatch(page.url(), /token=/, 'the token left the address bar');
  t.equal(await page.locator('#token').inputValue(), tok, 'the token field holds it');
  t.equal(await page.locator('[data-testid=break]').count(), 0, 'no break yet');
  await page.locator('[data-testid=creatives] tr').first().waitFor({ timeout: 10_000 });
  t.match(
    await page.locator('[data-testid=creatives]').innerText(),
    /None yet/,
    'the conditioned ad creatives are listed (none in this demo)',
  );

  // Start: the break appears, scheduled until its first segment's time, then active.
  await page.fill('#duration', '30');
  await page.click('#start');
  await page
    .locator('[data-testid=break][data-status="scheduled"], [data-testid=break][data-status="active"]')
    .first()
    .waitFor({ timeout: shownWithin(0) });
  t.ok(await page.locator('#start').isDisabled(), 'no second break while one is in progress');
  await page
    .locator('[data-testid=break][data-status="active"]')
    .first()
    .waitFor({ timeout: shownWithin(4) });
  t.equal(await firstBreak(page).getAttribute('data-status'), 'active', 'the break is active');
  t.match(await firstBreak(page).innerText(), /segments \d+\/30 composed/, 'its segments and their progress are shown');
  t.match(await page.locator('#events').innerText(), /active/, 'the event row shows the break');
  t.match(await page.locator('#cue').innerText(), /started through the API/);

  // Terminate: cancelled (it ends at the next segment boundary), and a new break may start.
  await page.click('#terminate');
  await page
    .locator('[data-testid=break][data-status="cancelled"]')
    .first()
    .waitFor({ timeout: shownWithin(1) });
  t.equal(await firstBreak(page).getAttribute('data-status'), 'cancelled', 'the break is terminated');
  t.ok(await page.locator('#terminate').isDisabled(), 'nothing left to terminate');
  await page.waitForFunction("!document.getElementById('start').disabled", undefined, { timeout: shownWithin(0) });

  // A cue of the source starts the next break; the page decodes its SCTE-35 through the API.
  scheduleCues(origin, DEMO_CHANNEL, { firstSeq: origin.live() + 3, everySegments: 100, breakSegments: 6, count: 1 });
  await page
    .locator(
      '[data-testid=break]:nth-child(1)[data-status="scheduled"], [data-testid=break]:nth-child(1)[data-status="active"]',
    )
    .waitFor({ timeout: shownWithin(3 + 2) });
  await firstBreak(page).click();
  const cue = page.locator('[data-testid=cue]');
  await cue.waitFor({ timeout: shownWithin(0) });
  const decoded = JSON.parse(await cue.innerText()) as {
    table_id?: number;
    splice_command?: { name?: string; break_duration?: number };
  };
  t.equal(decoded.table_id, 252, 'a splice_info_section');
  t.equal(decoded.splice_command?.name, 'splice_insert');
  t.equal(decoded.splice_command?.break_duration, 6, "the cue's break duration");
  t.match(await firstBreak(page).innerText(), /scte35/, 'the break names its trigger');
  t.same(pageErrors, [], 'no script error on the page');
});
