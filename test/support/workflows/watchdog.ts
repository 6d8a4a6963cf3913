// Workflows for the isolate watchdog test (test/workflows/watchdog.test.ts), bundled by that test
// alone: one that never yields once told to, and one that answers at once.
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';

export const spinSignal = defineSignal('spin');

/** Waits for the signal, then loops without yielding: only the isolate watchdog can stop it. */
export async function spinWorkflow(): Promise<void> {
  let spin = false;
  setHandler(spinSignal, () => void (spin = true));
  await condition(() => spin);
  let _spins = 0;
  for (;;) _spins++;
}

/** Several activations (a timer each), then a result: the worker still serves other workflows. */
export async function quickWorkflow(rounds: number): Promise<number> {
  for (let i = 0; i < rounds; i++) await sleep(1);
  return rounds;
}
