// `deep-research status` as a person reads it: a cancelled run ended, it did not fail; costs of
// unpriced models are unknown, not $0.0000; counts in words.
import { describe, expect, it } from 'vitest';
import { describeStatus } from '../../src/cli/research';
import type { ResearchView } from '../../src/shared/messages';

const base = { id: 'research-1', question: 'Q?', phase: 'done' } as const;

describe('the status command', () => {
  it('says a cancelled run ended and why, and a failed one failed', () => {
    const cancelled = describeStatus({ ...base, status: 'cancelled', error: 'cancelled by request' } as ResearchView);
    expect(cancelled).toContain('Ended: cancelled by request');
    expect(cancelled).not.toContain('Error');
    expect(describeStatus({ ...base, status: 'failed', error: 'the LLM refused' } as ResearchView)).toContain('Error: the LLM refused');
  });

  it('shows unpriced usage as a cost unknown, and one attempt as one', () => {
    const text = describeStatus({
      ...base,
      status: 'completed',
      usage: { promptTokens: 1_000, completionTokens: 200, costUsd: 0, unpricedTokens: 1_200 },
      plan: { version: 1, title: 'P', steps: [{ id: 'a', type: 'research', status: 'completed', attempts: 1, title: 'Step a' }] },
    } as unknown as ResearchView);
    expect(text).toContain('Usage: 1,200 tokens · cost unknown');
    expect(text).toMatch(/a +research +completed +1 attempt +Step a/);
  });
});
