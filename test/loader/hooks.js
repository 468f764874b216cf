/**
 * Module hooks (registered by ./register.js): a test file's TypeScript, and the lib/ TypeScript it
 * imports, resolved and transpiled here, the output kept on disk by content. tap's ts-node
 * transpiled every module again in every test file's process (~2 s of CPU for a file that imports
 * nothing of ours, ~5 s for one that starts the service, times 120 files on a 2-core machine), and
 * merely importing it cost ~1 s per process, so tap's TypeScript plugin is off. Transpile-only
 * (types are checked by `npm run lint`). A cache entry is named by the hash of the TypeScript
 * version, the compiler options, this file, the path and the source, so an edit or an upgrade is
 * never served stale; TEST_TS_CACHE=0 transpiles every time and keeps nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cacheDir = path.join(root, 'node_modules', '.cache', 'test-ts');
const require = createRequire(import.meta.url);
const tsVersion = JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version;
const tsconfig = readFileSync(path.join(root, 'tsconfig.json'), 'utf8');
// This file is in the salt too: a change to the options below is never served from old entries.
const noCache = process.env['TEST_TS_CACHE'] === '0';
const salt = `${tsVersion}\0${tsconfig}\0${readFileSync(fileURLToPath(import.meta.url), 'utf8')}\0`;

/** The compiler and the project's options, loaded on the first miss only: a warm cache never loads TypeScript. */
let compiler;
function transpile(file, source) {
  if (!compiler) {
    const ts = require('typescript');
    const { options } = ts.convertCompilerOptionsFromJson(JSON.parse(tsconfig).compilerOptions, root);
    compiler = {
      ts,
      // ESM out (package.json "type": "module"); the source map inline, for --enable-source-maps,
      // naming the source beside the output (no outDir), so stack traces show the real path.
      options: {
        ...options,
        outDir: undefined,
        rootDir: undefined,
        module: ts.ModuleKind.ESNext,
        sourceMap: false,
        inlineSourceMap: true,
        inlineSources: true,
        declaration: false,
        noEmit: false,
      },
    };
  }
  const out = compiler.ts.transpileModule(source, { fileName: file, compilerOptions: compiler.options });
  return out.outputText;
}

/**
 * The module's JavaScript from the cache, else transpiled (and kept, unless TEST_TS_CACHE=0).
 * Also called by ./warm.js, which fills the cache for every file in one process before a full run.
 */
export function compiled(file) {
  const source = readFileSync(file, 'utf8');
  const key = createHash('sha256').update(salt).update(file).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  if (!noCache)
    try {
      return { js: readFileSync(cached, 'utf8'), hit: true };
    } catch {
      // not cached yet
    }
  const js = transpile(file, source);
  if (noCache) return { js, hit: false };
  // Write then rename: files running in parallel may transpile the same module; a reader sees a whole entry or none.
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, js);
  renameSync(tmp, cached);
  return { js, hit: false };
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !/\.m?ts$/.test(new URL(url).pathname)) return nextLoad(url, context);
  return { format: 'module', source: compiled(fileURLToPath(url)).js, shortCircuit: true };
}

/**
 * A `.js` specifier of the project's own that names a `.ts` file (NodeNext style: `./x.js` for
 * `x.ts`) resolves here: Node's resolver does not know that spelling, and ts-node, which did, is
 * not loaded. Anything else (packages, real `.js` files) goes to Node's resolver.
 */
export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.startsWith('file:') && /^\.{1,2}\/.*\.js$/.test(specifier)) {
    const url = new URL(specifier, context.parentURL);
    const ts = fileURLToPath(url).replace(/\.js$/, '.ts');
    if (ts.startsWith(root + path.sep) && !ts.includes(`${path.sep}node_modules${path.sep}`) && existsSync(ts))
      return { url: pathToFileURL(ts).href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
