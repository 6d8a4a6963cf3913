// The real Temporal server (scripts/temporal-server.ts) for tests that need one of their own: the
// admin URL it creates its databases with, and whether it is installed (certificates for TLS are
// made by test/support/certs.ts).
import { installedTemporalServer } from '../../scripts/temporal-server';
import { DEFAULT_ADMIN_URL } from './global-setup';

export function adminUrl(): string {
  return process.env.TEST_DATABASE_ADMIN_URL ?? DEFAULT_ADMIN_URL;
}

/**
 * Why a test of the real server cannot run here, or undefined. Under CI=true a missing build is no
 * reason: the test builds it (.ci/run has done so already) or fails.
 */
export function realServerMissing(): string | undefined {
  if (process.env.CI === 'true' || installedTemporalServer()) return undefined;
  return 'the Temporal server is not built (node bin/run-ts.mjs scripts/temporal-server.ts --install-only)';
}
