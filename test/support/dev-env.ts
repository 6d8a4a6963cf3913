// The environment of a `deep-research dev` a test starts: its own data directory and free ports,
// the scripted model and search server, test-sized waits for a call a stopped dev left.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './spawn';

export async function devEnv(o: {
  cli: string;
  llmUrl: string;
  searchUrl: string;
}): Promise<{ env: Record<string, string>; ports: number[] }> {
  const ports = [await freePort(), await freePort(), await freePort(), await freePort()];
  const [temporal, ui, api, pglite] = ports;
  const env = {
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dr-dev-')),
    TEMPORAL_CLI_PATH: o.cli,
    TEMPORAL_PORT: String(temporal),
    TEMPORAL_UI_PORT: String(ui),
    API_PORT: String(api),
    PGLITE_PORT: String(pglite),
    OPENAI_BASE_URL: o.llmUrl,
    OPENAI_API_KEY: 'sk-dev-test',
    SEARCH_PROVIDERS: 'searxng',
    SEARXNG_URL: o.searchUrl,
    LOG_LEVEL: 'warn',
    // A test-sized wait for the model call a stopped dev left (its worker is gone): the call is
    // given to the restarted worker after twice this silence for the run's opening activity
    // (default 15s, so 30s) and a short backoff.
    LLM_HEARTBEAT_TIMEOUT: '3s',
    RETRY_INITIAL_INTERVAL: '200ms',
  };
  return { env, ports };
}
