// A worker killed while its sandbox runs: the new worker removes the orphan container, retries
// the step's run, and the result is stored once.
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { SANDBOX_LABEL } from '../../src/activities/sandbox';
import { createPool } from '../../src/infra/postgres';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import { planJson, researchRules } from '../support/research-script';
import { databaseUrl, dockerAvailable, missingReason, temporalAddress } from '../support/services';
import { workerProcesses } from '../support/faults';

const ready = Boolean(temporalAddress() && databaseUrl() && dockerAvailable());
const docker = new Docker();

describe.skipIf(!ready)(`sandbox durability (${ready ? 'live' : missingReason()})`, () => {
  const f = workerProcesses('sandbox-durability', { SANDBOX_TIMEOUT_S: '30' });
  const { llm, startWorker, taskQueue } = f;

  it('removes the orphan, retries the run and stores its result once', async () => {
    llm.script(
      researchRules(
        { coder: { json: { code: "import time\ntime.sleep(4)\nprint('slept')", explanation: 'sleeps' } } },
        planJson([{ id: 'calc', type: 'processing' }]),
      ),
    );
    const first = startWorker();
    await first.waitFor(/worker ready/, 60_000);
    const id = `research-sandbox-${randomUUID()}`;
    const handle = await f.client.workflow.start('researchWorkflow', {
      taskQueue,
      workflowId: id,
      args: [{ question: 'q', tenant: 'default', options: ResearchOptions.parse({ autoAcceptPlan: true }) }],
    });
    const filters = JSON.stringify({ label: [`${SANDBOX_LABEL}.run=${id}`] });
    let orphanId: string | undefined;
    const deadline = Date.now() + 60_000;
    while (!orphanId) {
      if (Date.now() > deadline) throw new Error(`no sandbox container appeared:\n${first.output()}`);
      orphanId = (await docker.listContainers({ filters }))[0]?.Id;
      if (!orphanId) await new Promise((r) => setTimeout(r, 100));
    }
    first.child.kill('SIGKILL');
    await first.exited(10_000);
    // The dead worker's container is still there.
    expect((await docker.getContainer(orphanId).inspect()).Config.Labels[`${SANDBOX_LABEL}.run`]).toBe(id);

    const second = startWorker();
    await second.waitFor(/worker ready/, 60_000);
    const result = (await handle.result()) as ResearchResult;
    expect(result.steps).toEqual([{ id: 'calc', status: 'completed', attempts: 1 }]);
    await expect(docker.getContainer(orphanId).inspect()).rejects.toThrow(/no such container/i);
    expect(await docker.listContainers({ all: true, filters })).toHaveLength(0);
    const pool = createPool(databaseUrl()!, 1);
    const { rows } = await pool.query("SELECT status, result->>'stdout' AS stdout FROM sandbox_runs WHERE research_id = $1", [id]);
    await pool.end();
    expect(rows).toEqual([{ status: 'ok', stdout: 'slept\n' }]);
  }, 150_000);
});
