import t from 'tap';
import { MemoryStateStore, RedisStateStore } from '../../lib/store/index.js';
import { createLogger } from '../../lib/log/index.js';
import { stateStoreContract } from './state-contract.js';
import { needServices, REDIS_URL } from '../helpers/services.js';

t.test('memory state store', async (t) => {
  stateStoreContract(t, async () => new MemoryStateStore());
});

t.test('redis state store', async (t) => {
  if (!(await needServices(t, ['redis']))) return;
  stateStoreContract(t, () => RedisStateStore.connect(REDIS_URL, createLogger('silent')));
});

t.test('redis connect fails with a clear message when unreachable', async (t) => {
  await t.rejects(RedisStateStore.connect('redis://127.0.0.1:1', createLogger('silent'), 500), /unreachable/);
});
