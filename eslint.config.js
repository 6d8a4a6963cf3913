// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Workflow code is replayed and must be deterministic: no Node built-ins, no I/O packages, and
// activity modules only as types. The worker's bundler would also reject most of these, but
// lint says so at the line, with the reason.
const workflowBans = {
  patterns: [
    { group: ['node:*'], message: 'Workflows must not use Node built-ins: do I/O in an activity.' },
    {
      group: ['fs', 'fs/*', 'path', 'os', 'http', 'https', 'net', 'dns', 'tls', 'child_process', 'crypto', 'stream', 'zlib', 'worker_threads', 'cluster', 'url', 'util', 'events', 'timers', 'process', 'buffer', 'readline', 'vm'],
      message: 'Workflows must not use Node built-ins: do I/O in an activity.',
    },
    {
      group: ['pg', 'openai', 'express', 'dockerode', 'undici', 'axios', 'node-fetch', '@electric-sql/*', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'],
      message: 'I/O packages belong in activities or entry points, never in workflow code.',
    },
    { group: ['**/activities', '**/activities/*', '**/api/*', '**/infra/*', '**/config'], message: 'Workflows may import activities as types only (import type).', allowTypeImports: true },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'dist/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', fetch: 'readonly', Headers: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', workflowBans],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Tunables travel in the workflow input; workflows never read the environment.' },
        { name: 'setInterval', message: 'Use sleep() or condition() from @temporalio/workflow.' },
        { name: 'fetch', message: 'Network calls are activities.' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration in src/config.ts only.' }],
    },
  },
);
