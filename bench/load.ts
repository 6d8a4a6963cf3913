// Load on one machine: a workload of research runs through the HTTP API of `deep-research dev`, with
// an OpenAI-compatible fake at a fixed latency, a SearXNG-shaped search server and a fixture site.
// Prints, in one run: completed, p50/p95 run time, runs per minute and that against what
// LLM_CONCURRENCY allows, CPU-seconds per run of each process (dev = worker + API [+ PGlite], the
// Temporal server, PostgreSQL when --pg is given) and of the three together, peak RSS, history
// events, workflow tasks and activity tasks per run (parent and steps), activities per run by type,
// model calls and tokens per run by role, and the share of prompt text a prefix cache could reuse.
//   npm run bench:load -- --runs 40 --concurrency 40 --latency-ms 200 [--pg URL] [--cpu-prof]
//        [--workload standard|users] [--follow events|poll] [--poll-ms 2000] [--llm-rate 1000]
//        [--warmup N] [--env K=V]... [--node-arg=FLAG]... [--review idle --idle-minutes N] [--temporal-metrics] [--json FILE]
//        [--split] [--temporal dev|real [--history-shards N]] [--ramp-s N]
// --workload: `standard` (the default: 1 to 3 steps in turn, every third run with a processing
// step), or `users`, closer to users' plans (bench/support/workload.ts).
// --warmup N: N runs first, not measured, so the figures are those of a worker that has been up a
// while (V8 has compiled its hot code) rather than of one just started; the default 0 measures a
// fresh process, compile time included.
// --llm-rate is LLM_QUEUE_RATE, the server-side cap on model calls per second across all workers
// (the product's default of 10 protects a real API key; the fake has no limit, so the bench lifts
// it to measure orchestration rather than the cap: at 10/s, 100 runs of ~22 calls need 220 s).
// For the same reason the SearXNG fake gets --llm-rate searches per second instead of the 5/s a
// public SearXNG instance is given (100 runs of ~5 searches need 94 s at 5/s).
// A client follows each run the way the web page and `deep-research watch` do, on its event stream
// (`--follow events`, the default), or by asking for its status every --poll-ms (each GET costs a
// describe and a status query, answered by a worker).
// --review idle: the runs wait for plan review instead (bench/support/idle-review.ts).
// --temporal-metrics: the Temporal server's own requests and persistence calls per run, by operation
// (TEMPORAL_METRICS_PORT; bench/support/temporal-metrics.ts), to see where its CPU goes.
// With --pg, where the server loads pg_stat_statements and the admin URL's database has its view,
// the statements the service's database ran per run, the most frequent named
// (bench/support/pg-statements.ts); otherwise a line says why they were not counted.
// --ramp-s N: the first --concurrency runs are submitted evenly over N seconds instead of all at
// once (the default 0): how the load reaches its runs in flight, a ramp or a burst of starts.
// --split: the production shape of the service, `deep-research worker` and `deep-research api` as
// two processes (needs --pg), on a Temporal dev server the bench starts as `dev` would (or the real
// one with --temporal real); each process's CPU and peak RSS is printed, and the service's figures
// are their sums.
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../src/config';
import { SEARCH_ATTRIBUTES } from '../src/shared/constants';
import { CLUSTER_SEARCH_ATTRIBUTE_CACHE, startTemporalServer } from '../scripts/temporal-server';
import { freePort } from '../test/support/spawn';
import { BenchApi, type Follow } from './support/api-client';
import { startBenchDevServer, startBenchStack } from './support/dev-stack';
import { readHistories } from './support/histories';
import { idleReview, type IdleFigures } from './support/idle-review';
import { modelCallFigures, tokenTable, type RunWindow } from './support/model-calls';
import { countStatements } from './support/pg-statements';
import { childrenOf, commandName, cpuSeconds, machineJiffies, PeakRss, rssMb, StackCpu, threadCpu } from './support/procs';
import { questionOf, workloadRules, type WorkloadName } from './support/workload';
import { perRunLines, readCounters } from './support/temporal-metrics';
import { envPairs } from './support/env-args';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '20' },
    'latency-ms': { type: 'string', default: '200' },
    pg: { type: 'string' },
    'cpu-prof': { type: 'boolean' },
    'no-coder': { type: 'boolean' },
    workload: { type: 'string', default: 'standard' },
    follow: { type: 'string', default: 'events' },
    'poll-ms': { type: 'string', default: '2000' },
    'llm-rate': { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '0' },
    review: { type: 'string', default: 'off' },
    'idle-minutes': { type: 'string', default: '10' },
    env: { type: 'string', multiple: true },
    'node-arg': { type: 'string', multiple: true },
    json: { type: 'string' },
    'temporal-metrics': { type: 'boolean' },
    temporal: { type: 'string', default: 'dev' },
    'history-shards': { type: 'string', default: '4' },
    split: { type: 'boolean' },
    'ramp-s': { type: 'string', default: '0' },
  },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const latency = Number(values['latency-ms']);
