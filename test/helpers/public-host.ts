/**
 * A host with public addresses (11.0.0.2 and 2a00:5:0:1::2) in a network namespace of the test's
 * own, joined to this machine by a veth pair: the only way to show that a fetch to a public
 * address is still made while private outbound is off, without sending anything off the machine.
 * Needs root and iproute2 (CI has both); elsewhere the tests that use it are skipped, with CI=true
 * that is a failure.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { inCI } from './services.js';

export const PUBLIC_V4 = '11.0.0.2';
export const PUBLIC_V6 = '2a00:5:0:1::2';

export interface PublicHost {
  port: number;
  v4: string;
  v6: string;
  /** Paths requested so far, in order. */
  hits(): Promise<string[]>;
}

/** The server inside the namespace: fixed answers per path, and /__hits for the record. */
const SERVER = `
const http = require('node:http');
const hits = [];
const rss = '<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>pub</title>' +
  '<item><guid>pub-1</guid><title>One</title><media:content url="https://cdn.example.com/1.m3u8" type="application/x-mpegURL" duration="60"/></item>' +
  '<item><guid>pub-2</guid><title>Two</title><media:content url="https://cdn.example.com/2.m3u8" type="application/x-mpegURL" duration="60"/></item>' +
  '</channel></rss>';
const vast = '<VAST version="4.0"><Ad id="pub"><InLine><AdSystem>pub</AdSystem><AdTitle>pub</AdTitle><Impression><![CDATA[http://${PUBLIC_V4}:PORT/track?ev=impression]]></Impression>' +
  '<Creatives><Creative id="c1"><Linear><Duration>00:00:10.000</Duration><MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="1280" height="720" bitrate="1000"><![CDATA[http://${PUBLIC_V4}:PORT/ad.mp4]]></MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>';
const server = http.createServer((req, res) => {
  if (req.url === '/__hits') return res.end(JSON.stringify(hits));
  hits.push(req.url);
  const port = server.address().port;
  if (req.url.startsWith('/feed')) return res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rss);
  if (req.url.startsWith('/vast')) return res.writeHead(200, { 'content-type': 'application/xml' }).end(vast.replace(/PORT/g, port));
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
});
server.listen(0, '::', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

/** Starts the public host for t, or returns undefined after skipping (failing in CI) when it cannot. */
export async function publicHost(t: Test): Promise<PublicHost | undefined> {
  const why =
    process.getuid?.() !== 0
      ? 'network namespaces need root'
      : commandMissing('ip')
        ? 'iproute2 (ip) is not installed'
        : null;
  if (why) {
    if (inCI) t.fail(why);
    else t.test(`public host: ${why}`, { skip: why }, () => undefined);
    return undefined;
  }
  const id = randomBytes(3).toString('hex');
  const ns = `sqzpub${id}`;
  const outer = `vq${id}`;
  const inner = `vqp${id}`;
  ip('netns', 'add', ns);
  const running: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of running) c.kill('SIGKILL');
    try {
      ip('netns', 'del', ns); // removes the veth pair with it
    } catch {}
  });
  ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
  ip('link', 'set', inner, 'netns', ns);
  ip('addr', 'add', '11.0.0.1/30', 'dev', outer);
  ip('-6', 'addr', 'add', '2a00:5:0:1::1/64', 'dev', outer, 'nodad');
  ip('link', 'set', outer, 'up');
  ip('-n', ns, 'addr', 'add', `${PUBLIC_V4}/30`, 'dev', inner);
  ip('-n', ns, '-6', 'addr', 'add', `${PUBLIC_V6}/64`, 'dev', inner, 'nodad');
  ip('-n', ns, 'link', 'set', inner, 'up');
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', SERVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.push(child);
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the public host exited (${code})`)));
  });
  const hits = async () => {
    const res = await fetch(`http://${PUBLIC_V4}:${port}/__hits`);
    return (await res.json()) as string[];
  };
  return { port, v4: `http://${PUBLIC_V4}:${port}`, v6: `http://[${PUBLIC_V6}]:${port}`, hits };
}

function commandMissing(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'pipe' });
    return false;
  } catch {
    return true;
  }
}
