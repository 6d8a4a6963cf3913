// The events a write of the run's row stands for: what changed since the row's last write, each
// under a key that makes the same change written twice one event.
import { describe, expect, it } from 'vitest';
import { runEvents } from '../../src/activities/run-events';
import type { RunRecord } from '../../src/activities/store/runs';
import { asRow } from '../support/run-rows';

const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0 };
const base: RunRecord = { id: 'r', tenant: 't', question: 'q', status: 'running', phase: 'coordinating', usage, seq: 1 };
const plan = (status: string, attempts = 0) => ({
  version: 1,
  title: 'P',
  steps: [{ id: 'a', title: 'A', type: 'research', status, attempts, dependsOn: [] }],
});

describe('run events', () => {
  it('starts a run with started and its first phase', () => {
    expect(runEvents(undefined, base).map((e) => [e.type, e.key])).toEqual([
      ['started', 'started'],
      ['phase', 'phase:coordinating:v0'],
    ]);
  });

  it('puts a new plan before the phase change that shows it, then the steps as they move', () => {
    const planning = { ...base, phase: 'planning', seq: 2 };
    const reviewing: RunRecord = {
      ...planning,
      phase: 'reviewing',
      status: 'awaiting_review',
      plan: plan('pending'),
      planVersion: 1,
      seq: 3,
    };
    expect(runEvents(asRow(planning), reviewing).map((e) => e.type)).toEqual(['plan', 'phase', 'status']);
    const running: RunRecord = { ...reviewing, phase: 'researching', status: 'running', plan: plan('running', 1), seq: 4 };
    const events = runEvents(asRow(reviewing), running);
    expect(events.map((e) => e.key)).toEqual(['phase:researching:v1', 'step:v1:a:1:running']);
    // The same write seen again (a retried activity) adds nothing.
    expect(runEvents(asRow(running), running)).toEqual([]);
  });

  it('ends with usage, report and done', () => {
    const before: RunRecord = { ...base, phase: 'reporting', seq: 8 };
    const after: RunRecord = {
      ...before,
      phase: 'done',
      status: 'completed',
      outcome: 'report',
      answer: 'Solar',
      usage: { promptTokens: 10, completionTokens: 5, costUsd: 0.01 },
      seq: 9,
    };
    const events = runEvents(asRow(before), after);
    expect(events.map((e) => e.type)).toEqual(['phase', 'status', 'usage', 'report', 'done']);
    expect(events.at(-1)!.data).toEqual({ status: 'completed', outcome: 'report' });
  });

  it('tells apart a second clarifying question from the first', () => {
    const asking: RunRecord = { ...base, status: 'awaiting_review', seq: 2 };
    const again: RunRecord = { ...base, status: 'awaiting_review', seq: 4 };
    const first = runEvents(asRow(base), asking).find((e) => e.type === 'status')!;
    const second = runEvents(asRow({ ...base, seq: 3 }), again).find((e) => e.type === 'status')!;
    expect(first.key).not.toBe(second.key);
  });
});
