import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { OutboundClient, OutboundError, OutboundPolicy } from '../../../lib/outbound/index.js';
import { TranscoderSim } from '../../../lib/sim/transcoder.js';
import { TranscoderClient, type SqueezeJob } from '../../../lib/squeeze/breaks/transcoder.js';

/** The real client, counting the requests it sends and how many are open at once. */
class CountingClient extends OutboundClient {
  calls = 0;
  open = 0;
  maxOpen = 0;
  override async postJson<T>(url: string, body: unknown, signal: AbortSignal): Promise<T> {
    this.calls++;
    this.maxOpen = Math.max(this.maxOpen, ++this.open);
    try {
      return await super.postJson<T>(url, body, signal);
    } finally {
      this.open--;
    }
  }
}

const job = (key: string, over: Partial<SqueezeJob> = {}): SqueezeJob => ({
  content_uri: 'https://origin.example.org/content/ev/seg_990.ts',
  ad_uri: 'https://ads.example.com/creatives/ad-1.mp4',
  layout: 'dualbox',
  sqz_ratios: { content_box: 0.6, ad_box: 0.5 },
  positions: { content_box: { x: 0.02, y: 0.05 }, ad_box: { x: 0.5, y: 0.25 } },
  animation: { phase: 'hold', in_sec: 2, out_sec: 2 },
  frames: {
    content_box: { enabled: false, thickness_px: 4, color: 'white@0.8' },
    ad_box: { enabled: false, thickness_px: 4, color: 'white@0.8' },
  },
  ad_offset_sec: 6,
  duration_sec: 6,
  id3: { owner: 'com.example.sqz', value: 'brk-1' },
  output_key: key,
  ...over,
});

async function setup(t: Test, opts: ConstructorParameters<typeof TranscoderSim>[0] = {}) {
  const sim = await new TranscoderSim(opts).start();
  const http = new CountingClient(new OutboundPolicy({ allowPrivate: true, trusted: [sim.url] }));
  t.teardown(async () => {
    await http.close();
    await sim.stop();
  });
  return { sim, http };
}

t.test('answers the simulator’s output_uri for a valid job', async (t) => {
  const { sim, http } = await setup(t);
  const client = new TranscoderClient(sim.url, http);
  t.equal(client.configured, true);
  const j = job('ev/brk-1/a1/seg_990');
  const uri = await client.compose(j);
  t.equal(uri, `${sim.url}/out/ev/brk-1/a1/seg_990.ts`);
  t.equal(uri, sim.outputUri(j.output_key));
  t.equal(sim.jobs.length, 1);
  t.same(sim.jobs[0], j, 'the job is sent as is');
  t.equal(http.calls, 1);
  t.equal(
    await client.compose(job('with space/ü')),
    `${sim.url}/out/with%20space/%C3%BC.ts`,
    'keys with special characters',
  );
});

t.test('concurrent compose() calls with one output_key make one transcoder call', async (t) => {
  const { sim, http } = await setup(t, { delayMs: 60 });
  const client = new TranscoderClient(sim.url, http);
  const key = 'ev/brk-2/a1/seg_1';
  const same = Array.from({ length: 10 }, () => client.compose(job(key)));
  t.equal(new Set(same).size, 1, 'the callers share one promise');
  const other = client.compose(job('ev/brk-2/a1/seg_2'));
  const uris = await Promise.all(same);
  t.same(uris, Array(10).fill(sim.outputUri(key)));
  t.equal(await other, sim.outputUri('ev/brk-2/a1/seg_2'));
  t.equal(sim.jobsByKey.get(key), 1, 'one call for the shared key');
  t.equal(sim.jobs.length, 2);
  t.equal(http.calls, 2);
  // Once settled the key is not cached: a later call composes again.
  t.equal(await client.compose(job(key)), sim.outputUri(key));
  t.equal(sim.jobsByKey.get(key), 2, 'a later call after completion is a new job');
});

