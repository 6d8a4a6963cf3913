// Composition root for a worker: connects to Temporal and PostgreSQL and polls the task queue.
import {
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type BundlerPlugin,
  type WorkerPlugin,
  type WorkflowBundle,
  type WorkflowBundleOption,
  type WorkerOptions,
} from '@temporalio/worker';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type pg from 'pg';
import type OpenAI from 'openai';
import { activityDependencies, activityMap, createActivities } from './activities';
import { reportWaits } from './activities/waits';
import type { Config } from './config';
import { workflowThreadEnv } from './config/workers';
import { WORKFLOWS_ENTRY } from './infra/paths';
import { codeBuildId } from './infra/workflow-bundle';
import { GatedWorker } from './infra/gated-worker';
import { browserExecutable } from './activities/crawl/browser-activities';
import { BROWSER_QUEUE_SUFFIX, LLM_QUEUE_SUFFIX, SANDBOX_QUEUE_SUFFIX } from './shared/constants';

export interface WorkerDeps {
  config: Pick<Config, 'llm' | 'temporal' | 'search' | 'crawl' | 'browser' | 'mcp' | 'sandbox' | 'worker' | 'knowledge' | 'webhook'>;
  connection: NativeConnection;
  pool: pg.Pool;
  taskQueue?: string;
  llmClient?: OpenAI;
  /** The workflow bundle: cached per version of the code (`dev`, `worker`), or built once per test run. */
  workflowBundle: WorkflowBundleOption;
  identity?: string;
  /** Worker plugins (OpenTelemetry tracing). */
  plugins?: WorkerPlugin[];
}

/** A worker of the group: a Temporal worker, or one that polls only while it can serve (GatedWorker). */
type GroupMember = Pick<Worker, 'run' | 'shutdown' | 'getState'> & { getStatus(): { numInFlightActivities: number } };

/** The workers of one process: workflows and most activities, and the model-call, sandbox and browser queues. */
export class WorkerGroup {
  private sweeper: NodeJS.Timeout | undefined;

  /** `sweep` removes sandbox containers a crashed worker left: at start, then every minute.
   *  `release` frees what the activities hold (the browser) once every worker has stopped. */
  constructor(
    readonly workers: GroupMember[],
    private readonly sweep?: () => Promise<number>,
    private readonly release?: () => Promise<void>,
  ) {}

  async run(): Promise<void> {
    if (this.sweep) {
      const sweep = this.sweep;
      const once = () => void sweep().catch(() => undefined);
      once();
      this.sweeper = setInterval(once, 60_000);
    }
    const runs = this.workers.map((w) => w.run());
    try {
      await Promise.all(runs);
    } catch (err) {
      this.shutdown();
      await Promise.allSettled(runs);
      throw err;
    } finally {
      clearInterval(this.sweeper);
      await this.release?.().catch(() => undefined);
    }
  }

  /** Activities in flight on the group's workers. */
  inFlight(): number {
    return this.workers.reduce((n, w) => n + w.getStatus().numInFlightActivities, 0);
  }

  shutdown(): void {
    clearInterval(this.sweeper);
    for (const w of this.workers) if (w.getState() === 'RUNNING') w.shutdown();
  }

  async runUntil<T>(fn: () => Promise<T>): Promise<T> {
    const running = this.run();
    try {
      return await fn();
    } finally {
      this.shutdown();
      await running;
    }
  }
}

/** This worker's version of the deployment, or undefined for an unversioned worker. */
export function workerVersion(config: Pick<Config, 'temporal'>): WorkerDeploymentVersion | undefined {
  const d = config.temporal.deployment;
  if (!d) return undefined;
  return { deploymentName: d.name, buildId: d.buildId === 'auto' ? codeBuildId() : d.buildId };
}

/** Worker Versioning: every worker of the process polls as the same version, so a pinned run's
 *  activities (on the -llm, -sandbox and -browser queues too) reach its own build. Workflow types
 *  declare their behaviour (src/workflows/versioning.ts); PINNED is the default for any other. */
function deploymentOptions(version: WorkerDeploymentVersion | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (!version) return {};
  return { workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } };
}

