// docker-compose.yml is valid for Compose and has the production shape: Temporal on PostgreSQL and
// its UI, PostgreSQL with pgvector, two workers with metrics and health checks, the API (which
// needs API_KEYS), the sandbox image build; web search with nothing but an LLM configured.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/temporal-server';
import { loadConfig } from '../../src/config';
import { ROOT } from '../support/spawn';

const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
/** `docker compose` (v2) where it exists, else Debian's `docker-compose`: asked once, not before
 *  every call (Debian's is a Python program, most of a second a run). */
const v2 = spawnSync('docker', ['compose', 'version'], { cwd: ROOT, encoding: 'utf8', env }).status === 0;
const [cmd, pre] = v2 ? ['docker', ['compose']] : ['docker-compose', []];

function compose(args: string[], extra: Record<string, string> = {}) {
  return spawnSync(cmd, [...pre, '-f', 'docker-compose.yml', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...env, ...extra } });
}

/** The services of `compose config`'s output (its YAML, keys indented two spaces under `services:`). */
function servicesOf(config: string): string[] {
  const block = /^services:\n((?:[ \t].*\n|\n)*)/m.exec(config)?.[1] ?? '';
  return [...block.matchAll(/^ {2}([^\s:#][^:]*):\s*$/gm)].map((m) => m[1]!);
}

const available = compose(['version']).status === 0;

describe.skipIf(!available)(`docker-compose.yml (${available ? 'compose found' : 'no docker compose'})`, () => {
  it('passes `compose config` and has every service of the production shape', () => {
    const r = compose(['config'], { API_KEYS: 'compose-check-key-0123456789=acme' });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
    const services = servicesOf(r.stdout).sort();
    expect(services).toEqual([
      'api',
      'postgres',
      'sandbox-image',
      'temporal',
      'temporal-db',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'worker',
    ]);
    // The server the tests build and run (scripts/temporal-server.ts), not the deprecated auto-setup image.
    expect(r.stdout).toMatch(new RegExp(`image: temporalio/server:${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')}\\n`));
    expect(r.stdout).not.toMatch(/auto-setup/);
    expect(r.stdout).toMatch(/image: pgvector\/pgvector/);
    expect(r.stdout).toMatch(/replicas: 2/);
    // Workers are versions of the deployment that promote themselves (TEMPORAL_WORKER_PROMOTE).
    expect(r.stdout).toMatch(/TEMPORAL_WORKER_BUILD_ID: auto\n/);
    expect(r.stdout).toMatch(/TEMPORAL_WORKER_PROMOTE: "true"\n/);
    expect(r.stdout.match(/healthcheck:/g)?.length).toBeGreaterThanOrEqual(5);
  });

  it("searches the web as configured: DuckDuckGo's keyless page by default, a key's provider instead", () => {
    /** The worker's configuration from the environment Compose gives it. */
    const workerSearch = (extra: Record<string, string>) => {
      const r = compose(['config'], { API_KEYS: 'compose-check-key-0123456789=acme', ...extra });
      const block = /^ {2}worker:\n[\s\S]*?^ {4}environment:\n((?: {6}.*\n)+)/m.exec(r.stdout)?.[1] ?? '';
      const environment = Object.fromEntries(
        [...block.matchAll(/^ {6}([A-Z_0-9]+): (.*)$/gm)].map((m) => [m[1]!, m[2]!.replace(/^'(.*)'$|^"(.*)"$/, '$1$2')]),
      );
      expect(environment.DATABASE_URL).toMatch(/^postgres:/);
      return loadConfig(environment).search.providers;
    };
    expect(workerSearch({})).toContain('duckduckgo');
    const withKey = workerSearch({ BRAVE_API_KEY: 'brave-key' });
    expect(withKey).toEqual(expect.arrayContaining(['brave', 'wikipedia']));
    expect(withKey).not.toContain('duckduckgo');
    expect(workerSearch({ SEARCH_PROVIDERS: 'searxng', SEARXNG_URL: 'http://searxng:8080' })).toEqual(['searxng']);
  });

  it('refuses to configure an API without keys, naming API_KEYS', () => {
    const r = compose(['config', '-q']);
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/set API_KEYS=key=tenant/);
  });
});