t.test("'flaky' mode: retried, then succeeds", async (t) => {
  const { sim, http } = await setup(t, { mode: 'flaky' });
  const client = new TranscoderClient(sim.url, http, { backoffMs: 5 });
  t.equal(await client.compose(job('f1')), sim.outputUri('f1'));
  t.equal(sim.jobsByKey.get('f1'), 2, '503, then 200');
  t.equal(http.calls, 2);
  const many = await Promise.all(['f2', 'f3', 'f4'].map((k) => client.compose(job(k))));
  t.same(
    many,
    ['f2', 'f3', 'f4'].map((k) => sim.outputUri(k)),
  );
  t.equal(sim.jobs.length, 8);
});

t.test("'error' mode: rejects after `attempts` calls, with backoff", async (t) => {
  const { sim, http } = await setup(t, { mode: 'error' });
  const client = new TranscoderClient(sim.url, http, { attempts: 4, backoffMs: 20 });
  const started = Date.now();
  const err = await client.compose(job('e1')).then(
    () => undefined,
    (e: unknown) => e,
  );
  const took = Date.now() - started;
  t.type(err, OutboundError);
  t.match(err, { code: 'status', status: 500 });
  t.equal(sim.jobsByKey.get('e1'), 4, 'four attempts');
  t.ok(took >= 20 + 40 + 80 - 5, `exponential backoff between attempts (${took} ms)`);
  const one = new TranscoderClient(sim.url, http, { attempts: 1 });
  await t.rejects(one.compose(job('e2')), { code: 'status', status: 500 });
  t.equal(sim.jobsByKey.get('e2'), 1, 'attempts: 1 → no retry');
  const dflt = new TranscoderClient(sim.url, http, { backoffMs: 1 });
  await t.rejects(dflt.compose(job('e3')), { code: 'status' });
  t.equal(sim.jobsByKey.get('e3'), 3, 'three attempts by default');
  // A failed key is not remembered as failed.
  sim.mode = 'ok';
  t.equal(await client.compose(job('e1')), sim.outputUri('e1'), 'the same key composes once the transcoder recovers');
});

t.test('a 4xx answer is not retried', async (t) => {
  const { sim, http } = await setup(t);
  const client = new TranscoderClient(sim.url, http, { attempts: 5, backoffMs: 1 });
  await t.rejects(client.compose(job('bad1', { content_uri: 'file:///etc/passwd' })), {
    name: 'OutboundError',
    code: 'status',
    status: 400,
  });
  t.equal(http.calls, 1, 'one request');
  await t.rejects(client.compose(job('bad2', { layout: 'pip' as 'dualbox' })), { code: 'status', status: 400 });
  await t.rejects(client.compose(job('', {})), { code: 'status', status: 400 }, 'an empty output key');
  t.equal(http.calls, 3);
  t.equal(sim.jobs.length, 0, 'the simulator accepted none');
  const notFound = new TranscoderClient(`${sim.url}/nope`, http, { attempts: 5, backoffMs: 1 });
  await t.rejects(notFound.compose(job('nf')), { code: 'status', status: 404 });
  t.equal(http.calls, 4, '404 not retried either');
});

