/**
 * `npm run bench -- --capacity [--streams N]` (issue 29 item 3): what one stream costs the state
 * store and one break costs Postgres, measured, for docs/capacity.md. One service in this process
 * (lib/app.ts, as `npm start` assembles it) on a private redis-server (so INFO's memory and
 * commandstats are this run's alone; the machine's shared Redis is never touched) and a fresh
 * schema of the shared Postgres; the DAI host and transcoder simulated (lib/sim).
 *   1. N streams registered through the real registry (`StreamRegistry.touch`, as /dai/adproxy
 *      registers one: targeting, client IP, master path), flushed: bytes and commands per stream;
 *   2. one refresh of every stream (the manifest path's touch), flushed: commands per refresh;
 *   3. an event-wide break (PUT /api/v1/squeeze-ad-break, all N streams): its fan-out time (the
 *      HTTP call: registry read, per-stream decision, the row), the state store's commands, the
 *      Postgres rows and bytes it wrote, and Postgres writes while it runs for a few worker ticks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { startService, type Service } from '../lib/app.js';
import { loadConfig } from '../lib/config/index.js';
import { createLogger } from '../lib/log/index.js';
import { mintToken } from '../lib/http/auth.js';
import { DaiHostSim } from '../lib/sim/dai-host.js';
import { TranscoderSim } from '../lib/sim/transcoder.js';
import { keys } from '../lib/store/index.js';
import { freePort, waitForPort } from './procs.js';

const SEG_SEC = 2;
const RUN_TICKS_SEC = 8;

export interface CapacityResult {
  streams: number;
  register: {
    ms: number;
    bytesPerStream: number;
    hashBytes: number;
    registryBytesPerStream: number;
    commands: Record<string, number>;
    commandsPerStream: number;
    flushMs: number;
  };
  refresh: { commands: Record<string, number>; commandsPerStream: number; flushMs: number; cpuUsPerStream: number };
  breakPut: {
    ms: number;
    status: number;
    streams: number;
    commands: Record<string, number>;
    pgRows: Record<string, number>;
    rowBytes: number;
    pgWritesWhileRunning: number;
    runSec: number;
  };
}

/** INFO commandstats as calls by command. */
async function commandCalls(r: Redis): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await r.info('commandstats')).matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

function diff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after))
    if (v - (before[k] ?? 0) > 0 && k !== 'info' && k !== 'memory') out[k] = v - (before[k] ?? 0);
  return out;
}

const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
const usedMemory = async (r: Redis) => Number(/used_memory:(\d+)/.exec(await r.info('memory'))![1]);

async function privateRedis(dir: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  await waitForPort(port, 10_000);
  return { port, child };
}

/** Inserts and updates on the schema's tables so far (the statistics collector's view, flushed at commit). */
async function pgWrites(sql: postgres.Sql, schema: string): Promise<number> {
  const [row] = await sql<
    { n: string }[]
  >`select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) as n from pg_stat_user_tables where schemaname = ${schema}`;
  return Number(row!.n);
}