const follow = values.follow as Follow;
if (follow !== 'events' && follow !== 'poll') throw new Error(`--follow is events or poll, not ${values.follow}`);
const workload = values.workload as WorkloadName;
if (workload !== 'standard' && workload !== 'users') throw new Error(`--workload is standard or users, not ${values.workload}`);
if (values.review !== 'off' && values.review !== 'idle') throw new Error(`--review is idle (or off), not ${values.review}`);
const idleMinutes = Number(values['idle-minutes']);
if (!(idleMinutes > 0)) throw new Error(`--idle-minutes is a number of minutes, not ${values['idle-minutes']}`);
const pollMs = Number(values['poll-ms']);
const rampS = Number(values['ramp-s']);
if (!(rampS >= 0)) throw new Error(`--ramp-s is a number of seconds, not ${values['ramp-s']}`);
// --temporal real: the production shape, the real Temporal server (the one CI builds) on the
// PostgreSQL of --pg, which its persistence and visibility use too (PostgreSQL's CPU counts them).
const realTemporal = values.temporal === 'real';
const historyShards = Number(values['history-shards']);
if (!Number.isInteger(historyShards) || historyShards < 1)
  throw new Error(`--history-shards is a number of shards, not ${values['history-shards']}`);
if (!realTemporal && values.temporal !== 'dev') throw new Error(`--temporal is dev or real, not ${values.temporal}`);
if (realTemporal && !values.pg) throw new Error('--temporal real needs --pg <admin URL>: the server keeps its databases there');
const split = Boolean(values.split);
if (split && !values.pg) throw new Error('--split needs --pg <admin URL>: a separate worker and API share PostgreSQL');
if (split && values.review !== 'off') throw new Error('--review idle measures `dev` alone: not with --split');
const warmup = Number(values.warmup);
if (!Number.isInteger(warmup) || warmup < 0) throw new Error(`--warmup is a number of runs, not ${values.warmup}`);
// --env K=V: any other setting of the dev process (e.g. LLM_CONCURRENCY=64), printed below.
// --node-arg=FLAG: a Node or V8 option for the service's processes (e.g. --node-arg=--single-threaded-gc).
const extraEnv = envPairs(values.env);
// The model slots of the worker: LLM_CONCURRENCY as given, else the product's default.
const llmSlots = loadConfig(extraEnv.LLM_CONCURRENCY ? { LLM_CONCURRENCY: extraEnv.LLM_CONCURRENCY } : {}).llm.concurrency;

// ---- the stack ---------------------------------------------------------------------------------

// --temporal-metrics: the server serves its own counters (the dev server on TEMPORAL_METRICS_PORT, a
// setting this bench's baseline commits may not know; the real server on its Prometheus listener),
// read before and after the load.
const metricsPort = values['temporal-metrics'] ? await freePort() : undefined;
const server: { address: string; namespace: string; pid: number; stop(): Promise<void> } | undefined = realTemporal
  ? await startTemporalServer({
      adminUrl: values.pg!,
      searchAttributes: SEARCH_ATTRIBUTES,
      dynamicConfig: CLUSTER_SEARCH_ATTRIBUTE_CACHE,
      historyShards,
      ...(metricsPort ? { metricsPort } : {}),
    })
  : split
    ? // Split on the dev server: neither `worker` nor `api` starts one, so the bench does, as `dev` would.
      await startBenchDevServer({ namespace: 'default', metricsPort })
    : undefined;
