import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/** Unit files that need a service all the same: they go with the service files. */
const UNIT_WITH_SERVICES = ['test/unit/workflow-bundle.test.ts', 'test/unit/role-fallbacks.test.ts'];
/** Files a run leaves to a pass of their own (scripts/run-tests.mjs): `--exclude` on the command
 *  line does not reach a project's own exclude list. */
const LEFT_OUT = (process.env.SUITE_EXCLUDE ?? '').split(',').filter(Boolean);
const UNIT_WITHOUT = readdirSync('test/unit')
  .map((f) => `test/unit/${f}`)
  .filter((f) => f.endsWith('.test.ts') && !UNIT_WITH_SERVICES.includes(f));

export default defineConfig({
  test: {
    // Three files at a time on two cores: about 1.4 s of each file is its fork's start and its
    // modules' loading, mostly waiting on the main process, and a third file fills that wait. The
    // API and workflow files (57, 334 tests) took 263-266 s with two and 199-201 s with three on a
    // quiet machine here, alternated (four was not tried: the shared dev server and PostgreSQL serve them all).
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    reporters: ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: UNIT_WITHOUT,
          exclude: LEFT_OUT,
          pool: 'forks',
          // No service and no module state shared between these files (the quick tier runs them the
          // same way): a worker keeps its modules from file to file instead of loading them again.
          isolate: false,
          globalSetup: ['test/support/quick-setup.ts'],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'services',
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT_WITHOUT, ...LEFT_OUT],
          // The Temporal SDK's native bridge wants real processes, not worker threads; each file
          // gets a fresh one (its own Temporal runtime, environment and ports).
          pool: 'forks',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
