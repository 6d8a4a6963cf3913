import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file so that it holds for any working directory. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PROMPTS_DIR = path.join(PROJECT_ROOT, 'prompts');
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');
export const WORKFLOWS_ENTRY = path.join(PROJECT_ROOT, 'src', 'workflows', 'index.ts');
export const TOOLS_DIR = path.join(PROJECT_ROOT, '.tools');
/** The web page's sources (web/): bundled by the API when it starts serving them. */
export const WEB_DIR = path.join(PROJECT_ROOT, 'web');

export function resolveDataDir(dataDir: string): string {
  return path.isAbsolute(dataDir) ? dataDir : path.join(PROJECT_ROOT, dataDir);
}
