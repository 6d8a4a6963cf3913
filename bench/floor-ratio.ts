// The whole stack's CPU per run against Temporal's floor for the same shape, in alternating rounds
// of one command: each round runs bench:temporal-floor (its `run` shape: the standard workload's
// workflows, queues and child workflows with activities that do nothing; the Temporal dev server
// and the SDK alone) and bench:load (the standard workload through the API: service, Temporal
// server and, with --pg, PostgreSQL), in turn, the one that goes first alternating, and prints
// each process's CPU per run, the stack's sum, the floor's sum and their ratio, then the medians.
//   npm run bench:floor-ratio -- [--rounds 4] [--runs 100] [--concurrency 100] [--warmup 100]
//        [--temporal real --pg <admin URL> [--history-shards N]] [--floor-shape run|slow] [-- <more bench:load arguments>]
// --floor-shape slow: the floor's model activities take as long as the load's model calls and
// wait in the queue as theirs do (bench:temporal-floor's `slow`, which matches bench:load's
// default latency and LLM_CONCURRENCY), instead of returning at once; the floor bench then runs
// `run` too, and the table gives the ratio to both.
// The floor's workflow threads run with the product's defaults, or with the load's own `--env` values
// of WORKFLOW_STACK_TRACES and WORKFLOW_VM_WATCHDOG where given, so both sides run the same SDK.
// With --pg the stack's PostgreSQL is also given apart: the service's own database's backends.
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
    temporal: { type: 'string', default: 'dev' },
    pg: { type: 'string' },
    'history-shards': { type: 'string', default: '4' },
    'floor-shape': { type: 'string', default: 'run' },
  },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds is a number of rounds, not ${values.rounds}`);
const size = ['--runs', values.runs, '--concurrency', values.concurrency, '--warmup', values.warmup];
// --temporal real --pg <admin URL>: both benches on the real Temporal server on PostgreSQL (the
// production shape); PostgreSQL's CPU counts on both sides (the floor's is the server's persistence).
const real = values.temporal === 'real';
if (!real && values.temporal !== 'dev') throw new Error(`--temporal is dev or real, not ${values.temporal}`);
if (real && !values.pg) throw new Error('--temporal real needs --pg <admin URL>');
const production = real
  ? ['--temporal', 'real', '--pg', values.pg!, '--history-shards', values['history-shards']!]
  : values.pg
    ? ['--pg', values.pg]
    : [];

const shape = values['floor-shape']!;
if (shape !== 'run' && shape !== 'slow') throw new Error(`--floor-shape is run or slow, not ${shape}`);

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
  floorPostgres: number;
  floorSdk: number;
  dev: number;
  temporal: number;
  postgres: number;
  /** Of `postgres`, the service's own database. */
  postgresService: number;
  completed: number;
  /** The `run` shape's floor (all its processes), for the second ratio when the floor is `slow`. */
  runFloor: number;
}

/** The load's `--env` settings of the workflow threads, given to the floor's worker as well, so that
 *  both run the same SDK (the product's defaults unless set). */
const THREAD_SETTINGS = /^(WORKFLOW_STACK_TRACES|WORKFLOW_VM_WATCHDOG)=/;
const threadEnv = positionals.flatMap((a, k) => {
  const kv = a.startsWith('--env=') ? a.slice('--env='.length) : a === '--env' ? positionals[k + 1] : undefined;
  return kv !== undefined && THREAD_SETTINGS.test(kv) ? ['--env', kv] : [];
});

function floorRound(r: number): Pick<Round, 'floorServer' | 'floorPostgres' | 'floorSdk' | 'runFloor'> {
  // bench:temporal-floor compares every shape with `run`, so `run` is always among them.
  const shapes = shape === 'run' ? 'run' : `run,${shape}`;
  const f = bench('bench/temporal-floor.ts', [...size, ...production, ...threadEnv, '--shapes', shapes, '--rounds', '1'], `floor-${r}`) as {
    shapes: Record<string, { server: number[]; worker: number[]; postgres: number[] }>;
  };
  const sum = (s: { server: number[]; worker: number[]; postgres: number[] }) => s.server[0]! + s.postgres[0]! + s.worker[0]!;
  const s = f.shapes[shape]!;
  return { floorServer: s.server[0]!, floorPostgres: s.postgres[0]!, floorSdk: s.worker[0]!, runFloor: sum(f.shapes.run!) };
}

function loadRound(r: number): Pick<Round, 'dev' | 'temporal' | 'postgres' | 'postgresService' | 'completed'> {
  const l = bench('bench/load.ts', [...size, ...production, '--workload', 'standard', ...positionals], `load-${r}`) as {
    devCpuPerRun: number;
    temporalCpuPerRun: number;
    postgresCpuPerRun?: number;
    postgresServiceCpuPerRun?: number;
    completed: number;
    runs: number;
  };
  if (l.completed !== l.runs) throw new Error(`bench:load completed ${l.completed} of ${l.runs} runs: no figure`);
  return {
    dev: l.devCpuPerRun,
    temporal: l.temporalCpuPerRun,
    postgres: l.postgresCpuPerRun ?? 0,
    postgresService: l.postgresServiceCpuPerRun ?? 0,
    completed: l.completed,
  };
}

const stackOf = (x: Round) => x.dev + x.temporal + x.postgres;
const floorOf = (x: Round) => x.floorServer + x.floorPostgres + x.floorSdk;
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
// Columns: the floor's processes, its sum, the stack's processes, its sum, the ratio.
const columns: [string, (x: Round) => number][] = [
  ['floor: Temporal server', (x) => x.floorServer],
  ...(real ? ([['floor: its PostgreSQL', (x: Round) => x.floorPostgres]] as [string, (x: Round) => number][]) : []),
  ['floor: SDK', (x) => x.floorSdk],
  ['floor', floorOf],
  [`service (worker + API${pg ? '' : ' + PGlite'})`, (x) => x.dev],
  ['Temporal server', (x) => x.temporal],
  ...(pg
    ? ([
        ['PostgreSQL', (x: Round) => x.postgres],
        ["of it the service's database", (x: Round) => x.postgresService],
      ] as [string, (x: Round) => number][])
    : []),
  ['stack', stackOf],
];
const ratios: [string, (x: Round) => number][] = [
  ['stack ÷ floor', (x) => stackOf(x) / floorOf(x)],
  ...(shape === 'run' ? [] : ([['stack ÷ `run` floor', (x: Round) => stackOf(x) / x.runFloor]] as [string, (x: Round) => number][])),
];
const row = (label: string, cells: string[]) => `| ${[label, ...cells].join(' | ')} |`;
console.log(
  `\nfloor ratio${real ? ' (the real Temporal server on PostgreSQL)' : ' (the dev server)'}, the floor's \`${shape}\` shape: ${rounds} round(s), ${values.runs} runs each, ${values.concurrency} at once, after ${values.warmup} warm-up runs; CPU-s per run`,
);
console.log(
  row(
    'round',
    [...columns, ...ratios].map(([name]) => name),
  ),
);
console.log(
  row(
    '---',
    [...columns, ...ratios].map(() => '---'),
  ),
);
const times = (x: number) => `${x.toFixed(2)}×`;
for (const [i, x] of done.entries())
  console.log(row(String(i + 1), [...columns.map(([, f]) => f3(f(x))), ...ratios.map(([, f]) => times(f(x)))]));
console.log(row('median', [...columns.map(([, f]) => f3(median(done.map(f)))), ...ratios.map(([, f]) => times(median(done.map(f))))]));
