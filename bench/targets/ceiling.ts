/** Benchmark target (a): raw uWS answering every request with the same rewritten bytes from memory. Prints "READY <port>". */
import { request } from 'undici';
import { loadUws } from '../../lib/http/uws.js';
import { ours } from '../micro.js';

const simUrl = process.argv[2]!;
const path = process.argv[3] ?? '/linear/hls/pa/event/BENCH/stream/s0:LOC/variant/720p.m3u8';
const upstream = await request(simUrl + path);
const body = Buffer.from(ours(await upstream.body.text()));
const uws = loadUws();
uws
  .App()
  .any('/*', (res) => {
    res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/vnd.apple.mpegurl').writeHeader('Cache-Control', 'public, max-age=3').end(body));
  })
  .listen('127.0.0.1', 0, (s) => {
    if (!s) process.exit(1);
    process.stdout.write(`READY ${uws.us_socket_local_port(s)}\n`);
  });
process.on('SIGTERM', () => process.exit(0));
