/** The bench's processes: launched pinned to a core, and read from /proc (RSS, CPU time). */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCommand } from './load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..', '..');
export const pinned = os.cpus().length >= 2 && hasCommand('taskset');
export const SERVER_CPU = pinned ? '0' : undefined;
export const LOAD_CPU = pinned ? '1' : undefined;

export interface Target {
  child: ChildProcess;
  port: Promise<number>;
  /** What the target printed (e.g. a `TOKEN …` line). */
  output?: () => string;
}

/** Starts cmd (pinned to cpu); its port is the first `READY <port>` it prints. silent: its stderr is dropped (a service logging as in production). */
export function launch(
  cmd: string,
  args: string[],
  cpu: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  opts: { silent?: boolean } = {},
): Target {
  const stdio: ['ignore', 'pipe', 'inherit' | 'ignore'] = ['ignore', 'pipe', opts.silent ? 'ignore' : 'inherit'];
  const child = cpu ? spawn('taskset', ['-c', cpu, cmd, ...args], { env, stdio }) : spawn(cmd, args, { env, stdio });
  let out = '';
  const port = new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before it was ready`)));
  });
  return { child, port, output: () => out };
}

export function node(script: string, args: string[], cpu: string | undefined, nodeFlags: string[] = []) {
  return launch(process.execPath, [...nodeFlags, path.join(here, script), ...args], cpu, {
    ...process.env,
    LOG_LEVEL: 'warn',
  });
}

/** The service runs with the Node flags `npm start` gives it (package.json), so the bench measures what users run. */
export const SERVICE_FLAGS =
  (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
    .match(/node((?: --[\w-]+(?:=\S+)?)*) /)?.[1]
    ?.trim()
    .split(' ')
    .filter(Boolean) ?? [];

/**
 * Stops a target as an operator would: SIGTERM, then up to 10 s for it to exit (the service stops
 * its embedded Postgres on the way out; killed sooner, that Postgres was left running), then SIGKILL.
 */
export async function stopTarget(t: Target): Promise<void> {
  if (t.child.exitCode !== null || t.child.signalCode !== null) return;
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise((r) => t.child.once('exit', r));
  t.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
  clearTimeout(timer);
  t.child.kill('SIGKILL');
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/** Resolves once 127.0.0.1:port accepts connections (and, with httpPath, answers it with a 2xx). */
export async function waitForPort(port: number, timeoutMs: number, httpPath?: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const ok = httpPath
      ? await fetch(`http://127.0.0.1:${port}${httpPath}`).then(
          (r) => r.ok,
          () => false,
        )
      : await new Promise<boolean>((r) =>
          net
            .connect(port, '127.0.0.1')
            .once('connect', function (this: net.Socket) {
              this.destroy();
              r(true);
            })
            .once('error', () => r(false)),
        );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing answered on port ${port}${httpPath ?? ''} within ${timeoutMs} ms`);
}

/** A process and its direct children (nginx master + worker). */
function processAndChildren(pid: number): number[] {
  const out = [pid];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Sums a /proc reading over a process and its children; a process that is gone counts 0. */
function overTree(pid: number, read: (p: number) => number): number {
  return processAndChildren(pid).reduce((sum, p) => {
    try {
      return sum + read(p);
    } catch {
      return sum;
    }
  }, 0);
}

/** RSS of a process and its children, in MiB. */
export function rssMiB(pid: number): number {
  return Math.round(
    overTree(pid, (p) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0)) / 1024,
  );
}

/** CPU seconds (user + system) used by a process and its children so far. */
export function cpuSeconds(pid: number): number {
  const { user, kernel } = cpuSplit(pid);
  return user + kernel;
}

/** CPU seconds of a process tree in user space and in the kernel (utime, stime in clock ticks, USER_HZ = 100). */
export function cpuSplit(pid: number): { user: number; kernel: number } {
  const fields = (p: number) => {
    const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  return {
    user: overTree(pid, (p) => Number(fields(p)[11]) / 100),
    kernel: overTree(pid, (p) => Number(fields(p)[12]) / 100),
  };
}
