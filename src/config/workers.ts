// How workers retry outside calls, stop, and size their memory.
import { z } from 'zod';
import { DEFAULT_LLM_HEARTBEAT_TIMEOUT } from '../shared/constants';
import { DEFAULT_RETRY } from '../shared/plain';
import { Duration, type RetrySettings } from '../shared/schemas';
import type { StartSettings } from '../infra/process-start';
import { area, int, trueOrFalse } from './setting-kit';

const workersSettings = {
  RETRY_INITIAL_INTERVAL: Duration.default(DEFAULT_RETRY.initialInterval).describe(
    "first backoff of retried outside calls (LLM, PostgreSQL, search, Docker); there is no attempt limit, a run's `maxOutage` bounds the wait",
  ),
  RETRY_MAX_INTERVAL: Duration.default(DEFAULT_RETRY.maximumInterval).describe('longest backoff of retried outside calls'),
  LLM_HEARTBEAT_TIMEOUT: Duration.default(DEFAULT_LLM_HEARTBEAT_TIMEOUT).describe(
    "how long a worker making an LLM call may stay silent (a network cut, a frozen process) before another worker gets the call; the second attempt waits for the first one's answer rather than paying again. A run's background phase (one activity making several calls) may stay silent twice as long",
  ),
  WORKER_SHUTDOWN_GRACE_MS: int(0, 3_600_000)
    .optional()
    .describe(
      'on SIGTERM, how long activities in flight may finish; what still runs then goes back to Temporal as retryable; unset: `LLM_TIMEOUT_MS` + 15000',
    ),
  /** Workflows a worker keeps in memory between their tasks (the sticky cache). */
  WORKER_MAX_CACHED_WORKFLOWS: int(0, 100_000)
    .default(1_000)
    .describe(
      "workflows a worker keeps in memory between their tasks (a run is its workflow and one per step under way). Each costs the worker about 130 KB: the SDK's own sizing (from the heap limit: 2,310 on a 24 GB machine) let 1,000 runs in flight reach 900–1,030 MB, 1,000 held them to 740–900 MB. Past it, the least recently used workflow leaves and replays at its next task: at 1,000 runs in flight the worker's CPU per run rose by about a tenth; at 100 runs nothing leaves (see [Running more workers](scaling-and-deploys.md#running-more-workers)). Smaller is not cheaper below that: at 100 runs, 60 cost 2.8× the workflow thread's CPU and saved no memory (`bench:load --env`)",
    ),
  /** Workflow stack traces for the `__stack_trace` query (the Web UI's Stack Trace tab): a stack recorded for every promise a workflow makes. */
  WORKFLOW_STACK_TRACES: trueOrFalse(true).describe(
    "on, as in the SDK: a stack trace is kept for every promise a workflow makes, so the Web UI's Stack Trace tab (the `__stack_trace` query) shows where a run waits. `false` (opt-in) turns that off and the workflow threads use about a quarter less CPU (`npm run bench:workflow-cpu`); the tab then says stack traces are not enabled. The switch is a one-line patch of `@temporalio/worker` (`patches/`, applied by `npm install`'s postinstall; see [Temporal SDK patch](development.md#temporal-sdk-patch))",
  ),
  /** The isolate watchdog that stops a workflow which does not yield: the SDK's own one per call into the VM, or one per activation (patched SDK, opt-in). */
  WORKFLOW_VM_WATCHDOG: z
    .enum(['per-activation', 'per-call'], { message: 'expected per-activation or per-call' })
    .default('per-call')
    .describe(
      'the watchdog that stops a workflow which does not yield within 5 s (its workflow task fails with "Script execution timed out"). `per-call` is the SDK\'s own, one per call into the workflow sandbox, at least three per activation, each starting a thread. `per-activation` (opt-in) runs each activation under one watchdog: the SDK\'s CPU is 1.2× that (`npm run bench:workflow-cpu`). A patch of `@temporalio/worker` (see [Temporal SDK patch](development.md#temporal-sdk-patch))',
    ),
  /** V8's old-generation growth after a full collection, in percent of the live heap (0: V8's adaptive factor, up to 300%). */
  HEAP_GROWTH_PERCENT: int(0, 1_000)
    .default(50)
    .describe(
      "how far V8 lets the old generation of `dev`, `worker` and `api` grow past what survived the last full collection before it collects again. `0` is V8's own factor, up to 300% for a process that allocates fast: at 100 runs in flight it let the main heap reach twice its live size. Lower holds less memory for a little more collecting",
    ),
  /** Largest semi-space of the process's worker threads (workflow thread, page extraction), in MB (0: V8's default, 16). */
  THREAD_SEMI_SPACE_MB: int(0, 256)
    .default(4)
    .describe(
      "the largest semi-space (half the young generation) of the worker threads these commands start: the workflow thread and page extraction. `0` is V8's 16 MB, which the workflow thread filled with 32 MB it never needed",
    ),
  /** The main thread's largest semi-space, in MB (0: V8's default), set at start (src/infra/process-start.ts). */
  MAIN_SEMI_SPACE_MB: int(0, 256)
    .default(16)
    .describe(
      "the largest semi-space (half the young generation) of the main thread of `dev`, `worker` and `api`. `0` is V8's: 64 MB on a 64-bit Node, which a worker with a thousand runs in flight filled (128 MB of young generation). V8 reads it only when the process starts, so the process replaces itself once at start to set it (as for `ALLOCATOR`), unless `--max-semi-space-size` is already among Node's options",
    ),
  /** The C allocator of `dev`, `worker` and `api` (src/infra/process-start.ts). */
  ALLOCATOR: z
    .string()
    .trim()
    .default('auto')
    .refine(
      (v) => v === 'auto' || v === 'system' || v.startsWith('/'),
      'auto, system, or the absolute path of a shared library such as libjemalloc.so.2',
    )
    .describe(
      "the C allocator of `dev`, `worker` and `api`. `auto` uses jemalloc where it is installed (Debian: `libjemalloc2`; the image has it) and the system's otherwise; `system` keeps glibc's; a path names a library to preload. glibc keeps what the native threads (Temporal Core, V8's helpers) free: 500 workflows in the sticky cache took about 400 KB each under glibc and 165 KB under jemalloc (`npm run bench:workflow-memory -- --allocators`). The process replaces itself once at start to load it (same process id); the processes it starts do not inherit it",
    ),
};

