/**
 * Benchmark target (e): what a typical Node implementation looks like: node:http, an undici
 * `Pool` of 64 connections to the upstream, `body.text()`, hls-parser parse → absolute URIs →
 * live window → stringify. Prints "READY <port>".
 */
import http from 'node:http';
import { Pool } from 'undici';
import { typical } from '../micro.js';

const upstream = new Pool(process.argv[2]!, { connections: 64 });
const server = http.createServer((req, res) => {
  const upstreamPath = (req.url ?? '/').replace(/^\/dai\/manifest/, '');
  upstream
    .request({ path: upstreamPath, method: 'GET' })
    .then(async (r) => {
      const text = await r.body.text();
      const out = typical(text);
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl', 'cache-control': 'public, max-age=3' });
      res.end(out);
    })
    .catch((err: Error) => {
      res.writeHead(502);
      res.end(err.message);
    });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${(server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => process.exit(0));
