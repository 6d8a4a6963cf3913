// `npm run test:quick`: the tests that need no service (no Temporal, PostgreSQL, Docker, browser
// or model), for the inner loop. `npm test` (vitest.config.ts) stays the complete suite.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    // The workflow bundle check bundles the workflows (npm test does it once in its global setup).
    exclude: ['test/unit/workflow-bundle.test.ts'],
    pool: 'forks',
    // No service, no module-level state shared between these files: a worker keeps its modules
    // from file to file instead of loading them again (65 files: 33 s and 54 CPU-s instead of 49 s
    // and 86 CPU-s here). The complete suite keeps each file in a fresh process.
    isolate: false,
    globalSetup: ['test/support/quick-setup.ts'],
    testTimeout: 60_000,
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});
