// Schemathesis (the OpenAPI fuzzer of test/api/openapi-fuzz.test.ts), pinned, from PyPI into a
// virtual environment under .tools/ named by its version: installed once, reused after. Run with
// --install-only (.ci/run does) to install it and print where it is.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCHEMATHESIS_VERSION = '4.32.5';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VENV = path.join(ROOT, '.tools', `schemathesis-${SCHEMATHESIS_VERSION}`);

/** The venv's python, which runs the fuzzer as `python -m schemathesis.cli` (the venv may have been moved
 *  into place after pip wrote its scripts, so their shebangs are not trusted); undefined when not installed. */
export function schemathesisPython(): string | undefined {
  const python = path.join(VENV, 'bin', 'python');
  return existsSync(python) ? python : undefined;
}

/** Installs into a temporary venv and moves it into place, so a half-done install is never taken for one. */
export function installSchemathesis(): string {
  const found = schemathesisPython();
  if (found) return found;
  const tmp = `${VENV}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
  };
  run('python3', ['-m', 'venv', tmp]);
  run(path.join(tmp, 'bin', 'python'), [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ]);
  renameSync(tmp, VENV);
  return path.join(VENV, 'bin', 'python');
}

if (process.argv.includes('--install-only')) {
  const python = installSchemathesis();
  const v = spawnSync(python, ['-m', 'schemathesis.cli', '--version'], { encoding: 'utf8' });
  if (v.status !== 0) {
    console.error(`schemathesis at ${VENV} does not run: ${v.stderr}`);
    process.exit(1);
  }
  console.log(`${v.stdout.trim()} at ${VENV}`);
}
