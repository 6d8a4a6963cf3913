// Heavy libraries that most processes never use (PDF and HTML export, document parsing, the
// embedded database, tracing, MCP, arXiv's XML) are loaded the first time they are needed, not at
// start: together they held about 100 MB of every worker's memory. A library needed on a
// synchronous path is required through this; an asynchronous path uses `await import()`.
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/** The module `id` (CommonJS), loaded at the first call and kept. */
export function lazyRequire<T>(id: string): () => T {
  let loaded: { module: T } | undefined;
  return () => (loaded ??= { module: requireHere(id) as T }).module;
}
