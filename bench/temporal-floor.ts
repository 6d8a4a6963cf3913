// The Temporal server's floor for the shape of a research run: workflows with the standard
// workload's shape (bench/support/floor/workflows.ts: the same activities on the same queues, the
// same child workflow per step, upserts and row writes) whose activities do nothing, on a dev
// server started as `deep-research dev` starts it (its dynamic config, SQLite pragmas and search
// attributes). What the server spends per run here it spends on any run of that shape, whatever
// the service does; the bench's own worker (the SDK and nothing else) is printed beside it.
// Shapes, each measured in turn in every round (the machine's speed drifts; compare within one):
//   run:   as a research run is today;
//   fold:  the coordinator's classification inside the background activity (one activity less);
//   flat:  `fold`, and each step's activities run by the run itself instead of a child workflow.
// and, to find what a research run costs the server beyond its shape (--shapes run,text,fair,beat):
//   text:  `run` started with the tenant and the question (a full-text attribute), as the API starts runs;
//   fair:  `run` with the priority and fairness key the API gives runs (their activities inherit them);
//   beat:  `run` whose model activities heartbeat at their start, with the model calls' heartbeat timeout;
//   slow:  `run` whose model activities take as long as a run's model calls at the load bench's
//          latency (22 calls of 200 ms over 6 activities: 730 ms each), 16 at a time (the worker's
//          default LLM_CONCURRENCY), so that they wait in the queue as a run's do.
//   npm run bench:temporal-floor -- [--runs 100] [--concurrency 100] [--rounds 3] [--warmup 100] [--temporal-metrics] [--json FILE]
//        [--temporal real --pg <admin URL>] [--env WORKFLOW_STACK_TRACES=…] [--env WORKFLOW_VM_WATCHDOG=…]
// --temporal-metrics: the server's requests and persistence calls per run of each shape in the last
// round, to set beside those `bench:load --temporal-metrics` prints for real runs.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { ResearchPhaseKey, ResearchQuestionKey, ResearchStatusKey, ResearchTenantKey } from '../src/workflows/search-attributes';
import { freePort } from '../test/support/spawn';
import * as activities from './support/floor/activities';
import type { FloorInput } from './support/floor/workflows';
import { startBenchDevServer } from './support/dev-stack';
import { cpuSeconds, postgresCpu } from './support/procs';
import { SEARCH_ATTRIBUTES } from '../src/shared/constants';
import { CLUSTER_SEARCH_ATTRIBUTE_CACHE, startTemporalServer } from '../scripts/temporal-server';
import { perRunLines, readCounters } from './support/temporal-metrics';
import { loadConfig } from '../src/config';
import { workflowThreadEnv } from '../src/config/workers';
import { envPairs } from './support/env-args';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '100' },
    'temporal-metrics': { type: 'boolean' },
    'history-shards': { type: 'string', default: '4' },
    shapes: { type: 'string' },
    json: { type: 'string' },
    temporal: { type: 'string', default: 'dev' },
    pg: { type: 'string' },
    env: { type: 'string', multiple: true },
  },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const warmup = Number(values.warmup);

const ALL_SHAPES = ['run', 'fold', 'flat', 'text', 'fair', 'beat', 'slow'] as const;
type Shape = (typeof ALL_SHAPES)[number];
const SHAPES = (values.shapes ?? 'run,fold,flat').split(',') as Shape[];
for (const s of SHAPES) if (!ALL_SHAPES.includes(s)) throw new Error(`--shapes: ${s} is not one of ${ALL_SHAPES.join(', ')}`);
if (SHAPES[0] !== 'run') throw new Error('--shapes starts with run, the shape the others are compared with');
const queue = 'floor';
const namespace = 'default';

const metricsPort = values['temporal-metrics'] ? await freePort() : undefined;
// --temporal real --pg <admin URL>: the production shape, the real Temporal server (the one CI
// builds) on PostgreSQL; its database's CPU (every PostgreSQL process) is counted with it.
const realTemporal = values.temporal === 'real';
const historyShards = Number(values['history-shards']);
if (!Number.isInteger(historyShards) || historyShards < 1)
  throw new Error(`--history-shards is a number of shards, not ${values['history-shards']}`);
if (!realTemporal && values.temporal !== 'dev') throw new Error(`--temporal is dev or real, not ${values.temporal}`);
if (realTemporal && !values.pg) throw new Error('--temporal real needs --pg <admin URL>: the server keeps its databases there');
const server = realTemporal
  ? await startTemporalServer({
      adminUrl: values.pg!,
      namespace,
      searchAttributes: SEARCH_ATTRIBUTES,
      dynamicConfig: CLUSTER_SEARCH_ATTRIBUTE_CACHE,
      historyShards,
      ...(metricsPort ? { metricsPort } : {}),
    })
  : await startBenchDevServer({ namespace, metricsPort });
const serverPid = server.pid;
Runtime.install({ logger: new DefaultLogger('WARN') });
// The workflow threads run as the service's worker runs them: with the product's defaults (the SDK as
// published) unless --env sets WORKFLOW_STACK_TRACES or WORKFLOW_VM_WATCHDOG otherwise. Without the
// variables the patched SDK would run both of its opt-ins, and the floor would be a cheaper SDK than
// the service's.
const THREAD_SETTINGS = ['WORKFLOW_STACK_TRACES', 'WORKFLOW_VM_WATCHDOG'];
const threadEnv = envPairs(values.env);
for (const k of Object.keys(threadEnv))
  if (!THREAD_SETTINGS.includes(k)) throw new Error(`--env: only ${THREAD_SETTINGS.join(' and ')} apply to the floor's worker, not ${k}`);
