// The workflow bundle for `dev` and `worker`: built once per version of the workflow code and kept
// in node_modules/.cache, by a child process, so a process that runs workflows never loads webpack
// (which left about 140 MB of its own in the heap after every start) and a restart of an unchanged
// worker skips the build. The cache key is a hash of every file the bundle can contain (the
// workflow code and src/shared, which is all it may import; the lint rules hold that boundary), of
// the files that set the bundler's options, and of the locked dependencies, so a changed workflow
// can never start on an old bundle.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { PROJECT_ROOT } from './paths';

const SOURCES = ['src/workflows', 'src/shared'];
/** Where the bundler's options are set: a change there must build a new bundle too. */
const BUNDLER_FILES = ['src/worker.ts', 'scripts/bundle-workflows.ts'];
const CACHE_DIR = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'deep-research');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** Hash of the bundle's possible inputs: the workflow and shared sources, the files that set the
 *  bundler's options, and package-lock.json. */
export function workflowBundleKey(root = PROJECT_ROOT): string {
  const h = createHash('sha256');
  const files = [
    ...SOURCES.flatMap((d) => filesUnder(path.join(root, d))),
    ...BUNDLER_FILES.map((f) => path.join(root, f)),
    path.join(root, 'package-lock.json'),
  ];
  for (const f of files) {
    h.update(path.relative(root, f));
    h.update('\0');
    h.update(existsSync(f) ? readFileSync(f) : '');
    h.update('\0');
  }
  return h.digest('hex').slice(0, 20);
}

/** TEMPORAL_WORKER_BUILD_ID=auto: a hash of all the code a worker runs (src/, prompts/, the locked
 *  dependencies), so two builds of the same code are one version and any change is a new one. */
export function codeBuildId(root = PROJECT_ROOT): string {
  const h = createHash('sha256');
  const files = [...['src', 'prompts'].flatMap((d) => filesUnder(path.join(root, d))), path.join(root, 'package-lock.json')];
  for (const f of files) {
    h.update(path.relative(root, f));
    h.update('\0');
    h.update(readFileSync(f));
    h.update('\0');
  }
  return `code-${h.digest('hex').slice(0, 16)}`;
}

/** Where the bundle of a version of the workflow code is cached (whether or not it is there). */
export function cachedBundlePath(key: string): string {
  return path.join(CACHE_DIR, `workflow-bundle-${key}.js`);
}

/** The cached bundle of the current code, built (out of process) when there is none. */
export async function cachedWorkflowBundle(): Promise<WorkflowBundleOption & { cached: boolean }> {
  const file = cachedBundlePath(workflowBundleKey());
  if (existsSync(file)) return { codePath: file, cached: true };
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  await promisify(execFile)(
    process.execPath,
    [path.join(PROJECT_ROOT, 'bin', 'run-ts.mjs'), path.join(PROJECT_ROOT, 'scripts', 'bundle-workflows.ts'), '--out', partial],
    { cwd: PROJECT_ROOT, maxBuffer: 1 << 20 },
  );
  // Whole or not at all: a worker killed mid-build leaves only its .tmp file.
  renameSync(partial, file);
  return { codePath: file, cached: false };
}
