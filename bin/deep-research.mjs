#!/usr/bin/env node
// The `deep-research` command. TypeScript sources run through tsx's loader, so there is no build step.
import { register } from 'tsx/esm/api';
import { nodeProblem } from './node-check.mjs';

const problem = nodeProblem(process.versions.node);
if (problem) {
  console.error(problem);
  process.exit(1);
}

register();
try {
  // dev, worker and api may first replace this process with one on jemalloc and with the main
  // thread's young generation bounded (src/infra/process-start.ts), before the program is loaded.
  // The other commands (and --help) do not load the configuration for it.
  const { settleProcess, settles } = await import('../src/infra/process-start.ts');
  if (settles(process.argv.slice(2))) {
    const { startSettings } = await import('../src/config.ts');
    const settings = startSettings();
    if (settings !== undefined) settleProcess(settings, process.argv.slice(2));
  }
  const { main } = await import('../src/cli.ts');
  await main(process.argv.slice(2));
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
}
