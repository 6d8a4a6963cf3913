// The whole stack's CPU per run against Temporal's floor for the same shape, in alternating rounds
// of one command: each round runs bench:temporal-floor (its `run` shape: the standard workload's
// workflows, queues and child workflows with activities that do nothing; the Temporal dev server
// and the SDK alone) and bench:load (the standard workload through the API: service, Temporal
// server and, with --pg, PostgreSQL), in turn, the one that goes first alternating, and prints
// each process's CPU per run, the stack's sum, the floor's sum and their ratio, then the medians.
//   npm run bench:floor-ratio -- [--rounds 4] [--runs 100] [--concurrency 100] [--warmup 100] [-- <more bench:load arguments>]
// The machine's speed drifts by tens of percent over minutes: only a ratio of the same round means
// anything, and the median of those is the figure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../src/infra/paths';

const { values, positionals } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    runs: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '100' },
  },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds is a number of rounds, not ${values.rounds}`);
const size = ['--runs', values.runs, '--concurrency', values.concurrency, '--warmup', values.warmup];

const work = mkdtempSync(path.join(os.tmpdir(), 'floor-ratio-'));

/** One bench's figures, from its --json file. */
function bench(script: string, args: string[], label: string): Record<string, unknown> {
  const out = path.join(work, `${label}.json`);
  const r = spawnSync(
    process.execPath,
    [path.join(PROJECT_ROOT, 'bin', 'run-ts.mjs'), path.join(PROJECT_ROOT, script), ...args, '--json', out],
    {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (r.status !== 0) throw new Error(`${script} exited ${r.status}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
}

interface Round {
  floorServer: number;
  floorSdk: number;
  dev: number;
  temporal: number;
  postgres: number;
  completed: number;
}

function floorRound(r: number): Pick<Round, 'floorServer' | 'floorSdk'> {
  const f = bench('bench/temporal-floor.ts', [...size, '--shapes', 'run', '--rounds', '1'], `floor-${r}`) as {
    shapes: { run: { server: number[]; worker: number[] } };
  };
  return { floorServer: f.shapes.run.server[0]!, floorSdk: f.shapes.run.worker[0]! };
}

function loadRound(r: number): Pick<Round, 'dev' | 'temporal' | 'postgres' | 'completed'> {
  const l = bench('bench/load.ts', [...size, '--workload', 'standard', ...positionals], `load-${r}`) as {
    devCpuPerRun: number;
    temporalCpuPerRun: number;
    postgresCpuPerRun?: number;
    completed: number;
    runs: number;
  };
  if (l.completed !== l.runs) throw new Error(`bench:load completed ${l.completed} of ${l.runs} runs: no figure`);
  return { dev: l.devCpuPerRun, temporal: l.temporalCpuPerRun, postgres: l.postgresCpuPerRun ?? 0, completed: l.completed };
}

const stackOf = (x: Round) => x.dev + x.temporal + x.postgres;
const floorOf = (x: Round) => x.floorServer + x.floorSdk;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const f3 = (x: number) => x.toFixed(3);

const done: Round[] = [];
try {
  for (let r = 0; r < rounds; r++) {
    console.log(`\n=== round ${r + 1}/${rounds}: ${r % 2 ? 'load, then floor' : 'floor, then load'} ===`);
    const floor = r % 2 ? undefined : floorRound(r);
    const load = loadRound(r);
    done.push({ ...(floor ?? floorRound(r)), ...load });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const pg = done.some((x) => x.postgres > 0);
console.log(
  `\nfloor ratio: ${rounds} round(s), ${values.runs} runs each, ${values.concurrency} at once, after ${values.warmup} warm-up runs; CPU-s per run`,
);
console.log(
  `| round | floor: Temporal server | floor: SDK | floor | service (worker + API${pg ? '' : ' + PGlite'}) | Temporal server |${pg ? ' PostgreSQL |' : ''} stack | stack ÷ floor |`,
);
console.log(`| --- | --- | --- | --- | --- | --- |${pg ? ' --- |' : ''} --- | --- |`);
for (const [i, x] of done.entries()) {
  console.log(
    `| ${i + 1} | ${f3(x.floorServer)} | ${f3(x.floorSdk)} | ${f3(floorOf(x))} | ${f3(x.dev)} | ${f3(x.temporal)} |${pg ? ` ${f3(x.postgres)} |` : ''} ${f3(stackOf(x))} | ${(stackOf(x) / floorOf(x)).toFixed(2)}× |`,
  );
}
console.log(
  `| median | ${f3(median(done.map((x) => x.floorServer)))} | ${f3(median(done.map((x) => x.floorSdk)))} | ${f3(median(done.map(floorOf)))} | ${f3(median(done.map((x) => x.dev)))} | ${f3(median(done.map((x) => x.temporal)))} |${pg ? ` ${f3(median(done.map((x) => x.postgres)))} |` : ''} ${f3(median(done.map(stackOf)))} | ${median(done.map((x) => stackOf(x) / floorOf(x))).toFixed(2)}× |`,
);
