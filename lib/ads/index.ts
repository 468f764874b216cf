/** The ad decisioning surface: shared types, XML reading, VAST/VMAP parsing, wrapper resolution, the VAST writer. */
export * from './types.js';
export * from './xml.js';
export * from './vast.js';
export * from './vmap.js';
export * from './resolve.js';
export * from './vast-writer.js';
