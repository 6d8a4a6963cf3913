// The worker's CPU per workflow run, measured by replaying recorded histories (a reviewed research
// run and its researcher step, test/histories/*-lean-v13.json) many times: no server, network or
// activities, only the SDK and the workflow code, on a workflow thread as a worker runs them (not in
// the replayer's default debug mode). Rounds alternate between workflow stack traces off
// (the default) and on (WORKFLOW_STACK_TRACES=true, the SDK's promise hook), and it prints the ratio.
//   npm run bench:workflow-cpu -- [--times 100] [--rounds 3]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../src/worker';

const { values } = parseArgs({ options: { times: { type: 'string', default: '100' }, rounds: { type: 'string', default: '3' } } });
const times = Number(values.times);
const rounds = Number(values.rounds);
const dir = path.join(import.meta.dirname, '..', 'test', 'histories');
const ids = JSON.parse(readFileSync(path.join(dir, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
const histories = ['research-lean-v13.json', 'researcher-lean-v13.json'].map((f) => ({
  workflowId: ids[f]!,
  history: JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as unknown,
}));
// The replayer runs workflows in debug mode (on this thread, no isolate timeout) unless told not to;
// its option type leaves debugMode out, but the replayer takes it.
const replayOptions = { workflowBundle: await bundleWorkflows(), debugMode: false };

/** CPU ms of this process per replayed run (a run and its step), with stack traces on or off. */
async function measure(stackTraces: boolean): Promise<number> {
  // The patched SDK reads this in the replay worker's workflow thread, which copies the environment.
  process.env.WORKFLOW_STACK_TRACES = String(stackTraces);
  const all = function* () {
    for (let i = 0; i < times; i++) yield* histories;
  };
  let warm = true;
  let start = process.cpuUsage();
  let n = 0;
  for await (const r of Worker.runReplayHistories(replayOptions, all())) {
    if (r.error) throw r.error;
    // The first run starts the thread and compiles the bundle: not counted.
    if (warm && ++n === histories.length) {
      warm = false;
      n = 0;
      start = process.cpuUsage();
    } else if (!warm) n++;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / (n / histories.length);
}

const off: number[] = [];
const on: number[] = [];
for (let r = 0; r < rounds; r++) {
  off.push(await measure(false));
  on.push(await measure(true));
  console.log(`round ${r + 1}: ${off[r]!.toFixed(1)} ms per run without stack traces, ${on[r]!.toFixed(1)} ms with them`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `median: ${median(off).toFixed(1)} ms / ${median(on).toFixed(1)} ms per replayed run = ${(median(off) / median(on)).toFixed(2)} (stack traces off ÷ on)`,
);
