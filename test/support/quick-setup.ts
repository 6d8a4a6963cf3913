// The quick tier's setup (vitest.quick.config.ts): no service is started or looked for, so every
// test that needs Temporal, PostgreSQL or Docker skips, saying so. `npm test` runs them all.
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): void {
  project.provide('temporalAddress', null);
  project.provide('temporalCliPath', null);
  project.provide('databaseUrl', null);
  project.provide('dockerAvailable', false);
  project.provide('workflowBundleCode', '');
  project.provide('missing', ['the quick tier starts no services (npm test runs these)']);
}
