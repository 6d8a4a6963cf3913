// The worker's CPU per workflow run, measured by replaying recorded histories (a reviewed research
// run and its researcher step: test/histories/reviewed.json and
// researcher-step.json) many times: no server, network or
// activities, only the SDK and the workflow code, on a workflow thread as a worker runs them (not in
// the replayer's default debug mode). Each round measures, in turn:
//   - the defaults, the SDK's behaviour: stack traces on, one watchdog per call into the VM;
//   - one isolate watchdog per activation (WORKFLOW_VM_WATCHDOG=per-activation, the SDK patch);
//   - both opt-ins: that, and stack traces off (WORKFLOW_STACK_TRACES=false);
//   - both opt-ins with the bundle as the SDK builds it, each workflow evaluating the workflow
//     modules anew (the product preloads them once: src/worker.ts bundleWorkflows).
// and prints each round's ratios to the defaults and their medians (the machine's speed drifts, so
// only figures from the same round are compared).
//   npm run bench:workflow-cpu -- [--times 200] [--rounds 5]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../src/worker';

const { values } = parseArgs({ options: { times: { type: 'string', default: '200' }, rounds: { type: 'string', default: '5' } } });
const times = Number(values.times);
const rounds = Number(values.rounds);
const dir = path.join(import.meta.dirname, '..', 'test', 'histories');
const ids = JSON.parse(readFileSync(path.join(dir, 'workflow-ids.json'), 'utf8')) as Record<string, string>;
const histories = ['reviewed.json', 'researcher-step.json'].map((f) => ({
  workflowId: ids[f]!,
  history: JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as unknown,
}));
const preloaded = await bundleWorkflows();
const perWorkflow = await bundleWorkflows([], { preload: false });

interface Setting {
  name: string;
  env: { WORKFLOW_STACK_TRACES: string; WORKFLOW_VM_WATCHDOG: string };
  bundle: typeof preloaded;
}
const settings: Setting[] = [
  { name: 'defaults', env: { WORKFLOW_STACK_TRACES: 'true', WORKFLOW_VM_WATCHDOG: 'per-call' }, bundle: preloaded },
  { name: 'watchdog per activation', env: { WORKFLOW_STACK_TRACES: 'true', WORKFLOW_VM_WATCHDOG: 'per-activation' }, bundle: preloaded },
  { name: 'both opt-ins', env: { WORKFLOW_STACK_TRACES: 'false', WORKFLOW_VM_WATCHDOG: 'per-activation' }, bundle: preloaded },
  {
    name: 'both opt-ins, modules per workflow',
    env: { WORKFLOW_STACK_TRACES: 'false', WORKFLOW_VM_WATCHDOG: 'per-activation' },
    bundle: perWorkflow,
  },
];

/** CPU ms of this process per replayed run (a run and its step) with one setting. */
async function measure(setting: Setting): Promise<number> {
  // The patched SDK reads these in the replay worker's workflow thread, which copies the environment.
  Object.assign(process.env, setting.env);
  const all = function* () {
    for (let i = 0; i < times; i++) yield* histories;
  };
  let warm = true;
  let start = process.cpuUsage();
  let n = 0;
  // The replayer runs workflows in debug mode (on this thread, no isolate timeout) unless told not
  // to; its option type leaves debugMode out, but the replayer takes it.
  const replayOptions = { workflowBundle: setting.bundle, debugMode: false };
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

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ratios = settings.map(() => [] as number[]);
const ms = settings.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  // Alternate the order, so that a drift within a round does not always favour the same setting.
  const order = r % 2 ? [...settings.keys()].reverse() : [...settings.keys()];
  const got: number[] = [];
  for (const i of order) got[i] = await measure(settings[i]!);
  settings.forEach((_, i) => {
    ms[i]!.push(got[i]!);
    ratios[i]!.push(got[i]! / got[0]!);
  });
  console.log(`round ${r + 1}: ${settings.map((s, i) => `${s.name} ${got[i]!.toFixed(1)} ms`).join(', ')} per run`);
}
for (const [i, s] of settings.entries()) {
  if (i === 0) console.log(`median: ${s.name} ${median(ms[0]!).toFixed(1)} ms per replayed run`);
  else
    console.log(
      `median: ${s.name} ${median(ms[i]!).toFixed(1)} ms, ${median(ratios[i]!).toFixed(2)} × the defaults (each round: ${ratios[i]!.map((x) => x.toFixed(2)).join(', ')})`,
    );
}
