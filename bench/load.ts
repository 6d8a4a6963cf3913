// Load on one machine: the standard workload through the HTTP API of `deep-research dev` (runs of 1
// to 3 steps, every third run with a processing step when the sandbox image exists), with an
// OpenAI-compatible fake at a fixed latency, a SearXNG-shaped search server and a fixture site.
// Prints, in one run: completed, p50/p95 run time, runs per minute, CPU-seconds per run of each
// process (dev = worker + API [+ PGlite], the Temporal server, PostgreSQL when --pg is given),
// peak RSS, history events and bytes per run (parent and steps), and activities per run by type.
//   npm run bench:load -- --runs 40 --concurrency 40 --latency-ms 200 [--pg URL] [--cpu-prof]
//        [--follow events|poll] [--poll-ms 2000] [--llm-rate 1000] [--warmup N] [--env K=V]...
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
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { findTemporalCli } from '../src/infra/temporal-cli';
import { FixtureSite } from '../test/support/fixture-site';
import { ScriptedLlmServer } from '../test/support/llm-server';
import { planJson, researchRules, searchResults } from '../test/support/research-script';
import { FakeSearxng } from '../test/support/search-server';
import { freePort, spawnCli } from '../test/support/spawn';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '20' },
    'latency-ms': { type: 'string', default: '200' },
    pg: { type: 'string' },
    'cpu-prof': { type: 'boolean' },
    'no-coder': { type: 'boolean' },
    follow: { type: 'string', default: 'events' },
    'poll-ms': { type: 'string', default: '2000' },
    'llm-rate': { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '0' },
    env: { type: 'string', multiple: true },
    json: { type: 'string' },
  },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const latency = Number(values['latency-ms']);
const follow = values.follow;
if (follow !== 'events' && follow !== 'poll') throw new Error(`--follow is events or poll, not ${follow}`);
const pollMs = Number(values['poll-ms']);
const warmup = Number(values.warmup);
if (!Number.isInteger(warmup) || warmup < 0) throw new Error(`--warmup is a number of runs, not ${values.warmup}`);

// ---- processes: CPU time and RSS from /proc ----------------------------------------------------

const TICK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** utime + stime of a process; with `reaped`, also what its exited children used (cutime + cstime). */
function cpuSeconds(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) / TICK;
  } catch {
    return 0;
  }
}
/** PostgreSQL's CPU so far: every server process now, plus the backends that already exited
 *  (reaped by the postmaster, counted in its children's time). */
