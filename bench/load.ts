// Load on one machine: the standard workload through the HTTP API of `deep-research dev` (runs of 1
// to 3 steps, every third run with a processing step when the sandbox image exists), with an
// OpenAI-compatible fake at a fixed latency, a SearXNG-shaped search server and a fixture site.
// Prints, in one run: completed, p50/p95 run time, runs per minute, CPU-seconds per run of each
// process (dev = worker + API [+ PGlite], the Temporal server, PostgreSQL when --pg is given),
// peak RSS, history events and bytes per run (parent and steps), and activities per run by type.
//   npm run bench:load -- --runs 40 --concurrency 40 --latency-ms 200 [--pg URL] [--cpu-prof]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
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
  },
});
const runs = Number(values.runs);
const concurrency = Number(values.concurrency);
const latency = Number(values['latency-ms']);

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
    ...(values['no-coder'] ? { RESEARCHER_PYTHON: 'false' } : {}),
    ...(values.pg ? { DATABASE_URL: values.pg } : {}),
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
async function finished(id: string): Promise<string> {
  for (;;) {
    const v = (await (await fetch(`${api}/v1/research/${id}`)).json()) as { status: string };
    if (v.status === 'completed' || v.status === 'failed' || v.status === 'cancelled') return v.status;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const pg0 = values.pg ? postgresCpu() : new Map<number, number>();
const cpu0 = { dev: cpuSeconds(devPid), temporal: cpuSeconds(temporalPid) };
const peak = { dev: rssMb(devPid), temporal: rssMb(temporalPid) };
const sampler = setInterval(() => {
  peak.dev = Math.max(peak.dev, rssMb(devPid));
  peak.temporal = Math.max(peak.temporal, rssMb(temporalPid));
}, 250);

const t0 = performance.now();
const times: number[] = [];
const ids: string[] = [];
const statuses: string[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(concurrency, runs) }, async () => {
    while (next < runs) {
      const i = next++;
      const s0 = performance.now();
      const id = await post({ question: `How cheap is solar power now? (load run ${i})`, options: { autoAcceptPlan: true } });
      ids.push(id);
      statuses.push(await finished(id));
      times.push(performance.now() - s0);
    }
  }),
);
const wallS = (performance.now() - t0) / 1000;
clearInterval(sampler);
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
for (const id of ids) {
  const queue = [id];
  while (queue.length) {
    const wid = queue.shift()!;
    const handle = client.workflow.getHandle(wid);
    const desc = await handle.describe();
    bytes += Number(desc.raw.workflowExecutionInfo?.historySizeBytes ?? 0);
    const history = await handle.fetchHistory();
    for (const e of history.events ?? []) {
      events++;
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
  `load: ${runs} runs, ${concurrency} at once, LLM latency ${latency} ms, ${values.pg ? 'PostgreSQL' : 'PGlite'}, ${sandboxReady ? 'a processing step in every third run' : 'no sandbox image: research steps only'}`,
);
console.log(`completed:        ${completed}/${runs}`);
console.log(`run time:         p50 ${pct(50).toFixed(1)} s, p95 ${pct(95).toFixed(1)} s`);
console.log(`throughput:       ${((runs / wallS) * 60).toFixed(1)} runs/min (${wallS.toFixed(1)} s in all)`);
console.log(
  `CPU-s per run:    dev (worker + API${values.pg ? '' : ' + PGlite'}) ${(cpu.dev / runs).toFixed(3)}, Temporal server ${(cpu.temporal / runs).toFixed(3)}${values.pg ? `, PostgreSQL ${(cpu.pg / runs).toFixed(3)}` : ''}`,
);
console.log(`peak RSS:         dev ${peak.dev.toFixed(0)} MB, Temporal server ${peak.temporal.toFixed(0)} MB`);
console.log(`history per run:  ${(events / runs).toFixed(0)} events, ${(bytes / runs / 1024).toFixed(1)} KB (run and its steps)`);
console.log(
  `activities/run:   ${[...activities.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${(v / runs).toFixed(1)}`)
    .join(', ')}`,
);

dev.child.kill('SIGINT');
await dev.exited(60_000);
if (values['cpu-prof']) console.log(`CPU profile(s):   ${path.join(dir, 'profiles')}`);
await llm.close();
await search.close();
await site.close();
