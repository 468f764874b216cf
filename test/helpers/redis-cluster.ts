/**
 * A real local Redis Cluster (and Sentinel set) for tests: the launchers live in
 * lib/sim/redis-cluster.ts, shared with the scale bench; this adds tap's teardown and the skip
 * without redis-server (a failure with CI=true, where .ci/run installs it).
 */
import type { Test } from 'tap';
import {
  redisToolsPresent,
  startRedisCluster,
  startRedisSentinel,
  type LocalCluster,
  type LocalSentinel,
} from '../../lib/sim/redis-cluster.js';
import { inCI } from './services.js';

export type { LocalCluster, LocalSentinel } from '../../lib/sim/redis-cluster.js';

async function present(t: Test, what: string): Promise<boolean> {
  if (await redisToolsPresent()) return true;
  const why = `redis-server and redis-cli are needed for the ${what} (apt-get install redis-server)`;
  if (inCI) t.fail(why);
  else t.test(why, { skip: why }, () => undefined);
  return false;
}

export async function localCluster(t: Test): Promise<LocalCluster | undefined> {
  if (!(await present(t, 'cluster tests'))) return undefined;
  const cluster = await startRedisCluster();
  t.teardown(() => cluster.stop());
  return cluster;
}

/** A primary, one replica and one sentinel (quorum 1) that fails over a second after the primary stops answering. */
export async function localSentinel(t: Test): Promise<LocalSentinel | undefined> {
  if (!(await present(t, 'sentinel test'))) return undefined;
  const sentinel = await startRedisSentinel();
  t.teardown(() => sentinel.stop());
  return sentinel;
}
