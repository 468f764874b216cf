import t, { type Test } from 'tap';
import { BeaconForwarder, beaconKey, type BeaconForwarderOptions } from '../../lib/beacons/forwarder.js';
import { Registry } from '../../lib/metrics/index.js';
import { AdServerSim } from '../../lib/sim/ad-server.js';
import { OutboundPolicy } from '../../lib/outbound/index.js';

const open = new OutboundPolicy({ allowPrivate: true, trusted: [] });

/** A shared, in-memory claim: what state.setIfAbsent does across instances. */
function setClaim() {
  const claimed = new Set<string>();
  const claim = async (key: string) => {
    if (claimed.has(key)) return false;
    claimed.add(key);
    return true;
  };
  return { claim, claimed };
}

async function setup(t: Test, opts: Partial<BeaconForwarderOptions> = {}) {
  const sim = await new AdServerSim().start();
  const fw = new BeaconForwarder({ claim: setClaim().claim, policy: open, backoffMs: 10, timeoutMs: 2000, ...opts });
  t.teardown(async () => {
    await fw.close(100);
    await sim.stop();
  });
  const beacon = (event = 'start', stream = 'st-1', ad = 'ad-1') => ({
    url: sim.trackUrl(ad, event, stream),
    streamId: stream,
    event,
  });
  return { sim, fw, beacon };
}

t.test('one enqueue → one hit', async (t) => {
  const metrics = new Registry();
  const { sim, fw, beacon } = await setup(t, { metrics });
  t.equal(fw.enqueue(beacon('impression')), true);
  t.equal(fw.stats.queued, 1);
  await fw.idle();
  t.equal(sim.hitCount('impression', 'ad-1'), 1);
  t.equal(sim.hits[0]!.s, 'st-1');
  t.same(fw.stats, { queued: 0, sent: 1, failed: 0, dropped: 0, duplicates: 0 });
  t.match(metrics.render(), /beacons_forwarded_total\{result="sent"\} 1/);
  t.match(metrics.render(), /beacons_queued 0/);
});

t.test('the same beacon 5× → one hit; other streams and events are distinct', async (t) => {
  const { sim, fw, beacon } = await setup(t);
  for (let i = 0; i < 5; i++) t.equal(fw.enqueue(beacon('start')), true, 'a duplicate is accepted, not dropped');
  fw.enqueue(beacon('start', 'st-2'));
  fw.enqueue(beacon('midpoint'));
  await fw.idle();
  for (let i = 0; i < 3; i++) fw.enqueue(beacon('start'));
  await fw.idle();
  t.equal(sim.hitCount('start'), 2);
  t.equal(sim.hitCount('start', 'ad-1'), 2);
  t.same(
    sim.hits
      .filter((h) => h.ev === 'start')
      .map((h) => h.s)
      .sort(),
    ['st-1', 'st-2'],
  );
  t.equal(sim.hitCount('midpoint'), 1);
  t.match(fw.stats, { sent: 3, duplicates: 7 });
});

t.test('two forwarders sharing one claim → one hit', async (t) => {
  const shared = setClaim();
  const { sim, fw, beacon } = await setup(t, { claim: shared.claim });
  const other = new BeaconForwarder({ claim: shared.claim, policy: open });
  t.teardown(() => other.close(100));
  fw.enqueue(beacon('complete'));
  other.enqueue(beacon('complete'));
  await Promise.all([fw.idle(), other.idle()]);
  t.equal(sim.hitCount('complete'), 1);
  t.equal(fw.stats.sent + other.stats.sent, 1);
  t.equal(fw.stats.duplicates + other.stats.duplicates, 1);
  t.ok(shared.claimed.has(beaconKey(beacon('complete'))), 'the claim key is the beacon key');
});

