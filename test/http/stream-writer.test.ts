/** The streaming writer honours backpressure: a slow reader gets every byte, in order, and the producer waits for it. */
import t from 'tap';
import net from 'node:net';
import { loadUws } from '../../lib/http/uws.js';
import { Exchange } from '../../lib/http/exchange.js';
import { StreamWriter, sendSized } from '../../lib/http/stream-writer.js';

const uws = loadUws();
const CHUNK = 64 * 1024;
const CHUNKS = 256; // 16 MiB: far beyond any socket buffer

function slowRead(port: number, path: string): Promise<{ head: string; bodyBytes: number; ok: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    s.on('connect', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    s.on('data', (d) => {
      parts.push(d);
      s.pause();
      setTimeout(() => s.resume(), 1); // a slow client
    });
    s.on('close', () => {
      const all = Buffer.concat(parts);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString();
      let body: Buffer = all.subarray(split + 4);
      if (/transfer-encoding: chunked/i.test(head)) body = dechunk(body);
      let ok = body.length === CHUNK * CHUNKS;
      for (let i = 0; ok && i < CHUNKS; i++) ok = body[i * CHUNK] === i % 251;
      resolve({ head, bodyBytes: body.length, ok });
    });
  });
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    const size = parseInt(buf.subarray(pos, eol).toString(), 16);
    if (!size) break;
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

const block = (i: number) => Buffer.alloc(CHUNK, i % 251);

t.test('StreamWriter and sendSized under backpressure', async (t) => {
  let waits = 0;
  const app = uws.App();
  app.get('/stream', (res) => {
    const ex = new Exchange(res, false);
    const w = new StreamWriter(ex);
    w.begin(200, { 'Content-Type': 'application/octet-stream' });
    void (async () => {
      for (let i = 0; i < CHUNKS; i++) {
        const before = performance.now();
        await w.write(block(i));
        if (performance.now() - before > 0.5) waits++;
      }
      w.end();
    })();
  });
  app.get('/sized', (res) => {
    const ex = new Exchange(res, false);
    void sendSized(
      ex,
      200,
      { 'Content-Type': 'application/octet-stream' },
      Buffer.concat(Array.from({ length: CHUNKS }, (_, i) => block(i))),
    );
  });
  app.get('/sized-view', (res) => {
    const ex = new Exchange(res, false);
    const backing = Buffer.concat([Buffer.alloc(16), ...Array.from({ length: CHUNKS }, (_, i) => block(i))]);
    const waiting = !sendSized(ex, 200, { 'Content-Type': 'application/octet-stream' }, backing.subarray(16));
    t.ok(waiting, 'the view had to wait for the socket');
    backing.fill(0); // the shared buffer is reused at once (lib/delivery/body-slab.ts)
  });
  const socket = await new Promise<NonNullable<Parameters<Parameters<typeof app.listen>[2]>[0]>>((resolve) =>
    app.listen('127.0.0.1', 0, (s) => resolve(s as never)),
  );
  const port = uws.us_socket_local_port(socket);
  t.teardown(() => uws.us_listen_socket_close(socket));

  const streamed = await slowRead(port, '/stream');
  t.ok(streamed.ok, `streamed ${streamed.bodyBytes} bytes intact`);
  t.ok(waits > 0, `the producer waited for the socket ${waits} times`);
  const sized = await slowRead(port, '/sized');
  t.ok(sized.ok, `sized body ${sized.bodyBytes} bytes intact`);
  t.match(sized.head, new RegExp(`content-length: ${CHUNK * CHUNKS}`, 'i'));
  const view = await slowRead(port, '/sized-view');
  t.ok(
    view.ok,
    `a body viewing a shared buffer arrives intact (${view.bodyBytes} bytes) although the buffer was reused`,
  );
});