function postgresCpu(): Map<number, number> {
  const pids = postgresPids();
  const postmaster = pids.filter((p) => !pids.includes(parentOf(p)));
  return new Map(pids.map((p) => [p, cpuSeconds(p, postmaster.includes(p))]));
}
function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}
/** PostgreSQL's server processes: the postmaster and its backends (by process name). */
function postgresPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/comm`, 'utf8').trim().startsWith('postgres');
      } catch {
        return false;
      }
    })
    .map(Number);
}

// ---- the stack ---------------------------------------------------------------------------------

const cli = findTemporalCli({ envPath: process.env.PATH, explicitPath: process.env.TEMPORAL_CLI_PATH, install: true });
if (!cli) throw new Error('no Temporal CLI');
const site = await new FixtureSite().start();
const llm = await new ScriptedLlmServer().start();
llm.latencyMs = latency;
const search = await new FakeSearxng({}, searchResults(site.url)).start();
const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-load-'));
const [tp, up, ap, pp] = [await freePort(), await freePort(), await freePort(), await freePort()];
const dev = spawnCli(
  ['dev'],
  {
    DATA_DIR: dir,
    TEMPORAL_CLI_PATH: cli.path,
    TEMPORAL_PORT: String(tp),
    TEMPORAL_UI_PORT: String(up),
    API_PORT: String(ap),
    PGLITE_PORT: String(pp),
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'sk-bench',
    LOG_LEVEL: 'warn',
    SEARCH_PROVIDERS: 'searxng',
    SEARXNG_URL: search.url,
    CRAWL_ALLOW_HOSTS: '127.0.0.1',
    RATE_LIMIT_SUBMITS: '100000',
    RATE_LIMIT_READS: '1000000',
    LLM_QUEUE_RATE: values['llm-rate'],
    SEARCH_QUEUE_RATE: values['llm-rate'],
    SEARCH_RATE_LIMITS: `searxng=${values['llm-rate']}`,
    SEARCH_CONCURRENCY: '32',
    ...(values['no-coder'] ? { RESEARCHER_PYTHON: 'false' } : {}),
    ...(values.pg ? { DATABASE_URL: values.pg } : {}),
    // --env K=V: any other setting of the dev process (e.g. LLM_CONCURRENCY=64), printed below.
    ...Object.fromEntries((values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
  },
  values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, 'profiles')}`] : [],
);
const api = `http://127.0.0.1:${ap}`;
await dev.waitFor(/deep-research is running/, 180_000);
const devPid = dev.child.pid!;
const temporalPid = childrenOf(devPid).find((p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim().startsWith('temporal'));
if (!temporalPid) throw new Error('the Temporal dev server process was not found');

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

/** Run i: 1 to 3 steps; every third run ends with a processing step (with the sandbox). */
function planFor(i: number) {
  const n = (i % 3) + 1;
  const steps: { id: string; type?: 'research' | 'processing'; dependsOn?: string[] }[] = Array.from({ length: n }, (_, k) => ({
    id: `s${k + 1}`,
  }));
  if (sandboxReady && i % 3 === 2) steps[n - 1] = { id: `s${n}`, type: 'processing', dependsOn: steps.slice(0, n - 1).map((s) => s.id) };
  return planJson(steps);
}
// Plans by order of the planner's calls: 1, 2, 3 steps in turn (the planner sees the rewritten
// question, not the original, so the question cannot say which run it is).
llm.script(researchRules({ planner: (_req, n) => ({ json: planFor(n) }) }));

async function post(body: unknown): Promise<string> {
  const r = await fetch(`${api}/v1/research`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status !== 202) throw new Error(`POST /v1/research: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { id: string }).id;
}
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
async function status(id: string): Promise<string> {
  return ((await (await fetch(`${api}/v1/research/${id}`)).json()) as { status: string }).status;
}
/** Reads the run's event stream to its end (the `done` event), then its status once. */
async function drainEvents(id: string): Promise<void> {
  const r = await fetch(`${api}/v1/research/${id}/events`, { headers: { accept: 'text/event-stream' } });
  if (!r.ok || !r.body) throw new Error(`GET /v1/research/${id}/events: ${r.status}`);
  const reader = r.body.getReader();
  while (!(await reader.read()).done);
}
async function finished(id: string): Promise<string> {
  for (;;) {
    if (follow === 'events') await drainEvents(id);
    const s = await status(id);
    if (TERMINAL.has(s)) return s;
    await new Promise((r) => setTimeout(r, follow === 'events' ? 1000 : pollMs));
  }
}

/** Runs `count` runs, `concurrency` at a time; returns each run's id, final status and time. */
async function drive(count: number, label: string): Promise<{ ids: string[]; statuses: string[]; times: number[] }> {
  const out = { ids: [] as string[], statuses: [] as string[], times: [] as number[] };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const s0 = performance.now();
        const id = await post({ question: `How cheap is solar power now? (${label} run ${i})`, options: { autoAcceptPlan: true } });
        out.ids.push(id);
        out.statuses.push(await finished(id));
        out.times.push(performance.now() - s0);
      }
    }),
  );
  return out;
}
/** The dev process's CPU-seconds per run over the warm-up, printed against the measured load's. */
let warmupCpuPerRun = 0;
if (warmup > 0) {
  const before = cpuSeconds(devPid);
  const w = await drive(warmup, 'warm-up');
  warmupCpuPerRun = (cpuSeconds(devPid) - before) / warmup;
  const failed = w.statuses.filter((s) => s !== 'completed').length;
  if (failed) throw new Error(`${failed} of ${warmup} warm-up runs did not complete`);
}

const pg0 = values.pg ? postgresCpu() : new Map<number, number>();
const cpu0 = { dev: cpuSeconds(devPid), temporal: cpuSeconds(temporalPid) };
/** CPU-seconds of the dev process by thread (main JS thread, the workflow and extraction threads,
 *  V8's platform threads, Core's tokio threads), so a profile of one thread is read in proportion. */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const statOf = (tid: string) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const mainStart = Number(statOf(String(pid))[19]);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8')
        .trim()
        .replace(/[-_:]?\d+$/, '');
      const f = statOf(tid);
      // Node names none of its own threads: the main thread is the one whose id is the process's;
      // V8's platform threads (garbage collection, compilers) start with the process (within a
      // second of it); the JS worker threads (workflow thread, page extraction) start later.
      const startedLate = (Number(f[19]) - mainStart) / TICK > 1;
      const key = name === 'node' ? (tid === String(pid) ? 'main' : startedLate ? 'JS worker threads' : 'V8 platform threads') : name;
      out.set(key, (out.get(key) ?? 0) + (Number(f[11]) + Number(f[12])) / TICK);
    } catch {
      // the thread ended
    }
  }
  return out;
}
const threads0 = threadCpu(devPid);
const rssAtStart = rssMb(devPid);
const peak = { dev: rssAtStart, temporal: rssMb(temporalPid) };
const sampler = setInterval(() => {
  peak.dev = Math.max(peak.dev, rssMb(devPid));
  peak.temporal = Math.max(peak.temporal, rssMb(temporalPid));
}, 250);

/** Jiffies of the whole machine: [idle + iowait, all]. */
function machineJiffies(): [number, number] {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [f[3]! + f[4]!, f.reduce((a, b) => a + b, 0)];
}
const machine0 = machineJiffies();
const bench0 = process.cpuUsage();
const t0 = performance.now();
const { ids, statuses, times } = await drive(runs, 'load');
const wallS = (performance.now() - t0) / 1000;
clearInterval(sampler);
const machine1 = machineJiffies();
const idleShare = (machine1[0] - machine0[0]) / (machine1[1] - machine0[1]);
const benchCpu = process.cpuUsage(bench0);
const threads1 = threadCpu(devPid);
const cpu = {
  dev: cpuSeconds(devPid) - cpu0.dev,
  temporal: cpuSeconds(temporalPid) - cpu0.temporal,
  pg: values.pg ? [...postgresCpu()].reduce((a, [pid, t]) => a + t - (pg0.get(pid) ?? 0), 0) : 0,
};

// ---- histories: events, bytes, activities by type -----------------------------------------------

const connection = await Connection.connect({ address: `127.0.0.1:${tp}` });
const client = new Client({ connection });
let events = 0;
let bytes = 0;
const activities = new Map<string, number>();
/** Waits and durations in ms, by what they measure: where the time of a run goes under load. */
const waits = new Map<string, number[]>();
const addWait = (k: string, ms: number) => waits.set(k, [...(waits.get(k) ?? []), ms]);
const ms = (t: unknown) =>
  t ? Number((t as { seconds?: unknown }).seconds ?? 0) * 1000 + Number((t as { nanos?: number }).nanos ?? 0) / 1e6 : 0;
for (const id of ids) {
  const queue = [id];
  while (queue.length) {
    const wid = queue.shift()!;
    const handle = client.workflow.getHandle(wid);
    const desc = await handle.describe();
    bytes += Number(desc.raw.workflowExecutionInfo?.historySizeBytes ?? 0);
    const history = await handle.fetchHistory();
    const at = new Map<string, number>();
    const queueOf = new Map<string, string>();
    for (const e of history.events ?? []) {
      events++;
      const t = ms(e.eventTime);
      at.set(String(e.eventId), t);
      const sched = e.activityTaskScheduledEventAttributes;
      if (sched) queueOf.set(String(e.eventId), (sched.taskQueue?.name ?? '').replace(/^[^-]*/, 'main'));
      const started = e.activityTaskStartedEventAttributes;
      if (started)
        addWait(
          `activity schedule-to-start (${queueOf.get(String(started.scheduledEventId))})`,
          t - at.get(String(started.scheduledEventId))!,
        );
      const done = e.activityTaskCompletedEventAttributes;
      if (done) addWait('activity run', t - at.get(String(done.startedEventId))!);
      const wftStarted = e.workflowTaskStartedEventAttributes;
      if (wftStarted) addWait('workflow task schedule-to-start', t - at.get(String(Number(e.eventId) - 1))!);
      const wftDone = e.workflowTaskCompletedEventAttributes;
      if (wftDone) addWait('workflow task run', t - at.get(String(wftDone.startedEventId))!);
      const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type) activities.set(type, (activities.get(type) ?? 0) + 1);
      const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
      if (child) queue.push(child);
    }
  }
}
await connection.close();

// ---- report ------------------------------------------------------------------------------------

const sorted = [...times].sort((a, b) => a - b);
const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! / 1000;
const completed = statuses.filter((s) => s === 'completed').length;
console.log(
  `load: ${runs} runs, ${concurrency} at once, LLM latency ${latency} ms, model calls and searches at most ${values['llm-rate']}/s, ${values.pg ? 'PostgreSQL' : 'PGlite'}, ${sandboxReady ? 'a processing step in every third run' : 'no sandbox image: research steps only'}, ${follow === 'events' ? 'clients follow the event stream' : `clients poll the status every ${pollMs} ms`}${warmup ? `, after ${warmup} warm-up runs` : ', a fresh process'}${values.env?.length ? `, ${values.env.join(' ')}` : ''}`,
);
console.log(`completed:        ${completed}/${runs}`);
console.log(`run time:         p50 ${pct(50).toFixed(1)} s, p95 ${pct(95).toFixed(1)} s`);
console.log(`throughput:       ${((runs / wallS) * 60).toFixed(1)} runs/min (${wallS.toFixed(1)} s in all)`);
console.log(
  `CPU-s per run:    dev (worker + API${values.pg ? '' : ' + PGlite'}) ${(cpu.dev / runs).toFixed(3)}, Temporal server ${(cpu.temporal / runs).toFixed(3)}${values.pg ? `, PostgreSQL ${(cpu.pg / runs).toFixed(3)}` : ''}`,
);
if (warmup > 0)
  console.log(`warm-up:          dev (worker + API) ${warmupCpuPerRun.toFixed(3)} CPU-s per run over the ${warmup} warm-up runs`);
console.log(
  `machine:          ${(100 * idleShare).toFixed(0)}% idle over the load; the bench's own fakes used ${((benchCpu.user + benchCpu.system) / 1e6 / runs).toFixed(3)} CPU-s per run`,
);
console.log(
  `dev by thread:    ${[...threads1]
    .map(([k, v]) => [k, v - (threads0.get(k) ?? 0)] as const)
    .filter(([, v]) => v / runs >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${(v / runs).toFixed(3)}`)
    .join(', ')} (CPU-s per run)`,
);
console.log(
  `peak RSS:         dev ${peak.dev.toFixed(0)} MB (${rssAtStart.toFixed(0)} MB before the load), Temporal server ${peak.temporal.toFixed(0)} MB`,
);
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
console.log(
  `waits (p50/p95 ms): ${[...waits]
    .sort()
    .map(([k, xs]) => `${k} ${q(xs, 50).toFixed(0)}/${q(xs, 95).toFixed(0)}`)
    .join(', ')}`,
);
console.log(`history per run:  ${(events / runs).toFixed(0)} events, ${(bytes / runs / 1024).toFixed(1)} KB (run and its steps)`);
console.log(
  `activities/run:   ${[...activities.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${(v / runs).toFixed(1)}`)
    .join(', ')}`,
);

// --json FILE: the figures for bench/load-vs.ts, which compares two commits.
if (values.json) {
  writeFileSync(
    values.json,
    JSON.stringify({
      completed,
      runs,
      p50S: pct(50),
      p95S: pct(95),
      runsPerMin: (runs / wallS) * 60,
      devCpuPerRun: cpu.dev / runs,
      temporalCpuPerRun: cpu.temporal / runs,
      // The fakes do the same work per run whatever the commit: their CPU tells how fast the
      // machine ran during this load, and the dev process's CPU in that unit drifts less.
      fakesCpuPerRun: (benchCpu.user + benchCpu.system) / 1e6 / runs,
      devCpuPerFakesCpu: cpu.dev / ((benchCpu.user + benchCpu.system) / 1e6),
      ...(values.pg ? { postgresCpuPerRun: cpu.pg / runs } : {}),
      peakRssMb: peak.dev,
      rssAtStartMb: rssAtStart,
      eventsPerRun: events / runs,
      historyKbPerRun: bytes / runs / 1024,
      activitiesPerRun: [...activities.values()].reduce((a, b) => a + b, 0) / runs,
      ...(warmup ? { warmupDevCpuPerRun: warmupCpuPerRun } : {}),
    }),
  );
}

dev.child.kill('SIGINT');
await dev.exited(60_000);
if (values['cpu-prof']) console.log(`CPU profile(s):   ${path.join(dir, 'profiles')}`);
await llm.close();
await search.close();
await site.close();
