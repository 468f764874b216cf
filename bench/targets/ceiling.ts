/**
 * Benchmark target (a): raw uWS answering every request with the same rewritten bytes from memory.
 * `--gzip` (issue 27): the same bytes gzipped once, answered with the headers the service sends. Prints "READY <port>".
 */
import zlib from 'node:zlib';
import { request } from 'undici';
import { loadUws } from '../../lib/http/uws.js';
import { ours } from '../micro.js';

const simUrl = process.argv[2]!;
const gzip = process.argv.includes('--gzip');
const path =
  process.argv.slice(3).find((a) => a.startsWith('/')) ?? '/linear/hls/pa/event/BENCH/stream/s0:LOC/variant/720p.m3u8';
const upstream = await request(simUrl + path);
const plain = Buffer.from(ours(await upstream.body.text()));
const body = gzip ? zlib.gzipSync(plain, { level: 6 }) : plain;
const uws = loadUws();
uws
  .App()
  .any('/*', (res) => {
    res.cork(() => {
      res
        .writeStatus('200 OK')
        .writeHeader('Content-Type', 'application/vnd.apple.mpegurl')
        .writeHeader('Cache-Control', 'public, max-age=3');
      if (gzip)
        res
          .writeHeader('Content-Encoding', 'gzip')
          .writeHeader('ETag', '"AAAAAAAAAAAAAAAAAAAAAA-gz"')
          .writeHeader('Vary', 'Accept-Encoding');
      res.end(body);
    });
  })
  .listen('127.0.0.1', 0, (s) => {
    if (!s) process.exit(1);
    process.stdout.write(`READY ${uws.us_socket_local_port(s)}\n`);
  });
process.on('SIGTERM', () => process.exit(0));
