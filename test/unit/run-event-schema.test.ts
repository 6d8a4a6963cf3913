// The run's events as src/shared/events.ts declares them: what the run's row writes stand for
// (src/activities/run-events.ts) through runs that end each way parses with the schema, with no
// field it leaves out. (The researchers' and the judge's events are checked on a live stream in
// test/api/events.test.ts.)
import { describe, expect, it } from 'vitest';
import { runEvents } from '../../src/activities/run-events';
import type { NewEvent } from '../../src/activities/store';
import type { RecordedRun, RunRecord } from '../../src/activities/store/runs';
import { asRow } from '../support/run-rows';
import { RunEvent, RunEventEntry } from '../../src/shared/events';
import type { PlanView, StepView } from '../../src/shared/messages';

const usage = { promptTokens: 0, completionTokens: 0, costUsd: 0 };

/** The plan as the workflow's board shows it (PlanView), its steps as given. */
const plan = (version: number, steps: Partial<StepView>[]): PlanView => ({
  version,
  title: 'Solar costs',
  thought: 'why',
  hasEnoughContext: false,
  revisions: version - 1,
  revisionsLeft: 3 - version,
  steps: steps.map((s, i) => ({
    id: `s${i}`,
    title: `Step ${i}`,
    type: 'research',
    dependsOn: [],
    status: 'pending',
    attempts: 0,
    notes: [],
    ...s,
  })),
});

/** The events of a run whose row is written as `writes`, one after another. */
function eventsOf(writes: Omit<RunRecord, 'id' | 'tenant' | 'question' | 'seq'>[]): NewEvent[] {
  let before: RecordedRun | undefined;
  return writes.flatMap((w, i) => {
    const after: RunRecord = { id: 'r', tenant: 't', question: 'How cheap is solar?', seq: i + 1, ...w };
    const events = runEvents(before, after);
    before = asRow(after);
    return events;
  });
}

const spent = { promptTokens: 120, completionTokens: 30, costUsd: 0.002 };
const reported = eventsOf([
  { status: 'running', phase: 'coordinating', usage },
  { status: 'awaiting_review', phase: 'coordinating', usage: spent },
  { status: 'running', phase: 'planning', usage: spent },
  { status: 'awaiting_review', phase: 'reviewing', plan: plan(1, [{}, { type: 'processing', dependsOn: ['s0'] }]), usage: spent },
  { status: 'running', phase: 'researching', plan: plan(1, [{ status: 'running', attempts: 1 }, {}]), usage: spent },
  {
    status: 'running',
    phase: 'researching',
    plan: plan(1, [
      { status: 'completed', attempts: 2, summary: 'Down 90% since 2010' },
      { status: 'failed', attempts: 1, summary: 'no data' },
    ]),
    usage: { ...spent, promptTokens: 400 },
  },
  {
    status: 'completed',
    phase: 'done',
    plan: plan(1, [
      { status: 'completed', attempts: 2 },
      { status: 'failed', attempts: 1 },
    ]),
    outcome: 'report',
    answer: 'Solar costs',
    usage: { ...spent, promptTokens: 500 },
  },
]);
const answered = eventsOf([
  { status: 'running', phase: 'coordinating', usage },
  { status: 'completed', phase: 'done', outcome: 'answered_directly', answer: 'Yes.', usage: spent },
]);
const failed = eventsOf([
  { status: 'running', phase: 'coordinating', usage },
  { status: 'failed', phase: 'done', error: 'the LLM was down for 10m', usage },
]);
const cancelled = eventsOf([
  { status: 'running', phase: 'planning', usage },
  { status: 'cancelled', phase: 'done', outcome: 'cancelled_at_review', error: 'cancelled by request', usage: spent },
]);

describe('the run event schema', () => {
  it.each([
    ['a run with a report', reported],
    ['a run answered directly', answered],
    ['a failed run', failed],
    ['a cancelled run', cancelled],
  ])('declares every event of %s, each field of it and no more', (_, events) => {
    expect(events.length).toBeGreaterThan(2);
    for (const { type, data } of events) expect(RunEventEntry.parse({ type, data })).toEqual({ type, data });
  });

  it('covers every kind of event the row writes stand for', () => {
    const types = new Set([...reported, ...answered, ...failed, ...cancelled].map((e) => e.type));
    expect([...types].sort()).toEqual(['done', 'phase', 'plan', 'report', 'started', 'status', 'step', 'usage']);
  });

  it('says a new review again when the next version is put to review in the same task (the reviewer\u2019s edits)', () => {
    const events = eventsOf([
      { status: 'awaiting_review', phase: 'reviewing', plan: plan(1, [{}]), usage },
      { status: 'awaiting_review', phase: 'reviewing', plan: plan(2, [{ title: 'Edited' }]), usage },
    ]);
    expect(events.filter((e) => e.key.includes('v2')).map((e) => e.type)).toEqual(['plan', 'phase', 'status']);
    // A plan that grows while researching (follow-up steps) is a plan event alone.
    const grown = eventsOf([
      { status: 'running', phase: 'researching', plan: plan(1, [{}]), usage },
      { status: 'running', phase: 'researching', plan: plan(2, [{}, {}]), usage },
    ]);
    expect(grown.filter((e) => e.key.includes('v2')).map((e) => e.type)).toEqual(['plan']);
  });

  it('refuses data of another shape, and a streamed event without its number or time', () => {
    expect(RunEventEntry.safeParse({ type: 'plan', data: { version: 1, title: 'P' } }).success).toBe(false);
    expect(RunEventEntry.safeParse({ type: 'step', data: { id: 'a', title: 'A', status: 'pending', attempts: 0 } }).success).toBe(false);
    expect(RunEventEntry.safeParse({ type: 'nothing', data: {} }).success).toBe(false);
    const step = { type: 'step', data: { id: 'a', title: 'A', status: 'running', attempts: 1 } };
    expect(RunEvent.safeParse(step).success).toBe(false);
    const streamed = { id: 3, type: 'step', data: { ...step.data, at: '2026-11-25T10:00:00.000Z' } };
    expect(RunEvent.parse(streamed)).toEqual(streamed);
  });
});
