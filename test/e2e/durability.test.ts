// Durability: SIGKILL the worker process while a step's LLM call is in flight, start a new one,
// and the run completes without repeating any LLM call that had completed before the kill. Then
// SIGKILL that one while the report is being streamed: the draft says it starts again, and the
// stored report is the attempt that completed.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Draft } from '../../src/shared/draft';
import type { DraftEventData } from '../../src/shared/events';
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

/** The report the scripted reporter writes: long enough to be cut off halfway. */
const REPORT =
  '## Key points\n\n- A killed worker costs a heartbeat timeout, not the run [1].\n- Calls already answered are not paid again [2].\n\n## Overview\n\n' +
  Array.from({ length: 8 }, (_, i) => `Attempt ${i + 1} of the test kept its place in the log [1].`).join(' ');

describe.skipIf(!ready)(`durability (${ready ? 'live' : missingReason()})`, () => {
  const f = workerProcesses('durability', { LLM_TIMEOUT_MS: '20000' });
  const { llm, startWorker, taskQueue } = f;
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: databaseUrl()!, max: 2 });
  });
  afterAll(async () => pool?.end());

  it('finishes a run whose worker was SIGKILLed mid-call, paying for no finished call twice', async () => {
    // Step b's first researcher call is slow: the worker dies while it is in flight. Later the
    // report's first stream stops halfway (the worker writing it is killed then too).
    let slowCalls = 0;
    let midReport = () => undefined as void;
    const reportHalfway = new Promise<void>((resolve) => (midReport = resolve));
    llm.script(
      researchRules(
        {
          researcher: (req) => {
            const slow = stepTitleOf(req) === 'Step b' && slowCalls++ === 0;
            return { json: { text: `Findings for ${stepTitleOf(req)}.`, summary: 'ok' }, ...(slow ? { delayMs: 8_000 } : {}) };
          },
          reporter: (_req, n) => ({
            json: { title: 'Survival', markdown: REPORT },
            ...(n === 0 ? { beforeChunk: (c: number) => (c === 20 ? (midReport(), new Promise(() => undefined)) : undefined) } : {}),
          }),
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

    // The report is being written: once part of its draft is in the run's log, its worker dies.
    await reportHalfway;
    const drafts = async () =>
      (
        await pool.query<{ data: DraftEventData }>(`SELECT data FROM run_events WHERE research_id = $1 AND type = 'draft' ORDER BY seq`, [
          id,
        ])
      ).rows.map((r) => r.data);
    for (const end = Date.now() + 10_000; !(await drafts()).length && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
    second.child.kill('SIGKILL');
    await second.exited(10_000);
    const third = startWorker();
    await third.waitFor(/worker ready/, 60_000);
    const result = (await handle.result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report' });
    expect(result.steps?.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);

    // Each call that had finished before the kill was made exactly once in the whole run.
    const counts = new Map<string, number>();
    for (const r of llm.requests) counts.set(signature(r), (counts.get(signature(r)) ?? 0) + 1);
    for (const r of recordedBeforeKill) expect({ rule: r.rule, times: counts.get(signature(r)) }).toEqual({ rule: r.rule, times: 1 });
    // The call that was cut off was made again, once, by the new worker.
    expect(counts.get(signature(inFlight))).toBe(2);
    // The report's draft: the first attempt's text, then the stream said it starts again and gave
    // the new attempt's text whole; the stored report is the one that completed, references and all.
    const pieces = await drafts();
    const restart = pieces.findIndex((d) => d.restart);
    expect(pieces.slice(0, restart).every((d) => d.attempt === 1 && !d.restart && d.text)).toBe(true);
    expect(restart).toBeGreaterThan(0);
    expect(pieces[restart]).toMatchObject({
      part: 'report',
      offset: 0,
      restart: true,
      reason: expect.stringMatching(/^an earlier attempt stopped/),
    });
    expect(pieces[restart]!.attempt).toBeGreaterThan(1);
    const draft = new Draft();
    for (const d of pieces) draft.apply(d);
    expect(draft.list()).toMatchObject([{ part: 'report', text: REPORT, done: true, restarts: 1 }]);
    expect(llm.requests.filter((r) => r.rule === 'reporter').map((r) => Boolean(r.aborted))).toEqual([true, false]);
    const stored = (await pool.query<{ markdown: string }>('SELECT markdown FROM reports WHERE research_id = $1', [id])).rows[0]!.markdown;
    expect(stored).toContain('A killed worker costs a heartbeat timeout');
    // The search double's hits are at fixture.invalid: no page was read, so the report cites none of
    // them and lists them as the snippets they are (the assembled report, not a fallback).
    expect(stored).toMatch(/## Also consulted\n\n- \[[^\n]+\(search result snippet; the page was not read\)\n/);
    expect(stored).not.toMatch(/\[\d+\]/);
    expect(stored).not.toMatch(/\bS[0-9a-f]{8}\b/);

    // The last worker's /metrics: its own counters and the Temporal SDK's.
    const metricsUrl = (await third.waitFor(/metrics on (http:\/\/\S+)/, 1_000))[1]!;
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/^deep_research_runs_finished_total\{status="completed",outcome="report"\} 1$/m);
    expect(metrics).toMatch(/^deep_research_llm_requests_total\{model="[^"]+",role="reporter",outcome="ok"\} \d+$/m);
    expect(metrics).toMatch(/^temporal_\w+/m);
  }, 120_000);
});