t.test('claim store down → forwarded anyway, once per instance', async (t) => {
  let calls = 0;
  const warnings: unknown[] = [];
  const log = {
    warn: (o: unknown) => warnings.push(o),
    debug: () => undefined,
  } as unknown as BeaconForwarderOptions['log'];
  const { sim, fw, beacon } = await setup(t, {
    claim: async () => {
      calls++;
      throw new Error('store down');
    },
    log,
  });
  for (let i = 0; i < 3; i++) fw.enqueue(beacon('firstQuartile'));
  fw.enqueue(beacon('thirdQuartile'));
  await fw.idle();
  t.equal(sim.hitCount('firstQuartile'), 1);
  t.equal(sim.hitCount('thirdQuartile'), 1);
  t.equal(calls, 2, 'local duplicates never reach the store');
  t.equal(warnings.length, 1, 'the outage is logged once, not per beacon');
});

t.test('a hanging claim is bounded by timeoutMs', async (t) => {
  const { sim, fw, beacon } = await setup(t, { claim: () => new Promise<boolean>(() => undefined), timeoutMs: 100 });
  fw.enqueue(beacon('start'));
  await fw.idle();
  t.equal(sim.hitCount('start'), 1);
});

t.test('500 then success → retried; retries exhausted → failed', async (t) => {
  const { sim, fw, beacon } = await setup(t, { attempts: 3 });
  sim.failTracks = 1;
  fw.enqueue(beacon('start'));
  await fw.idle();
  t.equal(sim.hitCount('start'), 2, 'one 500, one success');
  t.match(fw.stats, { sent: 1, failed: 0 });
  sim.failTracks = 10;
  fw.enqueue(beacon('complete'));
  await fw.idle();
  t.equal(sim.hitCount('complete'), 3, 'attempts bounds the tries');
  t.match(fw.stats, { sent: 1, failed: 1 });
});

t.test('network errors are retried', async (t) => {
  const errors: unknown[] = [];
  const log = {
    warn: () => undefined,
    debug: (o: unknown, msg: string) => msg === 'beacon forwarding error' && errors.push(o),
  } as unknown as BeaconForwarderOptions['log'];
  const { sim, fw } = await setup(t, { attempts: 2, log });
  const deadPort = await new AdServerSim().start();
  const url = `${deadPort.url}/track?ad=x&ev=start`;
  await deadPort.stop();
  fw.enqueue({ url, streamId: 's', event: 'start' });
  await fw.idle();
  t.match(fw.stats, { sent: 0, failed: 1 });
  t.equal(errors.length, 2, 'tried twice');
  t.equal(sim.hits.length, 0);
});

t.test('4xx is not retried', async (t) => {
  const { sim, fw, beacon } = await setup(t, { attempts: 3 });
  sim.trackStatus = 404;
  fw.enqueue(beacon('midpoint'));
  await fw.idle();
  t.equal(sim.hitCount('midpoint'), 1);
  t.match(fw.stats, { sent: 0, failed: 1 });
});

t.test('queue full → dropped and counted, never blocking or throwing', async (t) => {
  const metrics = new Registry();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const { sim, fw, beacon } = await setup(t, {
    maxQueue: 2,
    concurrency: 1,
    metrics,
    claim: async () => {
      await gate;
      return true;
    },
  });
  const accepted = [1, 2, 3, 4, 5].map((i) => fw.enqueue(beacon('start', `st-${i}`)));
  t.same(accepted, [true, true, true, false, false], 'one in flight, two waiting, the rest dropped');
  t.match(fw.stats, { queued: 3, dropped: 2 });
  t.equal(fw.enqueue(null as never), false, 'not a beacon → false, no throw');
  release();
  await fw.idle();
  t.equal(sim.hitCount('start'), 3);
  t.match(metrics.render(), /beacons_forwarded_total\{result="dropped"\} 3/);
});

