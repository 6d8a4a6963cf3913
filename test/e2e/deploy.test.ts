// A deploy: SIGTERM to a worker while a sandbox run and an LLM call are in flight. After its grace
// time the worker hands both back to Temporal as retryable; a new worker finishes them. Every step
// completes, and no LLM call that had completed is paid for again.
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { SANDBOX_LABEL } from '../../src/activities/sandbox';
import { createPool } from '../../src/infra/postgres';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import type { LoggedRequest } from '../support/llm-server';
import { defaultReact, planJson, researchRules, stepTitleOf } from '../support/research-script';
import { databaseUrl, dockerAvailable, missingReason, temporalAddress } from '../support/services';
import { workerProcesses } from '../support/faults';

const ready = Boolean(temporalAddress() && databaseUrl() && dockerAvailable());
const docker = new Docker();
const signature = (r: LoggedRequest) => JSON.stringify([r.rule, r.body.messages]);

describe.skipIf(!ready)(`deploys (${ready ? 'live' : missingReason()})`, () => {
  const f = workerProcesses('deploy', { SANDBOX_TIMEOUT_S: '30', WORKER_SHUTDOWN_GRACE_MS: '1500', LLM_TIMEOUT_MS: '30000' });
  const { llm, startWorker, taskQueue } = f;

  it('hands the sandbox run and the LLM call in flight back on SIGTERM; a new worker finishes the run', async () => {
    // Step a's first turn takes 20 s at the provider; the program of step calc sleeps 8 s.
    let slow = 0;
    const react = (req: Parameters<typeof defaultReact>[0]) =>
      stepTitleOf(req) === 'Step a' && slow++ === 0 ? { ...defaultReact(req), delayMs: 20_000 } : defaultReact(req);
    llm.script(
      researchRules(
        { react, coder: { json: { code: "import time\ntime.sleep(8)\nprint('slept')", explanation: 'sleeps' } } },
        planJson([{ id: 'a' }, { id: 'calc', type: 'processing' }]),
      ),
    );
    const first = startWorker();
    await first.waitFor(/worker ready/, 60_000);
    const id = `research-deploy-${randomUUID()}`;
    const handle = await f.client.workflow.start('researchWorkflow', {
      taskQueue,
      workflowId: id,
      args: [
        {
          question: 'q',
          tenant: 'default',
          options: ResearchOptions.parse({ autoAcceptPlan: true }),
          retry: { initialInterval: '200ms', maximumInterval: '2s' },
        },
      ],
    });
    const filters = JSON.stringify({ label: [`${SANDBOX_LABEL}.run=${id}`] });
    for (const end = Date.now() + 60_000; ;) {
      const sandboxRunning = (await docker.listContainers({ filters })).length > 0;
      const llmInFlight = llm.requests.some((r) => r.rule === 'react' && r.endedAt === undefined);
      if (sandboxRunning && llmInFlight) break;
      if (Date.now() > end) throw new Error(`the sandbox run and the LLM call were never in flight together:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    await first.exited(30_000);
    // The grace time passed, the calls were handed back, and the worker went.
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    expect(llm.requests.filter((r) => r.rule === 'react' && r.aborted)).toHaveLength(1);

    const second = startWorker();
    await second.waitFor(/worker ready/, 60_000);
    const result = (await handle.result()) as ResearchResult;
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'calc', status: 'completed', attempts: 1 },
    ]);
    const completed = llm.completed().map(signature);
    expect(completed.length - new Set(completed).size).toBe(0);
    const pool = createPool(databaseUrl()!, 1);
    const { rows } = await pool.query("SELECT status, result->>'stdout' AS stdout FROM sandbox_runs WHERE research_id = $1", [id]);
    await pool.end();
    expect(rows).toEqual([{ status: 'ok', stdout: 'slept\n' }]);
    expect(await docker.listContainers({ all: true, filters })).toHaveLength(0);
  }, 180_000);
});
