/** nginx for the bench: a static upstream (the rig's) and `proxy_pass` + `sub_filter` (the alternative a CDN team would try first). */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { hasCommand } from './load.js';
import { freePort, waitForPort, type Target } from './procs.js';

export async function startNginx(
  work: string,
  name: string,
  body: (port: number) => string,
  cpu: string | undefined,
): Promise<Target> {
  const port = await freePort();
  const prefix = path.join(work, name);
  const conf = `${prefix}.conf`;
  writeFileSync(
    conf,
    `worker_processes 1; daemon off; master_process on; pid ${prefix}.pid; error_log ${prefix}-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}-b; proxy_temp_path ${prefix}-p; fastcgi_temp_path ${prefix}-f; uwsgi_temp_path ${prefix}-u; scgi_temp_path ${prefix}-s;
${body(port)}
}
`,
  );
  const args = ['-c', conf, '-p', work];
  const child = cpu
    ? spawn('taskset', ['-c', cpu, 'nginx', ...args], { stdio: 'ignore' })
    : spawn('nginx', args, { stdio: 'ignore' });
  return { child, port: waitForPort(port, 5000).then(() => port) };
}

/**
 * gzip as an nginx operator would turn it on for playlists (issue 27): level 1, the same 1 KB
 * threshold as the service's COMPRESS_MIN_BYTES default, Vary, proxied answers included.
 */
const GZIP = `gzip on; gzip_comp_level 1; gzip_min_length 1024; gzip_vary on; gzip_proxied any; gzip_types application/vnd.apple.mpegurl application/dash+xml;`;

/** nginx proxy_pass + sub_filter in front of an upstream on 127.0.0.1:upstreamPort (`gzip`: with gzip on); undefined when nginx is not installed. */
export async function nginxProxy(
  work: string,
  upstreamPort: number,
  cpu: string | undefined,
  opts: { gzip?: boolean } = {},
): Promise<Target | undefined> {
  if (!hasCommand('nginx')) return undefined;
  return startNginx(
    work,
    `proxy-${upstreamPort}${opts.gzip ? '-gzip' : ''}`,
    (port) => `  upstream up { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    ${opts.gzip ? GZIP : ''}
    location /dai/manifest/ {
      proxy_pass http://up/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Accept-Encoding "";
      sub_filter '/content/' 'https://origin.example.org/content/';
      sub_filter_once off;
      sub_filter_types application/vnd.apple.mpegurl;
    }
  }`,
    cpu,
  );
}

/** nginx answering every path with one file, as a playlist. */
export function nginxStatic(work: string, file: string, cpu: string | undefined): Promise<Target> {
  return startNginx(
    work,
    `static-${path.basename(file)}`,
    (port) => `  types { application/vnd.apple.mpegurl m3u8; }
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port};
    root ${path.dirname(file)};
    location / { try_files /${path.basename(file)} =404; }
  }`,
    cpu,
  );
}