t.test('timeouts and unusable answers are retried', async (t) => {
  const { sim, http } = await setup(t, { mode: 'slow', slowMs: 5000 });
  const client = new TranscoderClient(sim.url, http, { attempts: 2, backoffMs: 1, timeoutMs: 80 });
  const started = Date.now();
  await t.rejects(client.compose(job('slow1')), { code: 'timeout' });
  // Counted where the calls are made: with an 80 ms timeout on a loaded machine the second call can
  // be cut before the simulator has read its body and counted it (a CI run saw 1 there).
  t.equal(http.calls, 2, 'a timed-out call is retried');
  t.ok((sim.jobsByKey.get('slow1') ?? 0) >= 1, 'the simulator received the first');
  t.ok(Date.now() - started < 2000, 'does not wait for the slow answer');

  // A transcoder answering 200 without a usable output_uri.
  let hits = 0;
  const bogus = http_server((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        output_uri: hits === 1 ? 'javascript:alert(1)' : 'https://cdn.example.com/out/x.ts\r\nX-Evil: 1',
      }),
    );
  });
  const url = await bogus.listen();
  t.teardown(() => bogus.close());
  const http2 = new CountingClient(new OutboundPolicy({ allowPrivate: true, trusted: [url] }));
  t.teardown(() => http2.close());
  const c2 = new TranscoderClient(url, http2, { attempts: 2, backoffMs: 1 });
  await t.rejects(c2.compose(job('x')), { code: 'failed', message: /output_uri/ });
  t.equal(hits, 2, 'an unusable answer counts as a failed attempt');
});

function http_server(handler: http.RequestListener) {
  const server = http.createServer(handler);
  return {
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

t.test('the concurrency bound is respected', async (t) => {
  const { sim, http } = await setup(t, { delayMs: 150 });
  const client = new TranscoderClient(sim.url, http, { concurrency: 2 });
  const started = Date.now();
  const all = Promise.all(Array.from({ length: 6 }, (_, i) => client.compose(job(`c${i}`))));
  await new Promise((r) => setTimeout(r, 75));
  t.equal(sim.jobs.length, 2, 'only two jobs reached the transcoder during the first 150 ms');
  const uris = await all;
  const took = Date.now() - started;
  t.same(
    uris,
    Array.from({ length: 6 }, (_, i) => sim.outputUri(`c${i}`)),
  );
  t.equal(http.maxOpen, 2, 'never more than two requests open');
  t.ok(took >= 3 * 150 - 10, `three rounds of 150 ms (${took} ms)`);
  // Two jobs start together on two connections, so within a round the arrival order is the network's.
  const rounds = [0, 2, 4].map((i) =>
    sim.jobs
      .slice(i, i + 2)
      .map((j) => j.output_key)
      .sort(),
  );
  t.same(
    rounds,
    [
      ['c0', 'c1'],
      ['c2', 'c3'],
      ['c4', 'c5'],
    ],
    'first come, first served, round by round',
  );

  // The default bound is 8.
  const { sim: sim8, http: http8 } = await setup(t, { delayMs: 60 });
  const c8 = new TranscoderClient(sim8.url, http8);
  await Promise.all(Array.from({ length: 20 }, (_, i) => c8.compose(job(`d${i}`))));
  t.equal(http8.maxOpen, 8, 'default concurrency 8');
  t.equal(sim8.jobs.length, 20);
});

t.test('slots are released after failures', async (t) => {
  const { sim, http } = await setup(t, { mode: 'error' });
  const client = new TranscoderClient(sim.url, http, { concurrency: 1, attempts: 1 });
  const results = await Promise.allSettled([
    client.compose(job('s1')),
    client.compose(job('s2')),
    client.compose(job('s3', { ad_uri: 'nope' })),
  ]);
  t.same(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'rejected'],
  );
  sim.mode = 'ok';
  t.equal(await client.compose(job('s4')), sim.outputUri('s4'), 'the single slot is free again');
  t.equal(http.maxOpen, 1);
});

t.test('no TRANSCODER_URL: rejects at once without a request', async (t) => {
  const { http } = await setup(t);
  const client = new TranscoderClient('', http, { backoffMs: 1000, attempts: 5 });
  t.equal(client.configured, false);
  const started = Date.now();
  const err = await client.compose(job('n1')).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(err, OutboundError);
  t.match(err, { code: 'refused', message: /TRANSCODER_URL/ });
  t.ok(Date.now() - started < 200, 'no retry, no backoff');
  t.equal(http.calls, 0, 'no request sent');
  await t.rejects(Promise.all([client.compose(job('n2')), client.compose(job('n2'))]), { code: 'refused' });
  t.equal(http.calls, 0);
});