export const workersArea = area(
  'Workers: retries, shutdown and memory',
  workersSettings,
  /** `llmTimeoutMs`: LLM_TIMEOUT_MS; `waits`: BROWSER_WAIT and NEW_BUILD_CHECK, declared with the
   *  browser and Temporal settings. */
  (v, llmTimeoutMs: number, waits: { browserWait: string | undefined; newBuildCheck: string | undefined }) => ({
    /** How fast outside calls are retried (no attempt limit: a run's maxOutage bounds them). */
    retry: {
      initialInterval: v.RETRY_INITIAL_INTERVAL,
      maximumInterval: v.RETRY_MAX_INTERVAL,
      heartbeatTimeout: v.LLM_HEARTBEAT_TIMEOUT,
      ...(waits.browserWait ? { browserWait: waits.browserWait } : {}),
      ...(waits.newBuildCheck ? { newBuildCheck: waits.newBuildCheck } : {}),
    } satisfies RetrySettings as RetrySettings,
    worker: {
      /** How long a stopping worker lets activities in flight finish: by default an LLM request's timeout and 15 s. */
      shutdownGraceMs: v.WORKER_SHUTDOWN_GRACE_MS ?? llmTimeoutMs + 15_000,
      /** WORKER_MAX_CACHED_WORKFLOWS: the sticky cache's size. */
      maxCachedWorkflows: v.WORKER_MAX_CACHED_WORKFLOWS,
      /** WORKFLOW_STACK_TRACES: whether workflow threads record the stack traces the Web UI shows (on, as in the SDK; off is an opt-in of the patched SDK that saves about a quarter of those threads' CPU). */
      stackTraces: v.WORKFLOW_STACK_TRACES,
      /** WORKFLOW_VM_WATCHDOG: one isolate watchdog per call into the VM as the SDK does (the default), or per activation (patched SDK, opt-in). */
      vmWatchdog: v.WORKFLOW_VM_WATCHDOG,
    },
    /** ALLOCATOR, MAIN_SEMI_SPACE_MB: what the long-running commands settle at start (src/infra/process-start.ts). */
    start: { allocator: v.ALLOCATOR, mainSemiSpaceMb: v.MAIN_SEMI_SPACE_MB } satisfies StartSettings,
    /** V8 heap sizing of the long-running commands (src/infra/heap.ts). */
    heap: { growthPercent: v.HEAP_GROWTH_PERCENT, threadSemiSpaceMb: v.THREAD_SEMI_SPACE_MB },
  }),
);

/** The workflow threads' settings as they read them: from the environment they copy when they start
 *  (patches/@temporalio+worker+1.24.0.patch). Without these variables the patched SDK runs both
 *  opt-ins, so whatever starts a worker sets them: the service's worker, and the floor bench's. */
export function workflowThreadEnv(s: { stackTraces: boolean; vmWatchdog: 'per-activation' | 'per-call' }): Record<string, string> {
  return { WORKFLOW_STACK_TRACES: String(s.stackTraces), WORKFLOW_VM_WATCHDOG: s.vmWatchdog };
}
