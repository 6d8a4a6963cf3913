// A plan's own checks and the reviewer's direct edits of it, without zod (the workflow checks a
// revision with them in its update validator; schemas.ts re-exports planProblems for the rest).
// An edit names a step and changes one thing of it, removes it, or adds one; edits apply in order,
// and the plan they make must pass the same checks as a planner's.
import type { Plan, PlanStep } from './schemas';
import type { PlanEdit } from './updates';

/** Checks the schema cannot express: step count, unique ids, known and acyclic dependencies. */
export function planProblems(plan: Plan, maxSteps: number): string[] {
  const problems: string[] = [];
  if (!plan.hasEnoughContext && plan.steps.length === 0) problems.push('steps: a plan without enough context needs at least one step');
  if (plan.steps.length > maxSteps) problems.push(`steps: at most ${maxSteps} steps are allowed, got ${plan.steps.length}`);
  const ids = new Set<string>();
  for (const s of plan.steps) {
    if (ids.has(s.id)) problems.push(`steps: duplicate step id "${s.id}"`);
    ids.add(s.id);
  }
  for (const s of plan.steps) {
    for (const d of s.dependsOn) {
      if (d === s.id) problems.push(`steps.${s.id}.dependsOn: a step cannot depend on itself`);
      else if (!ids.has(d)) problems.push(`steps.${s.id}.dependsOn: unknown step id "${d}"`);
    }
  }
  // Kahn's algorithm: whatever cannot be ordered is in a cycle.
  const indeg = new Map(plan.steps.map((s) => [s.id, s.dependsOn.filter((d) => ids.has(d) && d !== s.id).length]));
  const queue = [...indeg].filter(([, n]) => n === 0).map(([id]) => id);
  let ordered = 0;
  while (queue.length) {
    const id = queue.shift()!;
    ordered++;
    for (const s of plan.steps) {
      if (s.dependsOn.includes(id)) {
        const n = indeg.get(s.id)! - 1;
        indeg.set(s.id, n);
        if (n === 0) queue.push(s.id);
      }
    }
  }
  if (ordered < plan.steps.length && problems.length === 0) problems.push('steps: dependsOn forms a cycle');
  return problems;
}

/** The plan the edits make, or why they cannot be made (the first problem, naming the edit). */
export function applyPlanEdits(plan: Plan, edits: readonly PlanEdit[], maxSteps: number): { plan: Plan } | { problem: string } {
  let steps: PlanStep[] = plan.steps.map((s) => ({ ...s, dependsOn: [...s.dependsOn] }));
  for (const [i, e] of edits.entries()) {
    const at = `edits.${i}`;
    if (e.kind === 'add') {
      if (steps.some((s) => s.id === e.step.id)) return { problem: `${at}: the plan already has a step ${e.step.id}` };
      steps.push({ ...e.step, dependsOn: [...e.step.dependsOn] });
      continue;
    }
    const step = steps.find((s) => s.id === e.stepId);
    if (!step) return { problem: `${at}: the plan has no step ${e.stepId}` };
    switch (e.kind) {
      case 'remove':
        steps = steps.filter((s) => s !== step);
        // What depended on it no longer waits for it.
        for (const s of steps) s.dependsOn = s.dependsOn.filter((d) => d !== e.stepId);
        break;
      case 'setTitle':
        step.title = e.title;
        break;
      case 'setDescription':
        step.description = e.description;
        break;
      case 'setType':
        step.type = e.type;
        step.needSearch = e.type === 'research';
        break;
      case 'setDependencies':
        step.dependsOn = [...new Set(e.dependsOn)];
        break;
    }
  }
  // A plan the reviewer edits is researched: it has steps to run.
  const edited: Plan = { ...plan, hasEnoughContext: false, steps };
  const problems = planProblems(edited, maxSteps);
  if (!steps.length) return { problem: 'edits: the plan would have no step left; cancel the run instead' };
  return problems.length ? { problem: `edits: ${problems.join('; ')}` } : { plan: edited };
}

/** The edits in a line each, for the run's notes and the planner when feedback comes with them. */
export function describeEdits(edits: readonly PlanEdit[]): string[] {
  return edits.map((e) => {
    switch (e.kind) {
      case 'add':
        return `added step ${e.step.id} "${e.step.title}"`;
      case 'remove':
        return `removed step ${e.stepId}`;
      case 'setTitle':
        return `step ${e.stepId} retitled "${e.title}"`;
      case 'setDescription':
        return `step ${e.stepId} now: "${e.description}"`;
      case 'setType':
        return `step ${e.stepId} is now a ${e.type} step`;
      case 'setDependencies':
        return `step ${e.stepId} depends on ${e.dependsOn.length ? e.dependsOn.join(', ') : 'nothing'}`;
    }
  });
}
