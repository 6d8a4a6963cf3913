// The isolate watchdog: a workflow that does not yield within the worker's isolate execution
// timeout is stopped and its workflow task fails with the timeout. The installed SDK is patched
// to run an activation under one watchdog instead of one per call into the VM
// (patches/@temporalio+worker+1.24.0.patch); both that and the SDK's own behaviour
// (WORKFLOW_VM_WATCHDOG=per-call) are checked, on a worker process of its own against the suite's
// Temporal. On Node 20 either way the process then aborts ("async hook stack has become corrupted":
// the stopped workflow's promise callbacks never leave their async contexts), which is why the
// worker is a process here and why the test asks nothing of it after the timeout.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingReason, temporalAddress } from '../support/services';
import { ROOT } from '../support/spawn';
import { quickWorkflow, spinSignal, spinWorkflow } from '../support/workflows/watchdog';

const ready = Boolean(temporalAddress());

describe('the installed Temporal SDK', () => {
  it('carries the watchdog patch (npm install applies it)', () => {
    const file = createRequire(import.meta.url).resolve('@temporalio/worker/lib/workflow/reusable-vm.js');
    expect(readFileSync(file, 'utf8')).toContain("process.env.WORKFLOW_VM_WATCHDOG !== 'per-call'");
  });
});

describe.skipIf(!ready)(`the isolate watchdog (${ready ? 'live' : missingReason()})`, () => {
  let connection: Connection;
  let client: Client;
  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress()! });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
  });

  /** A worker process for the watchdog workflows, once it polls. */
  async function startWorker(taskQueue: string, watchdog: string) {
    const child = spawn(
      process.execPath,
      [
        path.join(ROOT, 'bin', 'run-ts.mjs'),
        path.join(ROOT, 'test', 'support', 'workflows', 'watchdog-worker.ts'),
        temporalAddress()!,
        taskQueue,
      ],
      { cwd: ROOT, env: { ...process.env, WORKFLOW_VM_WATCHDOG: watchdog }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    for (let i = 0; !out.includes('ready'); i++) {
      if (child.exitCode !== null || i > 300) throw new Error(`the watchdog worker did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return child;
  }

  /** The failure message of the first failed workflow task in a run's history, once there is one. */
  async function firstTaskFailure(workflowId: string): Promise<string> {
    for (let i = 0; i < 150; i++) {
      const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
      const failed = events?.find((e) => e.workflowTaskFailedEventAttributes);
      if (failed) return failed.workflowTaskFailedEventAttributes?.failure?.message ?? '';
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no workflow task of ${workflowId} failed`);
  }

  for (const watchdog of ['per-activation', 'per-call']) {
    it(`stops a workflow that never yields (WORKFLOW_VM_WATCHDOG=${watchdog})`, async () => {
      const taskQueue = `watchdog-${randomUUID()}`;
      const worker = await startWorker(taskQueue, watchdog);
      const spin = await client.workflow.start(spinWorkflow, { taskQueue, workflowId: `spin-${randomUUID()}` });
      try {
        // The thread serves runs normally first: several activations each.
        await expect(client.workflow.execute(quickWorkflow, { taskQueue, workflowId: `quick-${randomUUID()}`, args: [3] })).resolves.toBe(
          3,
        );
        await spin.signal(spinSignal);
        expect(await firstTaskFailure(spin.workflowId)).toBe('Script execution timed out after 1000ms');
      } finally {
        worker.kill('SIGKILL');
        await spin.terminate('test over');
      }
    }, 60_000);
  }
});
