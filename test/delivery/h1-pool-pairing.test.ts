/**
 * Strict request/response pairing in the lean upstream client (issue 24, deliverable 5). The
 * upstream is a real TCP server that answers each `GET /v/<id>` with a body naming <id>, and
 * sometimes sends a stray response besides: a copy of the previous viewer's answer, the way a
 * confused proxy repeats one. Before the fix a request in flight took the stray as its answer (a
 * viewer got another viewer's manifest); now the request a stray arrives with fails, the
 * connection is closed, and no answer ever reaches a request it does not name.
 */
import t from 'tap';
import net from 'node:net';
import { EventEmitter, once } from 'node:events';
import { buildConnector } from 'undici';
import { H1_SOCKET_OPTIONS, H1Pool, H1Request, type H1Error } from '../../lib/delivery/h1-pool.js';

/**
 * How a stray goes out with an answer: `tail` after it in the same write (the answer's own
 * request was in flight), `lead` before it in the same write, `lead2` before it in a write of its
 * own (a late response that arrives while a newer request is in flight), `idle` some time after
 * the answer, on a connection nobody is using, `late` before it on its own and the answer some
 * time later (two reads: the stray alone looks like the answer; none on a connection's first request).
 */
type Stray = 'none' | 'tail' | 'lead' | 'lead2' | 'idle' | 'late';

interface Upstream {
  port: number;
  /** Connection number → the request ids it carried, in order. */
  readonly byConn: Map<number, string[]>;
  /** Request id → the stray sent along with its answer (not `none`). */
  readonly strays: Map<string, Stray>;
  /** Requests that arrived on a connection after a stray went out on it (none must). */
  afterStray: number;
  /** Connections the client closed. */
  closed: number;
  readonly events: EventEmitter;
  close(): Promise<void>;
}

