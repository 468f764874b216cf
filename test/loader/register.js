/**
 * Registers ./hooks.js, which resolves and transpiles the project's TypeScript for every test
 * process (tap's config passes this file with `node-arg`). tap's TypeScript plugin (ts-node) is
 * off (`"plugin": ["!@tapjs/typescript"]` in package.json): importing it cost ~1 s of CPU in each
 * of the ~130 test processes, before any test ran. TEST_TS_CACHE=0 transpiles without the cache.
 */
import { register } from 'node:module';

register(new URL('./hooks.js', import.meta.url));
