// Scale-out: `deep-research worker` processes share every task queue through the Temporal server
// (nothing home-made). Two workers against one dev server both execute the runs' activities and
// workflow tasks, and a run survives the loss of either of them.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import { workerProcesses } from '../support/faults';
import { planJson, researchRules, stepTitleOf } from '../support/research-script';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import type { Spawned } from '../support/spawn';

const ready = Boolean(temporalAddress() && databaseUrl());

/** The worker identities (`pid@host`) that started activity and workflow tasks of a run and its steps. */
async function identities(client: Client, id: string, steps: string[]): Promise<{ activities: Set<string>; workflowTasks: Set<string> }> {
  const activities = new Set<string>();
  const workflowTasks = new Set<string>();
  for (const wid of [id, ...steps.map((s) => `${id}/step/${s}`)]) {
    const history = await client.workflow.getHandle(wid).fetchHistory();
    for (const e of history.events ?? []) {
      const a = e.activityTaskStartedEventAttributes?.identity;
      const w = e.workflowTaskStartedEventAttributes?.identity;
      if (a) activities.add(a.replace(/-(llm|search|sandbox)$/, ''));
      if (w) workflowTasks.add(w);
    }
  }
  return { activities, workflowTasks };
}

const pidOf = (w: Spawned) => String(w.child.pid);

describe.skipIf(!ready)(`scale-out (${ready ? 'live' : missingReason()})`, () => {
  const f = workerProcesses('scale-out', { LLM_TIMEOUT_MS: '20000' });

  const start = (label: string) =>
    f.client.workflow.start('researchWorkflow', {
      taskQueue: f.taskQueue,
      workflowId: `research-scale-${label}-${randomUUID()}`,
      args: [
        {
          question: `Scale out ${label}?`,
          tenant: 'default',
          options: ResearchOptions.parse({ autoAcceptPlan: true, maxResearchLoops: 0 }),
          // A dead worker's LLM call goes to the other one after 3 s of silence (15 s by default).
          retry: { initialInterval: '200ms', maximumInterval: '1s', heartbeatTimeout: '3s' },
        },
      ],
    });

  /** Two live worker processes: those an earlier test left running (a worker's start costs
   *  seconds of the two cores), and new ones for those it killed. */
  const live: Spawned[] = [];
  async function twoWorkers(): Promise<Spawned[]> {
    for (let i = live.length - 1; i >= 0; i--)
      if (live[i]!.child.exitCode !== null || live[i]!.child.signalCode !== null) live.splice(i, 1);
    while (live.length < 2) live.push(f.startWorker());
    await Promise.all(live.map((w) => w.waitFor(/worker ready/, 60_000)));
    return [...live];
  }

  it('shares the work of several runs between two worker processes', async () => {
    f.llm.latencyMs = 40;
    f.llm.script(researchRules({}, planJson([{ id: 'a' }, { id: 'b' }, { id: 'c' }])));
    const workers = await twoWorkers();
    const handles = await Promise.all(['1', '2', '3', '4'].map((l) => start(l)));
    const results = (await Promise.all(handles.map((h) => h.result()))) as ResearchResult[];
    for (const r of results) expect(r).toMatchObject({ status: 'completed', outcome: 'report' });

    const seen = { activities: new Set<string>(), workflowTasks: new Set<string>() };
    for (const h of handles) {
      const s = await identities(f.client, h.workflowId, ['a', 'b', 'c']);
      s.activities.forEach((x) => seen.activities.add(x));
      s.workflowTasks.forEach((x) => seen.workflowTasks.add(x));
    }
    const byWorker = (set: Set<string>) => workers.map((w) => [...set].some((id) => id.startsWith(`${pidOf(w)}@`)));
    expect(byWorker(seen.activities)).toEqual([true, true]);
    expect(byWorker(seen.workflowTasks)).toEqual([true, true]);
  }, 120_000);

  // One kill: the two workers run the same program, and which one holds the run's calls is chance
  // (production-shape.test.ts kills the very worker that holds a step's call, by its identity).
  it('finishes a run when one worker of two is killed mid-run', async () => {
    const victim = 0;
    f.llm.latencyMs = 0;
    // Every researcher answer takes a while: the run is mid-step when a worker dies.
    f.llm.script(
      researchRules(
        { researcher: (req) => ({ json: { text: `Findings for ${stepTitleOf(req)}.`, summary: 'ok' }, delayMs: 1_500 }) },
        planJson([{ id: 'a' }, { id: 'b' }]),
      ),
    );
    const workers = await twoWorkers();
    const handle = await start('kill');
    const deadline = Date.now() + 30_000;
    while (!f.llm.requests.some((r) => r.rule === 'researcher')) {
      if (Date.now() > deadline) throw new Error('no step reached its researcher call');
      await new Promise((r) => setTimeout(r, 50));
    }
    workers[victim]!.child.kill('SIGKILL');
    await workers[victim]!.exited(10_000);
    const result = (await handle.result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(result.steps?.map((s) => s.status)).toEqual(['completed', 'completed']);
    const after = await identities(f.client, handle.workflowId, ['a', 'b']);
    // The survivor did work of this run.
    expect([...after.activities].some((id) => id.startsWith(`${pidOf(workers[1 - victim]!)}@`))).toBe(true);
  }, 120_000);
});
