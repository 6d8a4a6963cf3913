// Composition root for a worker: connects to Temporal and PostgreSQL and polls the task queue.
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import type pg from 'pg';
import type OpenAI from 'openai';
import { createActivities } from './activities';
import type { Config } from './config';
import { WORKFLOWS_ENTRY } from './infra/paths';

export interface WorkerDeps {
  config: Pick<Config, 'llm' | 'temporal' | 'search' | 'crawl'>;
  connection: NativeConnection;
  pool: pg.Pool;
  taskQueue?: string;
  llmClient?: OpenAI;
  /** A prebuilt bundle (tests build it once per file); otherwise bundled from source at start. */
  workflowBundle?: WorkflowBundle;
  identity?: string;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.taskQueue ?? deps.config.temporal.taskQueue,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: WORKFLOWS_ENTRY }),
    activities: createActivities({ config: deps.config, pool: deps.pool, ...(deps.llmClient ? { llmClient: deps.llmClient } : {}) }),
    ...(deps.identity ? { identity: deps.identity } : {}),
    // Enough for many runs on one host; LLM calls are I/O bound.
    maxConcurrentActivityTaskExecutions: 64,
    shutdownGraceTime: '10s',
  });
}

export function bundleWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_ENTRY, logger: quietBundlerLogger });
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => process.stderr.write(`workflow bundle: ${m}\n`),
  error: (m: string) => process.stderr.write(`workflow bundle: ${m}\n`),
};
