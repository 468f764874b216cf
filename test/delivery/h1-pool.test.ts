import t from 'tap';
import net from 'node:net';
import { buildConnector } from 'undici';
import { H1_SOCKET_OPTIONS, H1Pool, H1Request, type H1Error } from '../../lib/delivery/h1-pool.js';

/** Scripted answers by request path: a list of raw writes (strings), sent with a short pause between. */
type Script = Array<string | { close: true } | { pause: number }>;

interface Raw {
  port: number;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

/** A raw TCP server that reads request heads and plays the script for each path. */
async function rawServer(scripts: Record<string, Script>): Promise<Raw> {
  const sockets = new Set<net.Socket>();
  const state = { connections: 0, requests: [] as string[] };
  const server = net.createServer((socket) => {
    const id = ++state.connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = '';
    socket.on('data', async (d) => {
      buf += d.toString('latin1');
      let end: number;
      while ((end = buf.indexOf('\r\n\r\n')) !== -1) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        state.requests.push(`#${id} ${head}`);
        const path = head.split(' ')[1]!;
        for (const step of scripts[path] ?? ['HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n']) {
          if (typeof step === 'string') socket.write(step);
          else if ('close' in step) socket.destroy();
          else await new Promise((r) => setTimeout(r, step.pause));
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return state.connections;
    },
    requests: state.requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

interface Outcome {
  status: number;
  body: string;
  err?: H1Error;
}

function get(
  pool: H1Pool,
  path: string,
  opts: { keep?: boolean; abortAfterMs?: number; deadlineMs?: number } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { status: 0, body: '' };
    // Chunks are held until the end, as the manifest fetch holds them: one overwritten by a later read would show.
    const chunks: Buffer[] = [];
    const req = new H1Request(
      `GET ${path} HTTP/1.1\r\nhost: ${pool.host}\r\n\r\n`,
      {
        status(code) {
          out.status = code;
          return opts.keep ?? true;
        },
        data(chunk) {
          chunks.push(chunk);
        },
        end: () => {
          out.body = Buffer.concat(chunks).toString('latin1');
          resolve(out);
        },
        error(err) {
          out.err = err;
          resolve(out);
        },
      },
      opts.deadlineMs === undefined ? Infinity : Date.now() + opts.deadlineMs,
    );
    pool.enqueue(req);
    if (opts.abortAfterMs !== undefined)
      setTimeout(() => {
        if (!req.done) {
          req.abort();
          out.err = { code: 'aborted' } as H1Error;
          resolve(out);
        }
      }, opts.abortAfterMs);
  });
}

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Both socket kinds: plain sockets reading into the shared buffer (production), and Node's own buffers (as TLS reads). */
const connectors = {
  'shared read buffer': () => buildConnector({ ...H1_SOCKET_OPTIONS, timeout: 1000 } as buildConnector.BuildOptions),
  "Node's buffers": () => buildConnector({ timeout: 1000 }),
};

for (const [kind, connector] of Object.entries(connectors))
  t.test(`H1Pool, ${kind}`, async (t) => {
    const srv = await rawServer({
      '/ok': [ok('#EXTM3U\nhello\n')],
      '/split': ['HTTP/1.1 200 OK\r\nconte', { pause: 5 }, 'nt-length: 10\r\n\r\n01234', { pause: 5 }, '56789'],
      '/chunked': [
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n',
        { pause: 5 },
        '5\r\npedia\r',
        { pause: 5 },
        '\n0\r\nx-trailer: 1\r\n\r\n',
      ],
      '/info': ['HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n', ok('after hints')],
      '/nocontent': ['HTTP/1.1 204 No Content\r\n\r\n'],
      '/untilclose': ['HTTP/1.1 200 OK\r\n\r\nall of it', { pause: 5 }, { close: true }],
      '/both': ['HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'],
      '/twolengths': ['HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd'],
      '/gzip': ['HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n'],
      '/garbage': ['SSH-2.0-OpenSSH\r\n\r\n'],
      '/hugehead': [`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
      '/midway': ['HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part', { pause: 5 }, { close: true }],
      '/extra': [ok('one') + 'HTTP/1.1 200 OK\r\n'],
      '/closehdr': [ok('bye', 'connection: close\r\n')],
      '/http10': ['HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nhi'],
      '/toolarge': ['HTTP/1.1 200 OK\r\ncontent-length: 999999\r\n\r\n'],
      '/toolargechunks': [
        'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n400\r\n' +
          'x'.repeat(1024) +
          '\r\n400\r\n' +
          'x'.repeat(1024) +
          '\r\n0\r\n\r\n',
      ],
      '/slow': [{ pause: 200 }, ok('late')],
      '/lf': ['HTTP/1.1 200 OK\ncontent-length: 2\n\nok'],
      '/lfbody': ['HTTP/1.1 200 OK\ncontent-length: 8\n\nab\r\n\r\ncd'],
      '/lfsplit': ['HTTP/1.1 200 OK\ncontent-', { pause: 1500 }, 'length: 0\r\n\r\n'],
      '/reads': [
        'HTTP/1.1 200 OK\r\ncontent-length: 1200\r\n\r\n' + 'a'.repeat(400),
        { pause: 5 },
        'b'.repeat(400),
        { pause: 5 },
        'c'.repeat(400),
      ],
    });
    const pool = new H1Pool(`http://127.0.0.1:${srv.port}`, {
      connect: connector(),
      connections: 4,
      maxResponseSize: 1500,
      idleMs: 60_000,
      // '/extra' below makes the pool cautious (no reuse) for this long; the later cases reuse connections.
      cautiousMs: 100,
    });
    t.teardown(async () => {
      await pool.close();
      await srv.close();
    });

    t.test('a response with a Content-Length, and the connection kept for the next request', async (t) => {
      const before = srv.connections;
      t.same(await get(pool, '/ok'), { status: 200, body: '#EXTM3U\nhello\n' });
      t.same(await get(pool, '/ok'), { status: 200, body: '#EXTM3U\nhello\n' });
      t.ok(srv.connections - before <= 1, 'one connection for both');
      t.match(srv.requests.at(-1), /^#\d+ GET \/ok HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+$/);
    });

    t.test('a head and body split across packets', async (t) => {
      t.same(await get(pool, '/split'), { status: 200, body: '0123456789' });
    });

    t.test(
      'body chunks held until the end survive the reads after them (other connections reading meanwhile)',
      async (t) => {
        const [a, b] = await Promise.all([get(pool, '/reads'), get(pool, '/reads'), get(pool, '/ok')]);
        t.same(a, { status: 200, body: 'a'.repeat(400) + 'b'.repeat(400) + 'c'.repeat(400) });
        t.same(b, a);
      },
    );

    t.test('chunked with an extension, a chunk end split in two, and a trailer (RFC 9112 §7.1)', async (t) => {
      t.same(await get(pool, '/chunked'), { status: 200, body: 'Wikipedia' });
      t.same(await get(pool, '/ok'), { status: 200, body: '#EXTM3U\nhello\n' }, 'the connection is still in step');
    });

    t.test('a 1xx is skipped; 204 has no body', async (t) => {
      t.same(await get(pool, '/info'), { status: 200, body: 'after hints' });
      t.same(await get(pool, '/nocontent'), { status: 204, body: '' });
    });

    t.test('no length: the body runs to the close', async (t) => {
      t.same(await get(pool, '/untilclose'), { status: 200, body: 'all of it' });
    });

    t.test('bare LF line ends are refused at once, as llhttp refuses them (issue 24)', async (t) => {
      t.equal((await get(pool, '/lf')).err?.code, 'protocol');
      // The earliest terminator decides: a CRLFCRLF later in the body does not make the head.
      const started = Date.now();
      t.equal((await get(pool, '/lfbody', { deadlineMs: 2000 })).err?.code, 'protocol');
      t.equal(
        (await get(pool, '/lfsplit', { deadlineMs: 2000 })).err?.code,
        'protocol',
        'a bare LF in a head still arriving',
      );
      t.ok(Date.now() - started < 1000, `refused after ${Date.now() - started} ms, not at the deadline`);
    });

    t.test('framing that could smuggle a response is refused', async (t) => {
      for (const p of ['/both', '/twolengths', '/gzip']) {
        const out = await get(pool, p);
        t.equal(out.err?.code, 'protocol', p);
      }
    });

    t.test('garbage, an oversized head, a cut-off body', async (t) => {
      t.equal((await get(pool, '/garbage')).err?.code, 'protocol');
      t.equal((await get(pool, '/hugehead')).err?.code, 'protocol');
      const cut = await get(pool, '/midway');
      t.equal(cut.err?.code, 'closed');
      t.match(cut.err?.message, /mid-response/);
    });

    t.test('the size cap, from the Content-Length and from chunks', async (t) => {
      t.equal((await get(pool, '/toolarge')).err?.code, 'too-large');
      t.equal((await get(pool, '/toolargechunks')).err?.code, 'too-large');
    });

    t.test('a connection is not reused after extra bytes, Connection: close, or HTTP/1.0', async (t) => {
      const conn = (i: number) => srv.requests.at(i)!.split(' ')[0];
      for (const p of ['/ok', '/extra', '/closehdr', '/http10']) {
        const first = await get(pool, p);
        if (p === '/extra') {
          // Bytes past the response's end in the same read: which answer was this request's is unknowable.
          t.equal(first.err?.code, 'protocol', p);
          t.match(first.err?.message, /beyond the response's framing/);
          t.ok(pool.cautious, 'the origin is suspect: no connection is reused for a while');
          const end = Date.now() + 10_000;
          while (pool.cautious && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
          t.notOk(pool.cautious);
        } else {
          t.equal(first.status, 200, p);
          t.notOk(first.err, p);
        }
        await get(pool, '/ok');
        // Idle connections are taken last-in first-out: the one that just answered is next, if it was kept.
        if (p === '/ok') t.equal(conn(-1), conn(-2), 'a clean response keeps its connection');
        else t.not(conn(-1), conn(-2), `${p}: the next request goes on another connection`);
      }
    });

    t.test('a dropped body is still read to its end', async (t) => {
      t.same(await get(pool, '/ok', { keep: false }), { status: 200, body: '' });
      t.same(await get(pool, '/ok'), { status: 200, body: '#EXTM3U\nhello\n' });
    });

    t.test('no more connections than allowed; the rest wait their turn', async (t) => {
      const before = srv.connections;
      const outs = await Promise.all(Array.from({ length: 12 }, () => get(pool, '/slow')));
      t.ok(outs.every((o) => o.body === 'late'));
      t.ok(srv.connections - before <= 4, `${srv.connections - before} new connections`);
    });

    t.test('the deadline ends a request on a connection and one still queued, within the sweep interval', async (t) => {
      const started = Date.now();
      // The bound is the deadline plus one sweep (50 ms) and some slack, on this process's clock: a timer
      // set for deadline + sweep fires as late as a busy machine makes every timer, the sweep's too.
      const reference = new Promise<number>((r) => setTimeout(() => r(Date.now()), 80 + 50));
      const outs = await Promise.all(Array.from({ length: 6 }, () => get(pool, '/slow', { deadlineMs: 80 })));
      const ended = Date.now();
      t.same(
        outs.map((o) => o.err?.code),
        Array(6).fill('timeout'),
      );
      const bound = Math.max(started + 190, (await reference) + 60);
      t.ok(ended < bound, `ended after ${ended - started} ms (bound ${bound - started} ms)`);
      t.same(await get(pool, '/ok'), { status: 200, body: '#EXTM3U\nhello\n' }, 'the pool still answers');
    });

    t.test('an aborted request closes its connection; a queued one is skipped', async (t) => {
      const aborted = await get(pool, '/slow', { abortAfterMs: 20 });
      t.equal(aborted.err?.code, 'aborted');
      t.same(await get(pool, '/ok'), { status: 200, body: '#EXTM3U\nhello\n' });
    });
  });

t.test('a keep-alive connection the server closed while idle: the GET is sent again on a new one', async (t) => {
  const srv = await rawServer({ '/once': [ok('fresh'), { pause: 20 }, { close: true }] });
  const pool = new H1Pool(`http://127.0.0.1:${srv.port}`, {
    connect: buildConnector({ timeout: 1000 }),
    connections: 1,
    maxResponseSize: 1 << 20,
    idleMs: 60_000,
  });
  t.teardown(async () => {
    await pool.close();
    await srv.close();
  });
  t.same(await get(pool, '/once'), { status: 200, body: 'fresh' });
  await new Promise((r) => setTimeout(r, 60)); // the server has closed it by now
  t.same(await get(pool, '/once'), { status: 200, body: 'fresh' });
  t.equal(srv.connections, 2);
});

t.test('idle connections are closed after idleMs; a refused connect is an error', async (t) => {
  const srv = await rawServer({ '/ok': [ok('x')] });
  const pool = new H1Pool(`http://127.0.0.1:${srv.port}`, {
    connect: buildConnector({ timeout: 1000 }),
    connections: 2,
    maxResponseSize: 1 << 20,
    idleMs: 100,
  });
  t.same(await get(pool, '/ok'), { status: 200, body: 'x' });
  await new Promise((r) => setTimeout(r, 400));
  t.same(await get(pool, '/ok'), { status: 200, body: 'x' });
  t.equal(srv.connections, 2, 'the idle connection was closed and a new one dialled');
  await pool.close();
  await srv.close();
  const dead = new H1Pool(`http://127.0.0.1:${srv.port}`, {
    connect: buildConnector({ timeout: 1000 }),
    connections: 2,
    maxResponseSize: 1 << 20,
    idleMs: 100,
  });
  t.equal((await get(dead, '/ok')).err?.code, 'connect');
  await dead.close();
  t.equal((await get(dead, '/ok')).err?.code, 'aborted', 'a closed pool refuses at once');
});
