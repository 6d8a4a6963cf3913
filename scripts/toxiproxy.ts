// Toxiproxy (github.com/Shopify/toxiproxy/v2, pinned): a TCP proxy whose faults are set over a
// small REST API. The network fault suite (test/e2e/network-faults.test.ts) puts it between a
// worker and Temporal, PostgreSQL and the model provider. Built with Go from the module proxy into
// .tools/toxiproxy-<version>/ once (seconds with a warm Go cache); `.ci/run` installs it.
//
//   node bin/run-ts.mjs scripts/toxiproxy.ts --install-only
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TOOLS_DIR } from '../src/infra/paths';
import { go } from './go';

/** What `go` builds here, for its errors. */
const TOOL = 'toxiproxy';
export const TOXIPROXY_VERSION = '2.12.0';
const MODULE = 'github.com/Shopify/toxiproxy/v2';
const DIR = path.join(TOOLS_DIR, `toxiproxy-${TOXIPROXY_VERSION}`);
/** `go install` names the binary after its package directory (cmd/server). */
const BINARY = path.join(DIR, 'bin', 'server');
const BUILT_MARKER = path.join(DIR, 'built.json');

function runsAsVersion(file: string): boolean {
  if (!existsSync(file)) return false;
  const r = spawnSync(file, ['-version'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 && `${r.stdout}${r.stderr}`.includes(TOXIPROXY_VERSION);
}

/** The server binary when it is built for this pin (nothing is built), else undefined. */
export function installedToxiproxy(): string | undefined {
  try {
    const marker = JSON.parse(readFileSync(BUILT_MARKER, 'utf8')) as { version?: string };
    return marker.version === TOXIPROXY_VERSION && runsAsVersion(BINARY) ? BINARY : undefined;
  } catch {
    return undefined;
  }
}

/** Builds the server into .tools/ when it is missing; built.json is written last, so a half-finished
 *  install is done again. Returns the binary's path. */
export async function ensureToxiproxy(log: (line: string) => void = (l) => console.error(`toxiproxy: ${l}`)): Promise<string> {
  const ready = installedToxiproxy();
  if (ready) return ready;
  const t0 = Date.now();
  rmSync(BUILT_MARKER, { force: true });
  mkdirSync(path.dirname(BINARY), { recursive: true });
  log(`building ${MODULE}@v${TOXIPROXY_VERSION} with go install`);
  // GOTOOLCHAIN=local: never fetch another Go toolchain behind the caller's back.
  // The module's own release builds stamp the version with -X; a plain `go install` says "git".
  await go(TOOL, ['install', `-ldflags=-X ${MODULE}.Version=${TOXIPROXY_VERSION}`, `${MODULE}/cmd/server@v${TOXIPROXY_VERSION}`], {
    GOBIN: path.dirname(BINARY),
    GOFLAGS: '-trimpath',
  });
  if (!runsAsVersion(BINARY)) throw new Error(`${BINARY} was built but does not report version ${TOXIPROXY_VERSION}`);
  writeFileSync(BUILT_MARKER, JSON.stringify({ version: TOXIPROXY_VERSION, go: (await go(TOOL, ['version'])).trim() }, null, 2));
  log(`built in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${BINARY}`);
  return BINARY;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'install-only': { type: 'boolean' } } });
  const binary = await ensureToxiproxy();
  console.log(`toxiproxy ${TOXIPROXY_VERSION}: ${binary}`);
  if (!values['install-only']) console.log(`serve it with: ${binary} -host 127.0.0.1 -port 8474`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`toxiproxy: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
