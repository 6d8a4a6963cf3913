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
      group: [
        'fs',
        'fs/*',
        'path',
        'os',
        'http',
        'https',
        'net',
        'dns',
        'tls',
        'child_process',
        'crypto',
        'stream',
        'zlib',
        'worker_threads',
        'cluster',
        'url',
        'util',
        'events',
        'timers',
        'process',
        'buffer',
        'readline',
        'vm',
      ],
      message: 'Workflows must not use Node built-ins: do I/O in an activity.',
    },
    {
      group: [
        'pg',
        'openai',
        'express',
        'dockerode',
        'undici',
        'axios',
        'node-fetch',
        '@electric-sql/*',
        '@temporalio/client',
        '@temporalio/worker',
        '@temporalio/activity',
        '@temporalio/testing',
      ],
      message: 'I/O packages belong in activities or entry points, never in workflow code.',
    },
    {
      group: ['**/activities', '**/activities/*', '**/api/*', '**/infra/*', '**/config'],
      message: 'Workflows may import activities as types only (import type).',
      allowTypeImports: true,
    },
  ],
};

// src/shared is imported by workflows as well as by everything else: zod and itself only.
const sharedBans = {
  patterns: [
    ...workflowBans.patterns.slice(0, 3),
    {
      group: ['**/activities', '**/activities/*', '**/workflows', '**/workflows/*', '**/api/*', '**/infra/*', '**/config', '@temporalio/*'],
      message: 'src/shared sits below every layer: zod and other shared modules only.',
    },
  ],
};

// Layers: shared → infra/config → activities → workflows → api/cli; nothing imports upwards.
const activityBans = {
  patterns: [
    {
      group: [
        '**/workflows',
        '**/workflows/*',
        '**/api/*',
        '../cli',
        '../server',
        '../worker',
        '../../cli',
        '../../server',
        '../../worker',
      ],
      message: 'Activities and infra sit below workflows, the API and the entry points.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'dist/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        fetch: 'readonly',
        Headers: 'readonly',
      },
    },
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
  { files: ['src/shared/**/*.ts'], rules: { 'no-restricted-imports': ['error', sharedBans] } },
  { files: ['src/activities/**/*.ts', 'src/infra/**/*.ts'], rules: { 'no-restricted-imports': ['error', activityBans] } },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration in src/config.ts only.' }],
    },
  },
);
