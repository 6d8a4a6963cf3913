// What a workflow is told about calls being retried: which failed attempts are reported, which
// errors end a call, and how the run's page lists them.
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { reportAttempt, retriedAfter, waitedFor } from '../../src/activities/waits';
import { Waits } from '../../src/workflows/waits';

describe('call waits', () => {
  it('reports the first three failed attempts, then one in five', () => {
    const reported = Array.from({ length: 30 }, (_, i) => i + 1).filter(reportAttempt);
    expect(reported).toEqual([1, 2, 3, 5, 10, 15, 20, 25, 30]);
  });

  it('treats non-retryable failures and cancellations as the end of the call', () => {
    expect(retriedAfter(new Error('connect ECONNREFUSED'))).toBe(true);
    expect(retriedAfter(ApplicationFailure.retryable('429', 'LlmRateLimited'))).toBe(true);
    expect(retriedAfter(ApplicationFailure.nonRetryable('bad request', 'LlmBadRequest'))).toBe(false);
    expect(retriedAfter(new CancelledFailure('cancelled'))).toBe(false);
  });

  it('names the search providers when a search failed inside a model-queue activity, else its own system', () => {
    const outage = ApplicationFailure.retryable('every search provider failed for "solar": 503', 'SearchUnavailable');
    expect(waitedFor(outage, 'the LLM')).toBe('the search providers');
    expect(waitedFor(new Error('connect ECONNREFUSED'), 'the LLM')).toBe('the LLM');
    expect(waitedFor(ApplicationFailure.retryable('429', 'LlmRateLimited'), 'the LLM')).toBe('the LLM');
  });

  it("lists the run's and its steps' waits, and forgets a step's when it ends", () => {
    const w = new Waits();
    const since = Date.UTC(2026, 10, 22, 4, 10, 0);
    const wait = { activity: 'researcherTurn', dependency: 'the LLM', attempt: 9, since, error: 'connection refused' };
    w.record({ key: '3', step: 'a', wait });
    w.record({ key: '3', wait: { ...wait, activity: 'recordRun', dependency: 'PostgreSQL', attempt: 2 } });
    expect(w.lines()).toEqual([
      'Waiting for the LLM (researcherTurn, step a): connection refused; attempt 9 failed, retrying since 04:10:00 UTC',
      'Waiting for PostgreSQL (recordRun): connection refused; attempt 2 failed, retrying since 04:10:00 UTC',
    ]);
    w.clearStep('a');
    expect(w.lines()).toHaveLength(1);
    w.record({ key: '3' });
    expect(w.lines()).toEqual([]);
  });
});
