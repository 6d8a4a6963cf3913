// A reviewer's edits of the plan under review: applied in order, the plan they make held to the
// planner's own checks.
import { describe, expect, it } from 'vitest';
import { applyPlanEdits, describeEdits } from '../../src/shared/plan-edits';
import type { Plan } from '../../src/shared/schemas';
import type { PlanEdit } from '../../src/shared/updates';

const step = (id: string, dependsOn: string[] = []) => ({
  id,
  title: `Step ${id}`,
  description: `Do ${id}`,
  type: 'research' as const,
  needSearch: true,
  dependsOn,
});
const plan: Plan = { title: 'P', thought: 'why', locale: 'en-US', hasEnoughContext: false, steps: [step('a'), step('b', ['a'])] };

describe('applyPlanEdits', () => {
  it('changes, adds and removes steps in order; what depended on a removed step no longer waits for it', () => {
    const edits: PlanEdit[] = [
      { kind: 'setTitle', stepId: 'b', title: 'Compare' },
      { kind: 'setType', stepId: 'b', type: 'processing' },
      { kind: 'add', step: { ...step('c', ['b']), type: 'research', needSearch: true } },
      { kind: 'remove', stepId: 'a' },
    ];
    const r = applyPlanEdits(plan, edits, 4);
    expect('plan' in r && r.plan.steps).toEqual([
      { ...step('b'), title: 'Compare', type: 'processing', needSearch: false },
      step('c', ['b']),
    ]);
    // The plan under review is not changed.
    expect(plan.steps.map((s) => s.id)).toEqual(['a', 'b']);
    expect(describeEdits(edits)).toEqual([
      'step b retitled "Compare"',
      'step b is now a processing step',
      'added step c "Step c"',
      'removed step a',
    ]);
  });

  it('refuses what would not make a plan: an unknown step, a duplicate, a cycle, too many steps, none left', () => {
    const problem = (edits: PlanEdit[], max = 4) => {
      const r = applyPlanEdits(plan, edits, max);
      return 'problem' in r ? r.problem : undefined;
    };
    expect(problem([{ kind: 'setTitle', stepId: 'z', title: 'x' }])).toBe('edits.0: the plan has no step z');
    expect(problem([{ kind: 'add', step: step('a') }])).toBe('edits.0: the plan already has a step a');
    expect(problem([{ kind: 'setDependencies', stepId: 'a', dependsOn: ['b'] }])).toBe('edits: steps: dependsOn forms a cycle');
    expect(problem([{ kind: 'setDependencies', stepId: 'a', dependsOn: ['a'] }])).toBe(
      'edits: steps.a.dependsOn: a step cannot depend on itself',
    );
    expect(problem([{ kind: 'add', step: step('c') }], 2)).toBe('edits: steps: at most 2 steps are allowed, got 3');
    expect(
      problem([
        { kind: 'remove', stepId: 'a' },
        { kind: 'remove', stepId: 'b' },
      ]),
    ).toBe('edits: the plan would have no step left; cancel the run instead');
  });
});
