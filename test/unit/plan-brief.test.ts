// What a plan's reviewer reads beside the steps: the brief with its citations numbered by the
// sources it cites, and each step's description in the plan event.
import { describe, expect, it } from 'vitest';
import { briefView } from '../../src/shared/brief';
import { BRIEF_CHARS, BRIEF_SOURCES } from '../../src/shared/schemas';
import { runEvents } from '../../src/activities/run-events';
import type { RunRecord } from '../../src/activities/store/runs';

const src = (i: number) => ({ sourceId: `S${String(i).padStart(8, '0')}`, title: `Source ${i}`, url: `https://s${i}.example/` });

describe('the plan under review', () => {
  it('numbers the brief by the sources it cites, in the order it first cites them', () => {
    const sources = [src(1), src(2), src(3)];
    const view = briefView('Costs fell [S00000002]. Both agree [S00000001, S00000002]. Unknown [S0000000f].\n\n\n\nEnd.', sources);
    expect(view.text).toBe('Costs fell [1]. Both agree [2][1]. Unknown.\n\nEnd.');
    expect(view.sources).toEqual([
      { n: 1, title: 'Source 2', url: 'https://s2.example/' },
      { n: 2, title: 'Source 1', url: 'https://s1.example/' },
    ]);
  });

  it('keeps the brief and its source list bounded', () => {
    const sources = Array.from({ length: 30 }, (_, i) => src(i + 1));
    const view = briefView(`${sources.map((s) => `Fact [${s.sourceId}].`).join(' ')} ${'x'.repeat(3 * BRIEF_CHARS)}`, sources);
    expect(view.text.length).toBeLessThanOrEqual(BRIEF_CHARS + 2);
    expect(view.text.endsWith(' …')).toBe(true);
    expect(view.sources).toHaveLength(BRIEF_SOURCES);
  });

  it('sends the thought, the brief and each step description with the plan event', () => {
    const brief = { text: 'Costs fell [1].', sources: [{ n: 1, title: 'Source 1', url: 'https://s1.example/' }] };
    const plan = {
      version: 1,
      title: 'Plan',
      thought: 'Figures first.',
      brief,
      steps: [{ id: 'a', title: 'A', description: 'Find A', type: 'research', dependsOn: [], status: 'pending', attempts: 0 }],
    };
    const row = { researchId: 'r', question: 'q', status: 'awaiting_review', phase: 'reviewing', plan, seq: 3 } as unknown as RunRecord;
    const event = runEvents(undefined, { ...row, usage: { promptTokens: 0, completionTokens: 0, costUsd: 0 } } as RunRecord).find(
      (e) => e.type === 'plan',
    );
    expect(event?.data).toEqual({
      version: 1,
      title: 'Plan',
      thought: 'Figures first.',
      brief,
      steps: [{ id: 'a', title: 'A', description: 'Find A', type: 'research', dependsOn: [] }],
    });
  });
});