export async function runCapacity(n: number): Promise<CapacityResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sqz-capacity-'));
  const redis = await privateRedis(dir);
  const pgUrl = process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `cap_${randomBytes(5).toString('hex')}`;
  const admin = postgres(pgUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create schema ${schema}`);
  const u = new URL(pgUrl);
  u.searchParams.set('search_path', schema);
  const dai = await new DaiHostSim({
    shape: { segmentSec: SEG_SEC, windowSegments: 15, adEvery: 0, adSegments: 0 },
  }).start();
  const transcoder = await new TranscoderSim().start();
  const r = new Redis(redis.port, '127.0.0.1');
  let service: Service | undefined;
  try {
    const config = loadConfig(
      {},
      {
        port: 0,
        host: '127.0.0.1',
        dataDir: dir,
        databaseUrl: u.toString(),
        redisUrl: `redis://127.0.0.1:${redis.port}`,
        jwtSecret: randomBytes(24).toString('hex'),
        daiHost: dai.url,
        contentOrigin: dai.url,
        transcoderUrl: transcoder.url,
        allowPrivateOutbound: true,
        logLevel: 'warn',
        maxStreams: n + 1000,
        streamIdleSec: 3600,
        shutdownDrainMs: 0,
      },
    );
    service = await startService(config, createLogger(config.logLevel));
    const token = await mintToken(config);
    const api = async (method: string, p: string, json: unknown) => {
      const res = await fetch(`${service!.url}/api/v1/${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    await api('PUT', 'squeeze-brand-config', { brand_id: 'cap' });
    const ev = await api('PUT', 'squeeze-event-config', {
      asset_id: 'CAP',
      source_uri: `${dai.url}/source/master.m3u8`,
      brand_config_id: 'cap',
    });
    const eventId = ev.body['id'] as number;
    await api('PUT', 'squeeze-configured-ad', {
      event_id: eventId,
      abid: 'c1',
      ad_uri: 'https://cdn.example.com/c1.mp4',
      duration: 10,
      is_curated: true,
    });

    // 1. Registration: ids shaped as the DAI provider's (UUID:LOC), the ad tag's targeting.
    const ids = Array.from(
      { length: n },
      (_, i) =>
        `${randomBytes(16)
          .toString('hex')
          .replace(/(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')}:LOC${i % 10}`,
    );
    await service.streams.flush();
    const mem0 = await usedMemory(r);
    const c0 = await commandCalls(r);
    const t0 = performance.now();
    ids.forEach((id, i) =>
      service!.streams.touch({
        streamId: id,
        eventId,
        assetKey: 'CAP',
        flow: 'dai',
        targeting: new Map([
          ['_fw_did', `idfa:${randomBytes(8).toString('hex')}`],
          ['kv', `seg${i % 50}`],
          ['vdur', '3600'],
        ]),
        clientIp: `203.0.${(i >> 8) & 255}.${i & 255}`,
        masterPath: `/linear/hls/event/CAP/stream/${id}/master.m3u8`,
      }),
    );
    const f0 = performance.now();
    await service.streams.flush();
    await service.streams.flush();
    const registerMs = performance.now() - t0;
    const flushMs = performance.now() - f0;
    const registerCmds = diff(await commandCalls(r), c0);
    const mem1 = await usedMemory(r);
    let hashBytes = 0;
    for (const id of ids.slice(0, 200))
      hashBytes += Number(await r.call('MEMORY', 'USAGE', keys.stream(id), 'SAMPLES', '0'));
    hashBytes = Math.round(hashBytes / 200);
    const registryBytes = Number(await r.call('MEMORY', 'USAGE', keys.event(eventId, 'streams'), 'SAMPLES', '0'));

    // 2. One refresh of every stream, as the manifest path touches a known stream.
    const c1 = await commandCalls(r);
    const f1 = performance.now();
    const cpu1 = process.cpuUsage();
    for (const id of ids) service.streams.touch({ streamId: id, eventId, assetKey: 'CAP', flow: 'dai' });
    await service.streams.flush();
    await service.streams.flush();
    const refreshFlushMs = performance.now() - f1;
    // This process's CPU for the touches and their flush (the simulators here are idle meanwhile).
    const refreshCpu = process.cpuUsage(cpu1);
    const refreshCmds = diff(await commandCalls(r), c1);

    // 3. The event-wide break over every stream.
    const sql = postgres(u.toString(), { max: 1, onnotice: () => undefined });
    const tables = ['squeeze_break', 'squeeze_break_segment'];
    const count = async () =>
      Object.fromEntries(
        await Promise.all(
          tables.map(
            async (tb) =>
              [tb, Number((await sql.unsafe<{ n: string }[]>(`select count(*) as n from ${tb}`))[0]!.n)] as const,
          ),
        ),
      );
    const rows0 = await count();
    const c2 = await commandCalls(r);
    const p0 = performance.now();
    const put = await api('PUT', 'squeeze-ad-break', { event_id: eventId, break_duration: 10 });
    const putMs = performance.now() - p0;
    const putCmds = diff(await commandCalls(r), c2);
    const rows1 = await count();
    const [size] = await sql<
      { b: string }[]
    >`select pg_column_size(b.*) as b from squeeze_break b where id = ${String(put.body['break_id'])}`;
    await new Promise((res) => setTimeout(res, 1500)); // the statistics collector flushes about once a second
    const w0 = await pgWrites(sql, schema);
    await new Promise((res) => setTimeout(res, RUN_TICKS_SEC * 1000));
    const w1 = await pgWrites(sql, schema);
    await sql.end();
    return {
      streams: n,
      register: {
        ms: Math.round(registerMs),
        bytesPerStream: Math.round((mem1 - mem0) / n),
        hashBytes,
        registryBytesPerStream: Math.round(registryBytes / n),
        commands: registerCmds,
        commandsPerStream: +(total(registerCmds) / n).toFixed(2),
        flushMs: Math.round(flushMs),
      },
      refresh: {
        commands: refreshCmds,
        commandsPerStream: +(total(refreshCmds) / n).toFixed(2),
        flushMs: Math.round(refreshFlushMs),
        cpuUsPerStream: +((refreshCpu.user + refreshCpu.system) / n).toFixed(1),
      },
      breakPut: {
        ms: Math.round(putMs),
        status: put.status,
        streams: Number(put.body['streams'] ?? 0),
        commands: putCmds,
        pgRows: Object.fromEntries(tables.map((tb) => [tb, rows1[tb]! - rows0[tb]!])),
        rowBytes: Number(size?.b ?? 0),
        pgWritesWhileRunning: w1 - w0,
        runSec: RUN_TICKS_SEC,
      },
    };
  } finally {
    await service?.close();
    r.disconnect();
    dai.stop();
    await transcoder.stop();
    redis.child.kill('SIGKILL');
    await admin.unsafe(`drop schema if exists ${schema} cascade`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printCapacity(c: CapacityResult): void {
  const line = (s: string) => process.stdout.write(`${s}\n`);
  line(`capacity: ${c.streams} streams registered in ${c.register.ms} ms (flush ${c.register.flushMs} ms)`);
  line(
    `  state store: ${c.register.bytesPerStream} B/stream (used_memory delta), hash ${c.register.hashBytes} B (MEMORY USAGE), event registry ${c.register.registryBytesPerStream} B/stream`,
  );
  line(`  registration: ${c.register.commandsPerStream} commands/stream ${JSON.stringify(c.register.commands)}`);
  line(
    `  refresh: ${c.refresh.commandsPerStream} commands/stream ${JSON.stringify(c.refresh.commands)} (flush ${c.refresh.flushMs} ms, ${c.refresh.cpuUsPerStream} µs CPU/stream)`,
  );
  const b = c.breakPut;
  line(
    `  event-wide break: PUT ${b.status} in ${b.ms} ms over ${b.streams} streams; Redis ${JSON.stringify(b.commands)}; Postgres rows ${JSON.stringify(b.pgRows)}, break row ${b.rowBytes} B`,
  );
  line(`  while the break runs: ${b.pgWritesWhileRunning} Postgres row writes in ${b.runSec} s`);
  line(JSON.stringify(c));
}