const answer = (id: string, chunked: boolean) => {
  const body = `#EXTM3U\n# viewer ${id}\n${'#EXTINF:6,\nseg.ts\n'.repeat(1 + (id.length % 4))}`;
  if (!chunked)
    return `HTTP/1.1 200 OK\r\ncontent-type: application/vnd.apple.mpegurl\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const half = body.length >> 1;
  const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
  return `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunk(body.slice(0, half))}${chunk(body.slice(half))}0\r\n\r\n`;
};

/** The server decides each answer's stray with choose(id); it reads request heads as they come. */
async function upstream(choose: (id: string) => Stray, idleStrayMs = 20): Promise<Upstream> {
  const sockets = new Set<net.Socket>();
  const events = new EventEmitter();
  let conns = 0;
  const up: Upstream = {
    port: 0,
    byConn: new Map(),
    strays: new Map(),
    afterStray: 0,
    closed: 0,
    events,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  // No Nagle delay, as nginx (tcp_nodelay) and Node's http server send: a stray and an answer
  // written back to back leave together (see docs/decisions.md, issue 24, for a stray that comes later).
  const server = net.createServer({ noDelay: true }, (socket) => {
    const conn = ++conns;
    const ids: string[] = [];
    up.byConn.set(conn, ids);
    sockets.add(socket);
    let strayed = false;
    let buf = '';
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      up.closed++;
      events.emit('closed', conn);
    });
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end !== -1; end = buf.indexOf('\r\n\r\n')) {
        const id = /^GET \/v\/(\S+) /.exec(buf)?.[1] ?? '?';
        buf = buf.slice(end + 4);
        if (strayed) up.afterStray++;
        const previous = ids.at(-1) ?? 'nobody';
        ids.push(id);
        const stray = choose(id);
        const chunked = id.endsWith('3');
        const real = answer(id, chunked);
        const old = answer(previous, !chunked);
        if (stray !== 'none') {
          up.strays.set(id, stray);
          strayed = true;
        }
        if (stray === 'tail') socket.write(real + old);
        else if (stray === 'lead') socket.write(old + real);
        else if (stray === 'lead2') {
          socket.write(old);
          socket.write(real);
        } else if (stray === 'late') {
          if (ids.length > 1) socket.write(old);
          setTimeout(() => socket.writable && socket.write(real), idleStrayMs);
        } else {
          socket.write(real);
          if (stray === 'idle') setTimeout(() => socket.writable && socket.write(old), idleStrayMs);
        }
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  up.port = (server.address() as net.AddressInfo).port;
  return up;
}

interface Outcome {
  id: string;
  body?: string;
  err?: H1Error;
}

function get(pool: H1Pool, id: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    pool.enqueue(
      new H1Request(
        `GET /v/${id} HTTP/1.1\r\nhost: ${pool.host}\r\n\r\n`,
        {
          status: () => true,
          data: (c) => chunks.push(Buffer.from(c)),
          end: () => resolve({ id, body: Buffer.concat(chunks).toString('latin1') }),
          error: (err) => resolve({ id, err }),
        },
        Date.now() + 10_000,
      ),
    );
  });
}

/** The viewer an answer names. */
const named = (body: string) => /# viewer (\S+)/.exec(body)?.[1];

const connectors = {
  'shared read buffer': () => buildConnector({ ...H1_SOCKET_OPTIONS, timeout: 2000 } as buildConnector.BuildOptions),
  "Node's buffers": () => buildConnector({ timeout: 2000 }),
};

for (const [kind, connector] of Object.entries(connectors)) {
  t.test(`${kind}: a stray response sent before a newer request's answer fails that request only`, async (t) => {
    // Viewer 2's request is in flight when the upstream repeats viewer 1's answer, then answers 2.
    const up = await upstream((id) => (id === '2' ? 'lead' : 'none'));
    const pool = new H1Pool(`http://127.0.0.1:${up.port}`, {
      connect: connector(),
      connections: 1,
      maxResponseSize: 1 << 20,
      idleMs: 60_000,
    });
    t.teardown(async () => {
      await pool.close();
      await up.close();
    });
    const one = await get(pool, '1');
    t.equal(named(one.body ?? ''), '1');
    const two = await get(pool, '2');
    t.equal(two.err?.code, 'protocol', "viewer 2 is not given viewer 1's manifest");
    t.notOk(two.body, 'no body reached viewer 2');
    const three = await get(pool, '3');
    t.equal(named(three.body ?? ''), '3', 'the next request is answered with its own manifest');
    t.same([...up.byConn.values()], [['1', '2'], ['3']], 'on a fresh connection');
    t.equal(up.afterStray, 0);
  });

  t.test(`${kind}: a stray response on an idle connection fails nobody and closes it`, async (t) => {
    const up = await upstream((id) => (id === '1' ? 'idle' : 'none'));
    const pool = new H1Pool(`http://127.0.0.1:${up.port}`, {
      connect: connector(),
      connections: 1,
      maxResponseSize: 1 << 20,
      idleMs: 60_000,
    });
    t.teardown(async () => {
      await pool.close();
      await up.close();
    });
    t.equal(named((await get(pool, '1')).body ?? ''), '1');
    // The client closes the connection when the stray arrives (the server sees the close).
    await once(up.events, 'closed');
    t.equal(named((await get(pool, '2')).body ?? ''), '2');
    t.same([...up.byConn.values()], [['1'], ['2']], 'the next request went on a fresh connection');
  });

  t.test(`${kind}: once caught sending a stray, the origin's connections are not reused for a while`, async (t) => {
    const up = await upstream((id) => (id === '2' || id === '4' ? 'late' : 'none'));
    const pool = new H1Pool(`http://127.0.0.1:${up.port}`, {
      connect: connector(),
      connections: 1,
      maxResponseSize: 1 << 20,
      idleMs: 60_000,
      cautiousMs: 300,
    });
    t.teardown(async () => {
      await pool.close();
      await up.close();
    });
    t.equal(named((await get(pool, '1')).body ?? ''), '1');
    // The window HTTP/1.1 leaves (docs/decisions.md): a stray alone after the request went out is its answer.
    t.equal(named((await get(pool, '2')).body ?? ''), '1', 'before any catch, a lone late stray is taken (the window)');
    // 2's real answer then comes with no request in flight: caught, the connection closed, the pool cautious.
    await once(up.events, 'closed');
    t.ok(pool.cautious, 'the pool is cautious');
    t.equal(pool.suspicions, 1);
    for (const id of ['3', '4', '5']) t.equal(named((await get(pool, id)).body ?? ''), id, `${id}: its own answer`);
    t.same(
      [...up.byConn.values()],
      [['1', '2'], ['3'], ['4'], ['5']],
      'while cautious, one request per connection: no earlier answer can come on a later request',
    );
    const end = Date.now() + 10_000;
    while (pool.cautious && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    t.notOk(pool.cautious, 'cautious for cautiousMs only');
    for (const id of ['6', '7']) t.equal(named((await get(pool, id)).body ?? ''), id);
    t.same([...up.byConn.values()].at(-1), ['6', '7'], 'then connections are reused again');
  });

  t.test(`${kind}: under load with random strays, no answer reaches a request it does not name`, async (t) => {
    // A seeded generator: a failure replays (the seed is in the assertion messages).
    const seed = 0x2400 + kind.length;
    let state = seed;
    const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const kinds: Stray[] = ['tail', 'lead', 'lead2'];
    const up = await upstream((id) =>
      id.startsWith('w') || random() >= 0.03 ? 'none' : kinds[Math.floor(random() * kinds.length)]!,
    );
    const pool = new H1Pool(`http://127.0.0.1:${up.port}`, {
      connect: connector(),
      connections: 8,
      maxResponseSize: 1 << 20,
      idleMs: 60_000,
    });
    t.teardown(async () => {
      await pool.close();
      await up.close();
    });
    const total = 4000;
    const outcomes: Outcome[] = [];
    let next = 0;
    // 32 viewers at a time, each asking again as soon as it is answered: connections are reused at once.
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < total) outcomes.push(await get(pool, String(next++)));
      }),
    );
    const mismatched = outcomes.filter((o) => o.body !== undefined && named(o.body) !== o.id);
    const failed = outcomes.filter((o) => o.err);
    const strayed = [...up.strays.keys()];
    t.equal(outcomes.length, total);
    t.ok(strayed.length >= 50, `${strayed.length} strays injected (seed ${seed})`);
    for (const o of mismatched.slice(0, 5))
      t.comment(
        `${o.id} got ${named(o.body!)}'s answer; strays with ${o.id}: ${up.strays.get(o.id)}, with ${named(o.body!)}: ${up.strays.get(named(o.body!)!)}`,
      );
    t.equal(
      mismatched.length,
      0,
      `no answer went to the wrong viewer (seed ${seed}): ${mismatched.slice(0, 3).map((o) => `${o.id}←${named(o.body!)}`)}`,
    );
    t.ok(
      failed.every((o) => o.err!.code === 'protocol' && up.strays.has(o.id)),
      'only a request a stray arrived with failed',
    );
    t.equal(failed.length, strayed.length, 'each stray failed the one request it came with');
    t.equal(up.afterStray, 0, 'no request was sent on a connection after a stray came on it');
    t.equal(
      outcomes.length - failed.length - mismatched.length,
      total - strayed.length,
      'every other viewer got its own answer',
    );
  });
}
