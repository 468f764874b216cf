import t from 'tap';
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { buildConnector } from 'undici';
import type { AddressInfo } from 'node:net';
import { Upstream, UpstreamError, type UpstreamSink } from '../../lib/delivery/upstream.js';

interface Outcome {
  status: number;
  body: string;
  err?: UpstreamError;
  calls: string[];
}

/** Runs one GET and collects what the sink saw. */
function fetchVia(upstream: Upstream, path: string, keepBody = true, query = ''): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { status: 0, body: '', calls: [] };
    const sink: UpstreamSink = {
      start(status) {
        out.calls.push('start');
        out.status = status;
        return keepBody;
      },
      data(chunk) {
        out.body += chunk.toString('utf8');
      },
      end(status) {
        out.calls.push('end');
        out.status = status;
        resolve(out);
      },
      error(err) {
        out.calls.push('error');
        out.err = err;
        resolve(out);
      },
    };
    upstream.get(path, { accept: '*/*' }, sink, '', query);
  });
}

t.test('Upstream', async (t) => {
  const big = 'x'.repeat(64 * 1024);
  const server = http.createServer((req, res) => {
    if (req.url === '/ok?q=1')
      return res.writeHead(200, { 'content-type': 'text/plain' }).end(`#EXTM3U\n${req.headers['accept']}\n`);
    if (req.url === '/chunked') {
      res.writeHead(200);
      res.write('one,');
      setTimeout(() => res.end('two'), 20);
      return;
    }
    if (req.url === '/missing') return res.writeHead(404).end('nope');
    if (req.url === '/big') return res.writeHead(200).end(big);
    if (req.url === '/slow') return; // never answers
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const upstream = new Upstream(origin, { deadlineMs: 300, maxResponseSize: 16 * 1024 });
  t.teardown(async () => {
    await upstream.close();
    server.closeAllConnections();
    server.close();
  });

  t.test('streams the body with its status and the request headers sent', async (t) => {
    const out = await fetchVia(upstream, '/ok?q=1');
    t.equal(out.status, 200);
    t.equal(out.body, '#EXTM3U\n*/*\n');
    t.same(out.calls, ['start', 'end']);
  });

  t.test('a query given apart is sent after the path; what a request line cannot carry is refused', async (t) => {
    const out = await fetchVia(upstream, '/ok', true, 'q=1');
    t.equal(out.status, 200);
    t.equal(out.body, '#EXTM3U\n*/*\n');
    // '/ok' is now remembered as a checked path: its query is still checked on every request.
    for (const [path, query] of [
      ['/ok', 'q=1 HTTP/1.1\r\nhost: evil'],
      ['/ok', 'q=\u00e9'],
      ['/ok', 'q=1\n'],
      ['/ok\r\nx: y', ''],
      ['/ok x', 'q=1'],
      ['ok', 'q=1'],
      ['', ''],
    ] as const) {
      const bad = await fetchVia(upstream, path, true, query);
      t.equal(bad.err?.code, 'failed', JSON.stringify([path, query]));
      t.same(bad.calls, ['error']);
    }
  });

  t.test('a body in several chunks arrives whole', async (t) => {
    const out = await fetchVia(upstream, '/chunked');
    t.equal(out.body, 'one,two');
  });

  t.test('a 4xx ends normally with its status; a discarded body is still consumed', async (t) => {
    const out = await fetchVia(upstream, '/missing', false);
    t.equal(out.status, 404);
    t.equal(out.body, '');
    t.same(out.calls, ['start', 'end']);
    const again = await fetchVia(upstream, '/ok?q=1');
    t.equal(again.status, 200, 'the connection is usable afterwards');
  });

  t.test('the overall deadline ends a request that never answers', async (t) => {
    const started = Date.now();
    const out = await fetchVia(upstream, '/slow');
    t.equal(out.err?.code, 'timeout');
    t.ok(Date.now() - started < 1000, 'within the deadline, not a socket timeout');
    t.same(out.calls, ['error'], 'error once, no end');
  });

  t.test('a response over the size cap is an error', async (t) => {
    const out = await fetchVia(upstream, '/big');
    t.equal(out.err?.code, 'too-large');
    t.same(
      out.calls.filter((c) => c !== 'start'),
      ['error'],
    );
  });

  t.test('a refused connection is a failure, not a hang', async (t) => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const down = new Upstream(`http://127.0.0.1:${port}`, { deadlineMs: 1000 });
    const out = await fetchVia(down, '/ok');
    await down.close();
    t.equal(out.err?.code, 'failed');
  });
});

t.test('Upstream over TLS: a keep-alive https origin (the default DAI host is https)', async (t) => {
  const tlsDir = new URL('../fixtures/tls/', import.meta.url);
  const server = https.createServer(
    { key: readFileSync(new URL('localhost.key', tlsDir)), cert: readFileSync(new URL('localhost.crt', tlsDir)) },
    (req, res) => {
      if (req.url === '/big') return res.writeHead(200).end('y'.repeat(100_000)); // several TLS records and reads
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end(`#EXTM3U\n#${req.url}\n`);
    },
  );
  let connections = 0;
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const upstream = new Upstream(origin, {
    deadlineMs: 2000,
    connect: buildConnector({
      ...Upstream.socketOptions,
      timeout: 1000,
      ca: readFileSync(new URL('localhost.crt', tlsDir)),
    } as buildConnector.BuildOptions),
  });
  t.teardown(async () => {
    await upstream.close();
    server.closeAllConnections();
    server.close();
  });
  t.equal((await fetchVia(upstream, '/a?x=1')).body, '#EXTM3U\n#/a?x=1\n');
  t.equal((await fetchVia(upstream, '/b')).body, '#EXTM3U\n#/b\n');
  t.equal(connections, 1, 'one TLS connection for both');
  const big = await fetchVia(upstream, '/big');
  t.equal(big.body.length, 100_000);
  t.ok(/^y+$/.test(big.body), 'every chunk intact');
});
