#!/usr/bin/env node
// Runs a TypeScript file of this repository with tsx's loader: `node bin/run-ts.mjs file.ts [args]`.
import { register } from 'tsx/esm/api';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: run-ts.mjs <file.ts> [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(file), ...rest];
await import(pathToFileURL(path.resolve(file)).href);
