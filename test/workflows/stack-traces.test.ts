// Workflow stack traces (the `__stack_trace` query behind the Web UI's Stack Trace tab) are on by
// default, as in the SDK. They cost a stack capture for every promise a workflow makes, so the
// installed SDK is patched to let an operator turn them off with WORKFLOW_STACK_TRACES=false
// (patches/@temporalio+worker+1.24.0.patch, applied by npm's postinstall). Both settings, each on
// a worker of its own, against the suite's Temporal.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe('the installed Temporal SDK', () => {
  it('carries the stack-trace patch (npm install applies it)', () => {
    const file = createRequire(import.meta.url).resolve('@temporalio/worker/lib/workflow/vm-shared.js');
    expect(readFileSync(file, 'utf8')).toContain("if (process.env.WORKFLOW_STACK_TRACES === 'true')");
  });
});

describe.skipIf(!ready)(`workflow stack traces (${ready ? 'live' : missingReason()})`, () => {
  const harnesses: Harness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.close();
  });

  /** An admission queue waiting for requests on a worker with the given setting, asked for its stack trace. */
  async function stackTraceQuery(setting: 'false' | undefined): Promise<PromiseSettledResult<unknown>> {
    const h = await startHarness({ env: { WORKFLOW_STACK_TRACES: setting } });
    harnesses.push(h);
    expect(h.config.worker.stackTraces).toBe(setting !== 'false');
    const handle = await h.client.workflow.start('admissionWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `stack-traces-${randomUUID()}`,
      args: [{ tenant: 'stack-traces', maxRuns: 1, running: [], waiting: [] }],
    });
    try {
      // The first workflow task has run once the queue answers its own query.
      await expect(handle.query('admissionQueue')).resolves.toMatchObject({ maxRuns: 1 });
      return (await Promise.allSettled([handle.query('__stack_trace')]))[0]!;
    } finally {
      await handle.terminate('test over');
    }
  }

  it('are on by default: the query shows where the workflow waits', async () => {
    const result = await stackTraceQuery(undefined);
    expect(result.status).toBe('fulfilled');
    // The admission loop waits in condition(), called from admissionWorkflow in admission.ts.
    expect(String((result as PromiseFulfilledResult<unknown>).value)).toMatch(/admissionWorkflow[^\n]*admission\.ts/);
  });

  it('with WORKFLOW_STACK_TRACES=false the query says they are not enabled and the workflow runs on', async () => {
    const result = await stackTraceQuery('false');
    expect(result.status).toBe('rejected');
    expect(String((result as PromiseRejectedResult).reason)).toMatch(/stack traces are not enabled/);
  });
});
