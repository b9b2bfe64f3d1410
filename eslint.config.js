// ESLint flat config: typescript-eslint's type-aware recommended rules over src, test and scripts, and
// the layering of docs/ARCHITECTURE.md checked: infra ← beads, agents ← loop ← autoresearch ← cli.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What each layer may not import (as path segments of a relative import). */
const LAYERS = {
  infra: ['beads', 'agents', 'loop', 'dispatch', 'autoresearch', 'cli'],
  beads: ['agents', 'loop', 'dispatch', 'autoresearch', 'cli'],
  agents: ['beads', 'loop', 'dispatch', 'autoresearch', 'cli'],
  loop: ['dispatch', 'autoresearch', 'cli'],
  dispatch: ['autoresearch', 'cli'],
  autoresearch: ['cli'],
  cli: [],
};

/**
 * Subprocesses go through src/infra (argv arrays, explicit cwd and env), nowhere else: process.ts
 * (runProcess, the one place execa is used) and short-process.ts (br and git calls); spawn-failures.ts
 * watches what both start for a spawn Node fails without a listener.
 */
const SUBPROCESSES_THROUGH_INFRA = [
  {
    name: 'execa',
    message: 'Run subprocesses through src/infra/process.ts (runProcess), the one place execa is used.',
  },
  ...['child_process', 'node:child_process'].map((name) => ({
    name,
    message: 'Run subprocesses through src/infra/process.ts (runProcess) or src/infra/short-process.ts.',
  })),
];

/** Loop and autoresearch reach the disk through src/infra (atomic-file.ts, fs-ops.ts), never node:fs. */
const FS_THROUGH_INFRA = ['fs', 'node:fs', 'fs/promises', 'node:fs/promises'].map((name) => ({
  name,
  message:
    'src/loop and src/autoresearch use the filesystem through src/infra (atomic-file.ts, fs-ops.ts); add a small helper there.',
}));
const NO_DIRECT_FS = new Set(['loop', 'autoresearch']);

/** The rule for one layer; no-restricted-imports does not merge across config objects, so each holds all. */
function layerRule(layer, { execa }) {
  return [
    'error',
    {
      paths: [
        ...(execa ? SUBPROCESSES_THROUGH_INFRA : []),
        ...(NO_DIRECT_FS.has(layer) ? FS_THROUGH_INFRA : []),
      ],
      patterns: LAYERS[layer].map((upper) => ({
        group: [`**/${upper}/**`],
        message: `src/${layer} may not import src/${upper} (layers: infra ← beads, agents ← loop ← dispatch, autoresearch ← cli; see docs/ARCHITECTURE.md).`,
      })),
    },
  ];
}

const layerRules = [
  ...Object.keys(LAYERS).map((layer) => ({
    files: [`src/${layer}/**/*.ts`],
    rules: { 'no-restricted-imports': layerRule(layer, { execa: true }) },
  })),
  {
    files: ['src/infra/process.ts', 'src/infra/short-process.ts', 'src/infra/spawn-failures.ts'],
    rules: { 'no-restricted-imports': layerRule('infra', { execa: false }) },
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // An `async` method without `await` is how a port's implementation turns a throw into a rejection
      // (the in-memory backends and fakes); the rule would push those towards Promise.resolve wrappers.
      '@typescript-eslint/require-await': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='vi'][callee.property.name='mock']",
          message: 'Pass fakes through deps instead of vi.mock.',
        },
      ],
    },
  },
  ...layerRules,
  {
    // Tests and scripts: fakes are plain objects whose methods are closures (no `this` to lose), and
    // vitest's asymmetric matchers (expect.any, objectContaining) are typed `any`.
    files: ['test/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    // Plain JavaScript (this file, bin shims, build scripts) is outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The executables are CommonJS (bin/package.json): a status starts no ES module loader.
    files: ['bin/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
