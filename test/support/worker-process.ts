// `deep-research worker` as a separate process on the suite's Temporal and PostgreSQL, for tests
// that kill a worker and start another.
import { databaseUrl, temporalAddress } from './services';
import { spawnCli, type Spawned } from './spawn';

export function spawnWorker(opts: { taskQueue: string; llmUrl: string; searxngUrl: string; env?: Record<string, string> }): Spawned {
  return spawnCli(['worker'], {
    TEMPORAL_ADDRESS: temporalAddress()!,
    TEMPORAL_TASK_QUEUE: opts.taskQueue,
    DATABASE_URL: databaseUrl()!,
    OPENAI_BASE_URL: opts.llmUrl,
    OPENAI_API_KEY: 'sk-worker-process',
    SEARCH_PROVIDERS: 'searxng',
    SEARXNG_URL: opts.searxngUrl,
    LOG_LEVEL: 'warn',
    // Several workers on one machine: each serves /metrics on a free port.
    METRICS_PORT: '0',
    ...opts.env,
  });
}