const threadSettings = workflowThreadEnv(loadConfig(threadEnv).worker);
Object.assign(process.env, threadSettings);
const native = await NativeConnection.connect({ address: server.address });
/** The slow shape's model activities take this long; its model queue's worker runs 16 at once. */
const SLOW_MODEL_MS = 730;
const SLOW_SLOTS = 16;
const queues = [queue, ...(SHAPES.includes('slow') ? [`${queue}-slow`] : [])];
const workers = await Promise.all(
  queues.flatMap((q) =>
    ['', '-llm', '-sandbox'].map((suffix) =>
      Worker.create({
        connection: native,
        namespace,
        taskQueue: `${q}${suffix}`,
        // Workflows on the main queue alone, as the service's worker has them.
        ...(suffix === '' ? { workflowsPath: path.join(import.meta.dirname, 'support', 'floor', 'workflows.ts') } : {}),
        activities,
        ...(q !== queue && suffix === '-llm' ? { maxConcurrentActivityTaskExecutions: SLOW_SLOTS } : {}),
      }),
    ),
  ),
);
const running = Promise.all(workers.map((w) => w.run()));
const connection = await Connection.connect({ address: server.address });
const client = new Client({ connection, namespace });

/** A question's words, as a run's ResearchQuestion attribute holds them (full-text indexed). */
const QUESTION = Array.from({ length: 40 }, (_, k) => `word${k}`).join(' ');
let seq = 0;
/** Runs `count` runs of `shape`, `concurrency` at a time, in the standard workload's order: 1, 2
 *  and 3 steps in turn, the third with a processing step last. */
async function drive(shape: Shape, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const n = i % 3;
        const input: FloorInput = {
          steps: n + 1,
          processing: n === 2,
          foldClassify: shape === 'fold' || shape === 'flat',
          attributesAtStart: true,
          flat: shape === 'flat',
          beat: shape === 'beat',
          modelMs: shape === 'slow' ? SLOW_MODEL_MS : 0,
          queue: shape === 'slow' ? `${queue}-slow` : queue,
        };
        await client.workflow.execute('floorRun', {
          taskQueue: input.queue,
          workflowId: `floor-${shape}-${seq++}`,
          args: [input],
          typedSearchAttributes: [
            { key: ResearchPhaseKey, value: 'coordinating' },
            { key: ResearchStatusKey, value: 'running' },
            ...(shape === 'text'
              ? [
                  { key: ResearchTenantKey, value: 'bench' },
                  { key: ResearchQuestionKey, value: QUESTION },
                ]
              : []),
          ],
          ...(shape === 'fair' ? { priority: { priorityKey: 3, fairnessKey: 'bench', fairnessWeight: 1 } } : {}),
        });
      }
    }),
  );
}

const workerCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const results = new Map<Shape, { server: number[]; worker: number[]; postgres: number[] }>(
  SHAPES.map((s) => [s, { server: [], worker: [], postgres: [] }]),
);
/** PostgreSQL's CPU-seconds so far (with the real server; 0 on the dev server's SQLite). */
const pgCpu = () => (realTemporal ? [...postgresCpu().values()].reduce((a, b) => a + b, 0) : 0);
const metrics = new Map<Shape, string[]>();
try {
  if (warmup) for (const s of SHAPES) await drive(s, Math.ceil(warmup / SHAPES.length));
  console.log(
    `floor: ${runs} runs a shape, ${concurrency} at once, ${rounds} round(s), after ${warmup} warm-up runs, workflow threads with ${Object.entries(
      threadSettings,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}; CPU-s per run`,
  );
  for (let r = 0; r < rounds; r++) {
    // Each round starts with another shape, so that none is always measured first.
    const order = SHAPES.map((_, k) => SHAPES[(k + r) % SHAPES.length]!);
    for (const s of order) {
      const s0 = cpuSeconds(serverPid);
      const w0 = workerCpu();
      const p0 = pgCpu();
      const last = r === rounds - 1 && metricsPort;
      const c0 = last ? await readCounters(metricsPort) : undefined;
      await drive(s, runs);
      if (c0) metrics.set(s, perRunLines(c0, await readCounters(metricsPort!), runs, 40));
      results.get(s)!.server.push((cpuSeconds(serverPid) - s0) / runs);
      results.get(s)!.worker.push((workerCpu() - w0) / runs);
      results.get(s)!.postgres.push((pgCpu() - p0) / runs);
    }
    console.log(
      `round ${r + 1}: ` +
        SHAPES.map(
          (s) =>
            `${s} server ${results.get(s)!.server[r]!.toFixed(3)}${realTemporal ? ` PostgreSQL ${results.get(s)!.postgres[r]!.toFixed(3)}` : ''} worker ${results.get(s)!.worker[r]!.toFixed(3)}`,
        ).join(' | '),
    );
  }
  for (const [s, lines] of metrics) console.log(`${s}:\n  ${lines.join('\n  ')}`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = results.get('run')!;
  for (const s of SHAPES) {
    const f = results.get(s)!;
    const ratios = f.server.map((x, k) => x / base.server[k]!);
    console.log(
      `${s.padEnd(5)} Temporal server ${median(f.server).toFixed(3)} (median)${realTemporal ? `, its PostgreSQL ${median(f.postgres).toFixed(3)}` : ''}, ${median(ratios).toFixed(2)}× run; the bench's worker (SDK only) ${median(f.worker).toFixed(3)}`,
    );
  }
  // --json FILE: each shape's CPU per run in each round, for bench/floor-ratio.ts.
  if (values.json) writeFileSync(values.json, JSON.stringify({ runs, concurrency, shapes: Object.fromEntries(results) }));
} finally {
  for (const w of workers) w.shutdown();
  await running;
  await connection.close();
  await native.close();
  await server.stop();
}
