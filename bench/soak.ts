// Soak: `deep-research dev` under a steady submit rate for a long time (an hour is the real test;
// minutes check that the bench works), against the same fakes as bench/load.ts. Every interval it
// prints the dev process's RSS and heap, its event-loop delay (p99 and max, from its own /metrics),
// /healthz's answer time, and the run times of the runs that ended; at the end, whether each
// stayed flat: the first quarter of the measured intervals against the last.
//   npm run bench:soak -- --minutes 60 --rate 20 [--interval-s 60] [--warmup-s 120]
//        [--latency-ms 200] [--pg URL] [--env K=V]... [--json FILE]
// --rate: runs submitted per minute, evenly spaced whatever the stack's answers (an open loop:
// a stack that slows down builds a backlog instead of being given less). Each run is followed on
// its event stream to its end.
// --warmup-s: the first seconds are load like the rest but not compared (V8 compiles, caches and
// the database's buffers fill); the intervals before it are printed, marked.
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BenchApi } from './support/api-client';
import { startBenchStack } from './support/dev-stack';
import { median, quantile, slopePerHour, SoakSampler, verdicts, type Interval } from './support/soak-sampler';
import { questionOf, workloadRules } from './support/workload';
import { envPairs } from './support/env-args';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '60' },
    rate: { type: 'string', default: '20' },
    'interval-s': { type: 'string', default: '60' },
    'warmup-s': { type: 'string', default: '120' },
    'latency-ms': { type: 'string', default: '200' },
    pg: { type: 'string' },
    env: { type: 'string', multiple: true },
    json: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const intervalS = Number(values['interval-s']);
const warmupS = Number(values['warmup-s']);
for (const [k, v] of Object.entries({ minutes, rate, 'interval-s': intervalS })) {
  if (!(v > 0)) throw new Error(`--${k} is a positive number`);
}
if (!(warmupS >= 0) || warmupS >= minutes * 60) throw new Error('--warmup-s is a number of seconds shorter than the soak');
const extraEnv = envPairs(values.env);

// ---- the stack (as bench/load.ts starts it) ----------------------------------------------------

const stack = await startBenchStack({ name: 'bench-soak', latencyMs: Number(values['latency-ms']), pg: values.pg, env: extraEnv });
const { dev, llm, dir } = stack;
const db = values.pg;
const apiUrl = stack.apiUrl;
const api = new BenchApi(apiUrl);
// Research steps only: the sandbox's containers would make the figures Docker's.
llm.script(workloadRules('standard', false));

// ---- the load ----------------------------------------------------------------------------------

const batch = randomUUID().slice(0, 8);
const sampler = new SoakSampler(apiUrl, dev.child.pid!, intervalS);
const inFlight = new Set<Promise<void>>();
let submitted = 0;
let ended = 0;

async function oneRun(i: number): Promise<void> {
  const s0 = performance.now();
  const id = await api.submit(questionOf('soak', i), { autoAcceptPlan: true }, `soak-${batch}-${i}`);
  sampler.submitted();
  const status = await api.finished(id, 'events', 2000);
  ended++;
  sampler.ended((performance.now() - s0) / 1000, status);
}

async function load(): Promise<void> {
  const t0 = performance.now();
  const end = t0 + minutes * 60_000;
  for (let i = 0; ; i++) {
    const at = t0 + (i * 60_000) / rate;
    if (at >= end) break;
    await new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));
    submitted++;
    const p = oneRun(i).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  // The soak ends at its time: runs still in flight are a backlog, counted, not waited for long.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => (timer = setTimeout(r, 120_000)))]);
  clearTimeout(timer);
}

