#!/usr/bin/env node
// The `deep-research` command. TypeScript sources run through tsx's loader, so there is no build step.
import { register } from 'tsx/esm/api';

register();
try {
  // dev, worker and api may first replace this process with one on jemalloc (src/infra/allocator.ts),
  // before the rest of the program is loaded.
  const { allocatorSetting } = await import('../src/config.ts');
  const { settleAllocator } = await import('../src/infra/allocator.ts');
  const setting = allocatorSetting();
  if (setting !== undefined) settleAllocator(setting, process.argv.slice(2));
  const { main } = await import('../src/cli.ts');
  await main(process.argv.slice(2));
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
}
