// Durability: SIGKILL the worker process while a step's LLM call is in flight, start a new one,
// and the run completes without repeating any LLM call that had completed before the kill.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import type { LoggedRequest } from '../support/llm-server';
import { planJson, researchRules, stepTitleOf } from '../support/research-script';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { workerProcesses } from '../support/faults';

const ready = Boolean(temporalAddress() && databaseUrl());
const signature = (r: LoggedRequest) => JSON.stringify([r.rule, r.body.messages]);
/** Time a finished answer may still need to reach the call log when the worker is killed. */
const RECORD_WINDOW_MS = 500;
/** The killed call is given to another attempt after the heartbeat timeout, and that attempt may
 *  pay for it once the dead holder's claim has lapsed (twice the heartbeat timeout): a test-sized
 *  4 s instead of the default 15 s, so the run goes on about 8 s after the kill, not 30 s. */
const retry = { initialInterval: '200ms', maximumInterval: '2s', heartbeatTimeout: '4s' };

describe.skipIf(!ready)(`durability (${ready ? 'live' : missingReason()})`, () => {
  const f = workerProcesses('durability', { LLM_TIMEOUT_MS: '20000' });
  const { llm, startWorker, taskQueue } = f;

  it('finishes a run whose worker was SIGKILLed mid-call, paying for no finished call twice', async () => {
    // Step b's first researcher call is slow: the worker dies while it is in flight.
    let slowCalls = 0;
    llm.script(
      researchRules(
        {
          researcher: (req) => {
            const slow = stepTitleOf(req) === 'Step b' && slowCalls++ === 0;
            return { json: { text: `Findings for ${stepTitleOf(req)}.`, summary: 'ok' }, ...(slow ? { delayMs: 8_000 } : {}) };
          },
        },
        planJson([{ id: 'a' }, { id: 'b' }, { id: 'c', type: 'processing', dependsOn: ['a', 'b'] }]),
      ),
    );
    const first = startWorker();
    await first.waitFor(/worker ready/, 60_000);
    const id = `research-durability-${randomUUID()}`;
    const handle = await f.client.workflow.start('researchWorkflow', {
      taskQueue,
      workflowId: id,
      args: [
        {
          question: 'Does a run survive a killed worker?',
          tenant: 'default',
          options: ResearchOptions.parse({ autoAcceptPlan: true }),
          retry,
        },
      ],
    });

    const deadline = Date.now() + 30_000;
    while (!llm.requests.some((r) => r.rule === 'researcher' && stepTitleOf(r.body) === 'Step b')) {
      if (Date.now() > deadline) throw new Error(`step b never called the LLM:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    first.child.kill('SIGKILL');
    await first.exited(10_000);
    const killedAt = Date.now();
    const completedBeforeKill = llm.completed().filter((r) => (r.endedAt ?? Infinity) < killedAt);
    // "Finished" means the worker had the answer and logged it: each answer is written with its
    // usage in one insert (llm_requests), and a retry rebuilds the call from there. A response that
    // left the server in the last moments before the kill may still be on its way to that insert (a
    // few ms, more under a loaded CI), and only such a call is paid again. Calls that ended half a
    // second before the kill are past that window.
    const recordedBeforeKill = completedBeforeKill.filter((r) => r.endedAt! < killedAt - RECORD_WINDOW_MS);
    expect(recordedBeforeKill.length).toBeGreaterThanOrEqual(3);
    // (Step a may or may not have finished by then: the steps run side by side.)
    expect(completedBeforeKill.map((r) => r.rule)).toEqual(
      expect.arrayContaining(['coordinator', 'rewrite', 'background', 'planner', 'react']),
    );
    const inFlight = llm.requests.find((r) => r.rule === 'researcher' && stepTitleOf(r.body) === 'Step b')!;
    // The new worker starts while the model server sees the killed worker's connection close.
    const second = startWorker();
    for (const end = Date.now() + 5_000; !inFlight.aborted && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    expect(inFlight.aborted).toBe(true);

    await second.waitFor(/worker ready/, 60_000);
    const result = (await handle.result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(result.steps?.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);

    // Each call that had finished before the kill was made exactly once in the whole run.
    const counts = new Map<string, number>();
    for (const r of llm.requests) counts.set(signature(r), (counts.get(signature(r)) ?? 0) + 1);
    for (const r of recordedBeforeKill) expect({ rule: r.rule, times: counts.get(signature(r)) }).toEqual({ rule: r.rule, times: 1 });
    // The call that was cut off was made again, once, by the new worker.
    expect(counts.get(signature(inFlight))).toBe(2);
    // The new worker's /metrics: its own counters and the Temporal SDK's.
    const metricsUrl = (await second.waitFor(/metrics on (http:\/\/\S+)/, 1_000))[1]!;
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/^deep_research_runs_finished_total\{status="completed",outcome="report"\} 1$/m);
    expect(metrics).toMatch(/^deep_research_llm_requests_total\{model="[^"]+",role="researcher",outcome="ok"\} \d+$/m);
    expect(metrics).toMatch(/^temporal_\w+/m);
  }, 120_000);
});
