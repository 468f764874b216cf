/**
 * Registers ./hooks.js (a transpile cache) ahead of tap's ts-node: tap's config passes this with
 * `node-arg`, after its own loaders, and the hooks registered last run first. TEST_TS_CACHE=0, or
 * tap's --typecheck, leaves every module to ts-node as before.
 */
import { register } from 'node:module';

if (process.env['TEST_TS_CACHE'] !== '0' && process.env['TAP_TYPECHECK'] !== '1')
  register(new URL('./hooks.js', import.meta.url));
