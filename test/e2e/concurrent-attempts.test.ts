// Two attempts of one LLM activity alive at once, in a live run: the worker making a researcher
// turn freezes (SIGSTOP, like a network cut: its socket stays open, it stops heartbeating), the
// short heartbeat timeout hands the call to a second worker, and the frozen one wakes up with the
// provider's answer. The second attempt finds the call claimed, waits, and takes the first one's
// answer: the provider is paid once.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import { repeatedCompleted, signature, workerProcesses } from '../support/faults';
import { defaultReact, planJson, researchRules, stepTitleOf } from '../support/research-script';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

/** PENDING_ACTIVITY_STATE_STARTED: a worker holds the attempt. */
const STARTED = 2;
const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`concurrent attempts (${ready ? 'live' : missingReason()})`, () => {
  const f = workerProcesses('attempts', { LLM_TIMEOUT_MS: '30000' });
  const { llm, startWorker, taskQueue } = f;

  it('makes one paid request when a frozen attempt and its successor both hold the call', async () => {
    // The first turn of step a takes 6 s at the provider.
    let slow = 0;
    const react = (req: Parameters<typeof defaultReact>[0]) =>
      stepTitleOf(req) === 'Step a' && slow++ === 0 ? { ...defaultReact(req), delayMs: 6_000 } : defaultReact(req);
    llm.script(researchRules({ react }, planJson([{ id: 'a' }])));
    const first = startWorker();
    await first.waitFor(/worker ready/, 60_000);
    const id = `research-attempts-${randomUUID()}`;
    const handle = await f.client.workflow.start('researchWorkflow', {
      taskQueue,
      workflowId: id,
      args: [
        {
          question: 'q',
          tenant: 'default',
          options: ResearchOptions.parse({ autoAcceptPlan: true }),
          retry: { initialInterval: '200ms', maximumInterval: '2s', heartbeatTimeout: '2s' },
        },
      ],
    });
    for (const end = Date.now() + 60_000; !llm.requests.some((r) => r.rule === 'react' && r.endedAt === undefined);) {
      if (Date.now() > end) throw new Error(`step a never asked the model:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const slowCall = llm.requests.find((r) => r.rule === 'react')!;
    first.child.kill('SIGSTOP');

    // The heartbeat timeout passes; a second worker takes attempt 2 of the turn and finds it claimed.
    const second = startWorker();
    await second.waitFor(/worker ready/, 60_000);
    const child = f.client.workflow.getHandle(`${id}/step/a`);
    for (const end = Date.now() + 30_000; ;) {
      const pending = (await child.describe()).raw.pendingActivities ?? [];
      if (pending.some((p) => p.activityType?.name === 'researcherTurn' && (p.attempt ?? 1) >= 2 && p.state === STARTED)) break;
      if (Date.now() > end) throw new Error(`no second attempt of the turn started: ${JSON.stringify(pending)}\n${second.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const sameCall = () => llm.requests.filter((r) => signature(r) === signature(slowCall));
    expect(sameCall()).toHaveLength(1); // the second attempt waits instead of paying

    first.child.kill('SIGCONT');
    const result = (await handle.result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(result.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    expect(sameCall()).toHaveLength(1);
    expect(sameCall()[0]!.aborted).not.toBe(true);
    expect(repeatedCompleted(llm)).toBe(0);
  }, 150_000);
});