const stack = await startBenchStack({
  name: 'bench-load',
  latencyMs: latency,
  pg: values.pg,
  callRate: values['llm-rate'],
  env: {
    ...(values['no-coder'] ? { RESEARCHER_PYTHON: 'false' } : {}),
    ...(metricsPort && !server ? { TEMPORAL_METRICS_PORT: String(metricsPort) } : {}),
    ...(server ? { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace } : {}),
    ...extraEnv,
  },
  ...(split ? { split: { temporalAddress: server!.address, namespace: server!.namespace } } : {}),
  nodeArgs: [
    ...(values['node-arg'] ?? []),
    ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.join(os.tmpdir(), 'bench-load-profiles')}`] : []),
  ],
});
const { dev, llm } = stack;
// `dev`, or the worker when split: the process the thread and sticky-cache figures are about.
const devPid = dev.child.pid!;
const apiPid = stack.api?.child.pid;
const servicePids = apiPid ? [devPid, apiPid] : [devPid];
const serviceCpu = () => servicePids.reduce((a, p) => a + cpuSeconds(p), 0);
/** What the figures call the process that runs the worker. */
const workerLabel = split ? 'worker' : 'dev';
const temporalPid = server?.pid ?? childrenOf(devPid).find((p) => commandName(p).startsWith('temporal'));
if (!temporalPid) throw new Error('the Temporal dev server process was not found');
const api = new BenchApi(stack.apiUrl);

const sandboxReady = !values['no-coder'] && hasSandboxImage();
function hasSandboxImage(): boolean {
  try {
    execFileSync('docker', ['image', 'inspect', 'deep-research-sandbox:latest'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// ---- the workload ------------------------------------------------------------------------------

llm.script(workloadRules(workload, sandboxReady));
// Idempotency keys unique to this bench process (ids of runs derive from them).
const batch = randomUUID().slice(0, 8);
const keyOf = (label: string, i: number) => `bench-${batch}-${label}-${i}`;

/** Runs `count` runs, `concurrency` at a time; returns each run's id, final status, time and window. */
async function drive(count: number, label: string): Promise<{ ids: string[]; statuses: string[]; times: number[]; windows: RunWindow[] }> {
  const out = { ids: [] as string[], statuses: [] as string[], times: [] as number[], windows: [] as RunWindow[] };
  let next = 0;
  const clients = Math.min(concurrency, count);
  await Promise.all(
    Array.from({ length: clients }, async (_, k) => {
      // --ramp-s: client k makes its first submit k / clients of the ramp in.
      if (rampS > 0) await new Promise((r) => setTimeout(r, (k * rampS * 1000) / clients));
      while (next < count) {
        const i = next++;
        const s0 = performance.now();
        const start = Date.now();
        const id = await api.submit(questionOf(label, i), { autoAcceptPlan: true }, keyOf(label, i));
        out.ids.push(id);
        out.statuses.push(await api.finished(id, follow, pollMs));
        out.times.push(performance.now() - s0);
        out.windows.push({ start, end: Date.now() });
      }
    }),
  );
  return out;
}
/** The service's CPU-seconds per run over the warm-up (dev, or worker + API), printed against the measured load's. */
async function warmUp(): Promise<number> {
  const before = serviceCpu();
  const w = await drive(warmup, 'warm-up');
  const failed = w.statuses.filter((s) => s !== 'completed').length;
  if (failed) throw new Error(`${failed} of ${warmup} warm-up runs did not complete`);
  return (serviceCpu() - before) / warmup;
}

const setting = `${split ? 'worker and API as two processes, ' : ''}${realTemporal ? 'the real Temporal server on PostgreSQL' : 'the dev server'}, ${values.pg ? 'PostgreSQL' : 'PGlite'}, ${workload} workload${sandboxReady ? '' : ' (no sandbox image: research steps only)'}, LLM latency ${latency} ms, LLM_CONCURRENCY ${llmSlots}${warmup ? `, after ${warmup} warm-up runs` : ', a fresh process'}${rampS ? `, the first ${concurrency} submitted over ${rampS} s` : ''}${values.env?.length ? `, ${values.env.join(' ')}` : ''}`;

// Whatever fails, the dev process and its Temporal server are stopped: on a shared machine a
// bench that dies must not leave them running.
try {
  const warmupCpuPerRun = warmup > 0 ? await warmUp() : 0;
  if (values.review === 'idle') {
    console.log(`load: ${runs} runs waiting for plan review, submitted ${concurrency} at a time, ${setting}`);
    const idle: IdleFigures = await idleReview({
      api,
      runs,
      concurrency,
      minutes: idleMinutes,
      pollMs,
      pids: { dev: devPid, temporal: temporalPid },
      withPostgres: Boolean(values.pg),
      question: (i) => questionOf('review', i),
      key: (i) => keyOf('review', i),
    });
    if (values.json) writeFileSync(values.json, JSON.stringify(idle));
  } else {
    await measureLoad(warmupCpuPerRun);
  }
} finally {
  await shutdown();
}

async function measureLoad(warmupCpuPerRun: number): Promise<void> {
  const firstRequest = llm.requests.length;
  const statements = values.pg && stack.database ? await countStatements(values.pg, stack.database) : undefined;
  const cpu = new StackCpu(servicePids, temporalPid!, Boolean(values.pg), stack.database);
  const threads0 = threadCpu(devPid);
  const rssAtStart = rssMb(devPid);
  const rss = new PeakRss({ dev: devPid, temporal: temporalPid!, ...(apiPid ? { api: apiPid } : {}) });
  const machine0 = machineJiffies();
  const bench0 = process.cpuUsage();
  const counters0 = metricsPort ? await readCounters(metricsPort) : undefined;
  const t0 = performance.now();
  const startedAt = Date.now();
  const { ids, statuses, times, windows } = await drive(runs, 'load');
  const counters1 = metricsPort ? await readCounters(metricsPort) : undefined;
  const wallMs = performance.now() - t0;
  const wallS = wallMs / 1000;
  const peak = rss.stop();
  const machine1 = machineJiffies();
  const idleShare = (machine1[0] - machine0[0]) / (machine1[1] - machine0[1]);
  const benchCpu = process.cpuUsage(bench0);
  const threads1 = threadCpu(devPid);
  const used = cpu.used();
  // The statements' counts, or why there are none (undefined without --pg).
  const sql = await statements?.finish(runs);
  const calls = modelCallFigures(llm.requests.slice(firstRequest), runs, wallMs, windows);

  const connection = await Connection.connect({ address: server?.address ?? stack.temporalAddress });
  const h = await readHistories(new Client({ connection }), ids);
  await connection.close();

  // ---- report ----------------------------------------------------------------------------------

  const sorted = [...times].sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! / 1000;
  const completed = statuses.filter((s) => s === 'completed').length;
  const perRun = (x: number) => (x / runs).toFixed(3);
  const runsPerMin = (runs / wallS) * 60;
  // What the model slots allow: each run holds a slot for (its calls × the latency).
  const allowedPerMin = (llmSlots * 60) / (calls.callsPerRun * (latency / 1000));
  console.log(
    `load: ${runs} runs, ${concurrency} at once, ${setting}, model calls and searches at most ${values['llm-rate']}/s, ${follow === 'events' ? 'clients follow the event stream' : `clients poll the status every ${pollMs} ms`}`,
  );
  console.log(`completed:        ${completed}/${runs}`);
  console.log(`run time:         p50 ${pct(50).toFixed(1)} s, p95 ${pct(95).toFixed(1)} s`);
  console.log(`throughput:       ${runsPerMin.toFixed(1)} runs/min (${wallS.toFixed(1)} s in all)`);
  console.log(
    `saturation:       ${(runsPerMin / allowedPerMin).toFixed(2)} of what LLM_CONCURRENCY ${llmSlots} allows (${allowedPerMin.toFixed(1)} runs/min = ${llmSlots} × 60 ÷ (${calls.callsPerRun.toFixed(1)} calls × ${(latency / 1000).toFixed(2)} s)); model slots busy ${calls.meanInFlight.toFixed(1)} of ${llmSlots} on average. Only meaningful when the runs in flight need more model calls at once than the slots serve (here ${concurrency} runs at once)`,
  );
  const serviceLine = split
    ? `service ${perRun(used.service)} (worker ${perRun(used.byProcess[0]!)}, API ${perRun(used.byProcess[1]!)})`
    : `dev (worker + API${values.pg ? '' : ' + PGlite'}) ${perRun(used.service)}`;
  console.log(
    `CPU-s per run:    ${serviceLine}, Temporal server ${perRun(used.temporal)}${values.pg ? `, PostgreSQL ${perRun(used.pg)} (of it the service's database ${perRun(used.pgService)})` : ''}; stack (their sum) ${perRun(used.stack)}`,
  );
  if (typeof sql === 'object') {
    console.log(
      `SQL per run:      the service's database ran ${sql.perRun.toFixed(1)} statements a run (pg_stat_statements); the most frequent:`,
    );
    for (const t of sql.top) console.log(`  ${t.perRun.toFixed(1).padStart(6)}  ${t.text}`);
  } else if (sql) console.log(`SQL per run:      not counted (${sql})`);
  if (warmup > 0)
    console.log(
      `warm-up:          ${split ? 'service' : 'dev'} (worker + API) ${warmupCpuPerRun.toFixed(3)} CPU-s per run over the ${warmup} warm-up runs`,
    );
  console.log(
    `machine:          ${(100 * idleShare).toFixed(0)}% idle over the load; the bench's own fakes used ${((benchCpu.user + benchCpu.system) / 1e6 / runs).toFixed(3)} CPU-s per run`,
  );
  console.log(
    `${`${workerLabel} by thread:`.padEnd(18)}${[...threads1]
      .map(([k, v]) => [k, v - (threads0.get(k) ?? 0)] as const)
      .filter(([, v]) => v / runs >= 0.005)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${perRun(v)}`)
      .join(', ')} (CPU-s per run)`,
  );
  console.log(
    `peak RSS:         ${workerLabel} ${peak.dev!.toFixed(0)} MB (${rssAtStart.toFixed(0)} MB before the load)${apiPid ? `, API ${peak.api!.toFixed(0)} MB` : ''}, Temporal server ${peak.temporal!.toFixed(0)} MB`,
  );
  const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
  console.log(
    `waits (p50/p95 ms): ${[...h.waits]
      .sort()
      .map(([k, xs]) => `${k} ${q(xs, 50).toFixed(0)}/${q(xs, 95).toFixed(0)}`)
      .join(', ')}`,
  );
  // Over the load's tenths: when the waits and the memory come (a burst of starts, a steady state).
  const tenth = wallMs / 10;
  const slices = Array.from({ length: 10 }, (_, i) => {
    const [from, to] = [startedAt + i * tenth, startedAt + (i + 1) * tenth];
    const waits = h.workflowTaskWaits.filter((w) => w.at >= from && w.at < to).map((w) => w.ms);
    const mb = rss.samples.filter((r) => r.at >= from && r.at < to).map((r) => r.mb.dev ?? 0);
    return `${waits.length ? q(waits, 95).toFixed(0) : '-'}/${mb.length ? Math.max(...mb).toFixed(0) : '-'}`;
  });
  console.log(
    `by tenth of the load (${(tenth / 1000).toFixed(0)} s each): workflow task schedule-to-start p95 ms / ${workerLabel} peak RSS MB: ${slices.join(', ')}`,
  );
  console.log(
    `history per run:  ${(h.events / runs).toFixed(0)} events, ${(h.workflowTasks / runs).toFixed(1)} workflow tasks, ${(h.activityTasks / runs).toFixed(1)} activity tasks, ${(h.bytes / runs / 1024).toFixed(1)} KB (run and its ${((h.workflows - runs) / runs).toFixed(1)} child workflows)`,
  );
  if (counters0 && counters1) for (const line of perRunLines(counters0, counters1, runs, 40)) console.log(line);
  console.log(
    `events/run:       ${[...h.eventTypes.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k.toLowerCase()} ${(v / runs).toFixed(1)}`)
      .join(', ')}`,
  );
  for (const [why, n] of [...h.workflowTaskFailures].sort((x, y) => y[1] - x[1])) console.log(`workflow task failed ${n}×: ${why}`);
  console.log(
    `activities/run:   ${[...h.activities.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${(v / runs).toFixed(1)}`)
      .join(', ')}`,
  );
  console.log(
    `model calls/run:  ${calls.callsPerRun.toFixed(1)}; tokens per run by role (the fake's counts: its usage answers), and the share of the role's prompt text reusable from earlier requests of its ${calls.prefixReuseRun === undefined ? 'load (runs overlapped)' : 'run'}:`,
  );
  for (const line of tokenTable(calls.byRole, calls.prefixReuseRun ?? calls.prefixReuseLoad)) console.log(line);
  console.log(
    `prefix reuse:     ${(100 * calls.prefixReuseResearcher).toFixed(0)}% of the researcher conversations' prompt text, ${(100 * calls.prefixReuseAll).toFixed(0)}% of all requests' (longest prefix shared with an earlier request of the same conversation)`,
  );
  console.log(
    `  against any earlier request: of its run ${calls.prefixReuseRun === undefined ? 'not told (runs overlapped: --concurrency 1 tells them apart)' : `${(100 * calls.prefixReuseRun).toFixed(0)}%`}, of the load ${(100 * calls.prefixReuseLoad).toFixed(0)}% (a provider caching across runs)`,
  );
  const d = calls.divergence;
  const researcherRequests = (calls.byRole.react?.calls ?? 0) * runs;
  console.log(
    `  researcher conversations: ${(calls.researcherConversations / runs).toFixed(1)} a run, ${(researcherRequests / Math.max(1, calls.researcherConversations)).toFixed(1)} tool-using requests each; ${(100 * calls.researcherFirstShare).toFixed(0)}% of their text is in first requests, which nothing earlier in the conversation could have cached`,
  );
  if (d && calls.prefixReuseResearcher < 0.6)
    console.log(
      `  where one parts from its predecessor (the worst of those that do): request ${d.index} keeps ${d.divergesAt} of its predecessor's ${d.predecessorLength} chars; after «…${d.context}»\n    predecessor: «${d.before}»\n    this one:    «${d.after}»`,
    );
  else if (!d) console.log('  every researcher request starts with the whole of the one before it in its conversation');
  for (const [cause, n] of api.retries) console.log(`client retries:   ${n} × ${cause}`);

  // --json FILE: the figures for bench/load-vs.ts, which compares two commits.
  if (values.json) {
    const fakesCpu = (benchCpu.user + benchCpu.system) / 1e6;
    writeFileSync(
      values.json,
      JSON.stringify({
        completed,
        runs,
        p50S: pct(50),
        p95S: pct(95),
        runsPerMin,
        saturationRatio: runsPerMin / allowedPerMin,
        stackCpuPerRun: used.stack / runs,
        devCpuPerRun: used.service / runs,
        ...(apiPid ? { workerCpuPerRun: used.byProcess[0]! / runs, apiCpuPerRun: used.byProcess[1]! / runs, apiPeakRssMb: peak.api } : {}),
        temporalCpuPerRun: used.temporal / runs,
        ...(values.pg ? { postgresCpuPerRun: used.pg / runs, postgresServiceCpuPerRun: used.pgService / runs } : {}),
        ...(typeof sql === 'object' ? { serviceStatementsPerRun: sql.perRun } : {}),
        // The fakes do the same work per run whatever the commit: their CPU tells how fast the
        // machine ran during this load, and the dev process's CPU in that unit drifts less.
        fakesCpuPerRun: fakesCpu / runs,
        devCpuPerFakesCpu: used.service / fakesCpu,
        peakRssMb: peak.dev,
        rssAtStartMb: rssAtStart,
        eventsPerRun: h.events / runs,
        workflowTasksPerRun: h.workflowTasks / runs,
        activityTasksPerRun: h.activityTasks / runs,
        historyKbPerRun: h.bytes / runs / 1024,
        activitiesPerRun: [...h.activities.values()].reduce((a, b) => a + b, 0) / runs,
        modelCallsPerRun: calls.callsPerRun,
        promptTokensPerRun: Object.values(calls.byRole).reduce((a, t) => a + t.prompt, 0),
        completionTokensPerRun: Object.values(calls.byRole).reduce((a, t) => a + t.completion, 0),
        prefixReuseResearcher: calls.prefixReuseResearcher,
        prefixReuseAll: calls.prefixReuseAll,
        ...(calls.prefixReuseRun === undefined ? {} : { prefixReuseRun: calls.prefixReuseRun }),
        prefixReuseLoad: calls.prefixReuseLoad,
        tokensByRole: calls.byRole,
        ...(warmup ? { warmupDevCpuPerRun: warmupCpuPerRun } : {}),
      }),
    );
  }
}

async function shutdown(): Promise<void> {
  await api.close();
  stack.api?.child.kill('SIGINT');
  await stack.api?.exited(60_000);
  dev.child.kill('SIGINT');
  await dev.exited(60_000);
  await server?.stop();
  await stack.close();
  if (values['cpu-prof']) console.log(`CPU profile(s):   ${path.join(os.tmpdir(), 'bench-load-profiles')}`);
}
