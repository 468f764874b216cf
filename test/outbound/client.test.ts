/** OutboundClient.exchange: any method, the status and text whatever the status, and the policy still checked. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { OutboundClient, OutboundError, OutboundPolicy } from '../../lib/outbound/index.js';

t.test('exchange', async (t) => {
  const seen: Array<{ method: string; auth: string; body: string }> = [];
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method!, auth: req.headers.authorization ?? '', body });
      if (req.url === '/conflict')
        return void res.writeHead(409, { 'content-type': 'application/problem+json' }).end('{"status":409}');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const trusted = new OutboundClient(new OutboundPolicy({ allowPrivate: false, trusted: [base] }), { timeoutMs: 2000 });
  const untrusted = new OutboundClient(new OutboundPolicy({ allowPrivate: false, trusted: [] }), { timeoutMs: 2000 });
  t.teardown(async () => {
    await trusted.close();
    await untrusted.close();
    s.closeAllConnections();
    s.close();
  });

  t.same(
    await trusted.exchange('PUT', `${base}/x`, AbortSignal.timeout(2000), {
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{"a":1}',
    }),
    {
      status: 200,
      text: '{"ok":true}',
    },
  );
  t.same(seen.at(-1), { method: 'PUT', auth: 'Bearer k', body: '{"a":1}' });
  t.same(
    await trusted.exchange('GET', `${base}/conflict`, AbortSignal.timeout(2000)),
    { status: 409, text: '{"status":409}' },
    'a 4xx is answered, not thrown',
  );
  const refused = await untrusted.exchange('GET', `${base}/x`, AbortSignal.timeout(2000)).catch((e: unknown) => e);
  t.ok(
    refused instanceof OutboundError && refused.code === 'refused',
    'a loopback host that is not trusted is refused',
  );
  t.equal(seen.length, 2, 'the refused call never reached the server');
});

t.test(
  'bytes: a body declared over the cap is refused at its headers, one without a length cut at the cap',
  async (t) => {
    const CAP = 64 * 1024;
    const s = http.createServer((req, res) => {
      req.resume();
      const body = Buffer.alloc(CAP * 4);
      if (req.url === '/declared') return void res.writeHead(200, { 'content-length': String(body.length) }).end(body);
      // write then end: no Content-Length (a single end(body) would add one).
      if (req.url === '/chunked') return void res.writeHead(200).write(body, () => res.end());
      res.writeHead(200).end(Buffer.alloc(CAP));
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const client = new OutboundClient(new OutboundPolicy({ allowPrivate: false, trusted: [base] }), {
      timeoutMs: 2000,
      maxResponseSize: CAP,
    });
    t.teardown(async () => {
      await client.close();
      s.closeAllConnections();
      s.close();
    });
    const declared = await client.bytes(`${base}/declared`, AbortSignal.timeout(2000)).catch((e: unknown) => e);
    t.match(declared, { code: 'too-large', declaredBytes: CAP * 4 }, 'refused with the declared length');
    const chunked = await client.bytes(`${base}/chunked`, AbortSignal.timeout(2000)).catch((e: unknown) => e);
    t.ok(chunked instanceof OutboundError && chunked.code === 'too-large', 'cut at the cap');
    t.equal((chunked as { declaredBytes?: number }).declaredBytes, undefined, 'no length was declared');
    t.equal((await client.bytes(`${base}/exact`, AbortSignal.timeout(2000))).length, CAP, 'a body of the cap passes');
  },
);
