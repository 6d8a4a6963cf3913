#!/usr/bin/env node
// The `deep-research` command. TypeScript sources run through tsx's loader, so there is no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
try {
  await main(process.argv.slice(2));
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
}
