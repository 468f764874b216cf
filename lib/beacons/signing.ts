/**
 * The beacon URLs the service signs for players (lib/ads/beacon.ts signs and checks them): the key
 * they are signed with, and the problem a beacon that fails the check is answered with.
 */
import type { Config } from '../config/index.js';
import { persistentSecret } from '../config/secrets.js';
import { registerProblems } from '../http/problem.js';
import type { Logger } from '../log/index.js';

/** A `/beacon` request whose signature, expiry or form does not check. */
export const beaconProblem = registerProblems({ 'bad-beacon': { status: 400, title: 'Bad Request' } });

/**
 * BEACON_SECRET, else one generated under DATA_DIR on first start. With Redis (several instances)
 * and no BEACON_SECRET each instance may sign with its own, so a beacon URL one hands out is refused
 * by the others: said once at start-up.
 */
export function beaconSecret(config: Config, log: Logger): string {
  if (!config.beaconSecret && config.redisUrl)
    log.warn(
      'BEACON_SECRET is not set: each instance signs beacons with its own generated secret, so a beacon URL handed out by one instance is refused by the others',
    );
  return config.beaconSecret || persistentSecret(config.dataDir, 'beacon-secret');
}