const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '–');
function line(iv: Interval, warm: boolean): string {
  return [
    `${fmt(iv.endS / 60, 1).padStart(5)} min${warm ? ' (warm-up)' : '          '}`,
    `RSS ${fmt(median(iv.rssMb)).padStart(4)} MB`,
    `heap ${fmt(median(iv.heapMb)).padStart(4)} MB`,
    `loop delay p99 ${fmt(Math.max(...iv.lagP99Ms), 1).padStart(6)} ms (max ${fmt(Math.max(...iv.lagMaxMs)).padStart(4)})`,
    `/healthz p95 ${fmt(quantile(iv.healthzMs, 0.95), 1).padStart(6)} ms`,
    `runs ${String(iv.runS.length).padStart(3)} ended, p95 ${fmt(quantile(iv.runS, 0.95), 1).padStart(5)} s${iv.failed ? `, ${iv.failed} not completed` : ''}`,
  ].join('  ');
}

try {
  console.log(
    `soak: ${rate} runs/min for ${minutes} min, intervals of ${intervalS} s, the first ${warmupS} s not compared; ` +
      `${db ? 'PostgreSQL' : 'PGlite'}, LLM latency ${values['latency-ms']} ms${values.env?.length ? `, ${values.env.join(' ')}` : ''}`,
  );
  const printer = setInterval(() => {
    const iv = sampler.intervals.at(-1);
    if (iv && !printed.has(iv)) {
      printed.add(iv);
      console.log(line(iv, iv.endS <= warmupS + 1));
    }
  }, 1_000);
  const printed = new Set<Interval>();
  await load();
  clearInterval(printer);
  sampler.stop();
  for (const iv of sampler.intervals.filter((i) => !printed.has(i))) console.log(line(iv, iv.endS <= warmupS + 1));
  report();
} finally {
  await api.close();
  dev.child.kill('SIGINT');
  await dev.exited(60_000).catch(() => undefined);
  await stack.close();
  // An hour of runs leaves a database and a Temporal history file of some size: not kept.
  rmSync(dir, { recursive: true, force: true });
}

function report(): void {
  const measured = sampler.intervals.filter((i) => i.endS > warmupS + 1);
  const all = sampler.intervals.flatMap((i) => i.runS);
  const failed = sampler.intervals.reduce((a, i) => a + i.failed, 0);
  console.log(
    `\nruns: ${submitted} submitted, ${ended} ended (${failed} not completed), ${submitted - ended} still in flight at the end; ` +
      `run time p50 ${fmt(quantile(all, 0.5), 1)} s, p95 ${fmt(quantile(all, 0.95), 1)} s`,
  );
  if (sampler.metricsProblem) console.log(`note: /metrics could not be read (${sampler.metricsProblem}): no heap or loop delay figures`);
  const rssSlope = slopePerHour(measured.map((i) => [i.endS, median(i.rssMb)]));
  const heapSlope = slopePerHour(measured.map((i) => [i.endS, median(i.heapMb)]));
  const spanMin = measured.length ? (measured.at(-1)!.endS - measured[0]!.endS) / 60 : 0;
  console.log(
    `trend: RSS ${fmt(rssSlope, 1)} MB/h, heap ${fmt(heapSlope, 1)} MB/h (least squares over ${fmt(spanMin, 1)} min of measured intervals: ` +
      `noise over minutes, a leak's rate over an hour)`,
  );
  const v = verdicts(measured);
  console.log(`first quarter → last quarter of ${measured.length} measured intervals:`);
  for (const x of v) {
    const d = x.unit === 's' ? 1 : x.unit === 'ms' ? 1 : 0;
    console.log(
      `  ${x.name.padEnd(22)} ${fmt(x.first, d).padStart(7)} → ${fmt(x.last, d).padStart(7)} ${x.unit.padEnd(3)} ${x.flat ? 'flat' : 'GROWS'} (${x.rule})`,
    );
  }
  if (submitted - ended > rate)
    console.log(`backlog: ${submitted - ended} runs in flight at the end: the stack did not keep up with ${rate}/min`);
  if (values.json)
    writeFileSync(
      values.json,
      JSON.stringify({ submitted, ended, failed, rssSlope, heapSlope, verdicts: v, intervals: sampler.intervals }),
    );
}