t.test('private targets: refused unless allowed or trusted', async (t) => {
  const { sim } = await setup(t);
  const metrics = new Registry();
  const strict = new BeaconForwarder({
    claim: setClaim().claim,
    policy: new OutboundPolicy({ allowPrivate: false, trusted: ['ads.example.com'] }),
    attempts: 3,
    metrics,
  });
  t.teardown(() => strict.close(100));
  strict.enqueue({ url: sim.trackUrl('ad-1', 'start', 'ip'), streamId: 'ip', event: 'start' });
  strict.enqueue({
    url: sim.trackUrl('ad-1', 'start', 'dns').replace('127.0.0.1', 'localhost'),
    streamId: 'dns',
    event: 'start',
  });
  strict.enqueue({ url: `http://[::1]:${sim.port}/track?ad=x&ev=start`, streamId: 'v6', event: 'start' });
  strict.enqueue({ url: 'file:///etc/passwd', streamId: 'f', event: 'start' });
  await strict.idle();
  t.equal(sim.hits.length, 0, 'nothing reached the private host');
  t.match(strict.stats, { sent: 0, failed: 4 });
  t.match(metrics.render(), /beacons_forwarded_total\{result="refused"\} 4/, 'refused at once, never retried');

  const trusted = new BeaconForwarder({
    claim: setClaim().claim,
    policy: new OutboundPolicy({ allowPrivate: false, trusted: [sim.url] }),
  });
  t.teardown(() => trusted.close(100));
  trusted.enqueue({ url: sim.trackUrl('ad-1', 'start', 'trusted'), streamId: 'trusted', event: 'start' });
  await trusted.idle();
  t.equal(sim.hitCount('start'), 1, 'a configured collaborator is always allowed');
  t.equal(sim.hits[0]!.s, 'trusted');
});

t.test('close() drains, then refuses; a stuck target is dropped within the grace time', async (t) => {
  const { sim, fw, beacon } = await setup(t);
  fw.enqueue(beacon('start'));
  await fw.close(1000);
  t.equal(sim.hitCount('start'), 1, 'drained');
  t.equal(fw.enqueue(beacon('complete')), false, 'closed');

  const slow = new AdServerSim({ mode: 'slow', slowMs: 60_000 });
  await slow.start();
  t.teardown(() => slow.stop());
  const stuck = new BeaconForwarder({ claim: setClaim().claim, policy: open, concurrency: 1, timeoutMs: 30_000 });
  stuck.enqueue({ url: `${slow.url}/ad?s=1`, streamId: '1', event: 'start' });
  stuck.enqueue({ url: `${slow.url}/ad?s=2`, streamId: '2', event: 'start' });
  const started = Date.now();
  await stuck.close(100);
  t.ok(Date.now() - started < 2000, 'close is bounded');
  t.same(stuck.stats, { queued: 0, sent: 0, failed: 1, dropped: 1, duplicates: 0 });

  const hanging = new BeaconForwarder({
    claim: () => new Promise<boolean>(() => undefined),
    policy: open,
    timeoutMs: 30_000,
  });
  hanging.enqueue({ url: `${slow.url}/track?ad=x&ev=start`, streamId: '3', event: 'start' });
  const t0 = Date.now();
  await hanging.close(100);
  t.ok(Date.now() - t0 < 2000, 'a hanging claim does not hold close()');
  t.equal(hanging.stats.queued, 0);
});

t.test('the same beacon in another break is another hit; within one break it is one', async (t) => {
  const shared = setClaim();
  const { sim, fw, beacon } = await setup(t, { claim: shared.claim });
  fw.enqueue({ ...beacon('impression'), breakId: 'break-1' });
  fw.enqueue({ ...beacon('impression'), breakId: 'break-1' });
  fw.enqueue({ ...beacon('impression'), breakId: 'break-2' });
  await fw.idle();
  t.equal(sim.hitCount('impression'), 2);
  t.not(
    beaconKey({ ...beacon('impression'), breakId: 'break-1' }),
    beaconKey({ ...beacon('impression'), breakId: 'break-2' }),
  );
});