export async function createWorker(deps: WorkerDeps): Promise<WorkerGroup> {
  const taskQueue = deps.taskQueue ?? deps.config.temporal.taskQueue;
  const versioning = deploymentOptions(workerVersion(deps.config));
  const groups = createActivities({ config: deps.config, pool: deps.pool, ...(deps.llmClient ? { llmClient: deps.llmClient } : {}) });
  const activities = activityMap(groups);
  const interceptors = { activity: [reportWaits(activityDependencies(groups))] };
  const plugins = deps.plugins ?? [];
  // Not configuration read here: the settings handed to the workflow threads this worker starts.
  // eslint-disable-next-line no-restricted-properties
  Object.assign(process.env, workflowThreadEnv(deps.config.worker));
  const main = await Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue,
    workflowBundle: deps.workflowBundle,
    activities,
    interceptors,
    plugins,
    ...(deps.identity ? { identity: deps.identity } : {}),
    // Enough for many runs on one host; LLM calls are I/O bound.
    maxConcurrentActivityTaskExecutions: 64,
    shutdownGraceTime: deps.config.worker.shutdownGraceMs,
    ...versioning,
    maxCachedWorkflows: deps.config.worker.maxCachedWorkflows,
  });
  // Model calls (and page extraction, which is one) have their own queue: a hundred runs on one
  // API key slow down together under the server-side rate instead of each collecting 429s.
  const llm = await Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: `${taskQueue}${LLM_QUEUE_SUFFIX}`,
    activities: { ...groups.llm, ...groups.crawl, ...groups.embedding },
    interceptors,
    plugins,
    ...(deps.identity ? { identity: `${deps.identity}-llm` } : {}),
    maxConcurrentActivityTaskExecutions: deps.config.llm.concurrency,
    maxTaskQueueActivitiesPerSecond: deps.config.llm.queueRate,
    shutdownGraceTime: deps.config.worker.shutdownGraceMs,
    ...versioning,
  });
  // Sandboxes are heavy: their own queue, and a small number at once per worker, polled only while
  // this worker's Docker engine answers and has the image (so a worker without them leaves the
  // runs to workers that have them instead of taking runs it would fail).
  const sandbox = new GatedWorker(
    () =>
      Worker.create({
        connection: deps.connection,
        namespace: deps.config.temporal.namespace,
        taskQueue: `${taskQueue}${SANDBOX_QUEUE_SUFFIX}`,
        activities: groups.sandbox,
        interceptors,
        plugins,
        ...(deps.identity ? { identity: `${deps.identity}-sandbox` } : {}),
        maxConcurrentActivityTaskExecutions: deps.config.sandbox.concurrency,
        shutdownGraceTime: deps.config.worker.shutdownGraceMs,
        ...versioning,
      }),
    groups.dockerReady,
    {
      intervalMs: SANDBOX_GATE_CHECK_MS,
      retryMs: SANDBOX_GATE_RETRY_MS,
      downChecks: 3,
      onChange: sandboxGateNotice(deps.config.sandbox.image),
    },
  );
  const browser = await browserWorker(deps, taskQueue, groups, { interceptors, plugins, ...versioning });
  return new WorkerGroup([main, llm, sandbox, ...(browser ? [browser] : [])], groups.sweepSandboxes, groups.closeBrowser);
}

/** How often a worker that polls the sandbox queue checks that its Docker engine still can run
 *  sandboxes (the probe keeps a yes a minute), and how often one that does not checks again. */
const SANDBOX_GATE_CHECK_MS = 60_000;
const SANDBOX_GATE_RETRY_MS = 5_000;

/** What the log says when the sandbox gate opens or closes: a worker without Docker from its start
 *  is a normal setup (info); one whose engine went away after it polled is not (warn). */
function sandboxGateNotice(image: string): (polling: boolean) => void {
  let polled = false;
  return (polling) => {
    const log = Runtime.instance().logger;
    const missing = `this worker's Docker engine does not answer or lacks ${image}; workers that have it run the programs`;
    if (polling) log.info(`sandbox queue: polling (this worker's Docker engine has ${image})`);
    else if (polled) log.warn(`sandbox queue: stopped polling: ${missing}`);
    else log.info(`sandbox queue: not polling: ${missing}`);
    polled ||= polling;
  };
}

/**
 * Pages rendered in headless Chromium: their own queue, polled only by a worker that has a browser
 * (BROWSER), so a worker without one leaves those pages to workers that have it. With none at all,
 * the workflow's schedule-to-start timeout turns such a page into a skipped one (src/workflows/tools.ts).
 */
async function browserWorker(
  deps: WorkerDeps,
  taskQueue: string,
  groups: ReturnType<typeof createActivities>,
  shared: Pick<WorkerOptions, 'interceptors' | 'plugins' | 'workerDeploymentOptions'>,
): Promise<Worker | undefined> {
  if (!browserExecutable(deps.config.browser)) return undefined;
  return Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: `${taskQueue}${BROWSER_QUEUE_SUFFIX}`,
    activities: groups.browser,
    ...shared,
    ...(deps.identity ? { identity: `${deps.identity}-browser` } : {}),
    maxConcurrentActivityTaskExecutions: deps.config.browser.concurrency,
    shutdownGraceTime: deps.config.worker.shutdownGraceMs,
  });
}

/**
 * The workflow bundle; plugins may add workflow interceptor modules (tracing).
 *
 * The workflow modules are preloaded: evaluated once when the workflow thread makes its context,
 * and shared by every workflow it runs. Left to the SDK, each workflow evaluates them anew when it
 * starts or is replayed, and keeps its own copy of every module's functions and constants while
 * it is cached: about a third of a cached workflow's memory and 7 % of a replay's CPU
 * (`npm run bench:workflow-memory`, `bench:workflow-cpu`). Sharing is safe because those modules
 * hold no state: no module-level `let`, frozen or read-only constants (test/unit/workflow-bundle.test.ts).
 * `preload: false` builds the SDK's way, for the benchmarks' comparison.
 */
export function bundleWorkflows(plugins: BundlerPlugin[] = [], opts: { preload?: boolean } = {}): Promise<WorkflowBundle> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_ENTRY,
    logger: quietBundlerLogger,
    plugins,
    ...(opts.preload === false ? {} : { preloadModules: [WORKFLOWS_ENTRY] }),
  });
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string) => process.stderr.write(`workflow bundle: ${m}\n`),
  error: (m: string) => process.stderr.write(`workflow bundle: ${m}\n`),
};
