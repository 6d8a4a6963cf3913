// Phase 6, the research team's scheduler: every step a child workflow, started when the steps it
// depends on were accepted, at most maxConcurrentSteps at once. A step whose dependency failed or
// was skipped is skipped; when the budget is spent, no further step starts.
import { condition } from '@temporalio/workflow';
import type { Plan, StepOutput } from '../../shared/schemas';
import { runStepWithReflection } from './reflection';
import type { RunState } from './run-state';

/** Runs the plan's pending steps; returns the accepted result of each step that completed (with `earlier`'s). */
export async function runTeam(
  run: RunState,
  plan: Plan,
  researchQuestion: string,
  earlier = new Map<string, StepOutput>(),
): Promise<Map<string, StepOutput>> {
  const accepted = new Map(earlier);
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  // Steps the user added while the team ran, with the descriptions the user changed.
  const planStep = (id: string) => run.steering.step(byId.get(id) ?? run.steering.added(id)!);
  let running = 0;
  let changes = 0;
  const tasks: Promise<void>[] = [];
  for (;;) {
    run.board.skipBlocked();
    stopIfBudgetSpent(run);
    for (const s of run.board.steps) {
      if (running >= run.options.maxConcurrentSteps) break;
      if (s.status !== 'pending' || !s.dependsOn.every((d) => accepted.has(d))) continue;
      const id = s.id;
      run.board.start(id, Date.now());
      running++;
      const task = runStepWithReflection(run, planStep(id), researchQuestion, accepted).finally(() => {
        run.board.stopped(id, Date.now());
        running--;
        changes++;
        run.publish();
      });
      // Observed below (Promise.all / allSettled); this handler only keeps a rejection that arrives
      // before then from counting as unhandled, which would fail the workflow task.
      task.catch(() => undefined);
      tasks.push(task);
    }
    run.publish();
    if (running === 0) {
      // Nothing runs and nothing can start: every step is settled (validation rules out cycles).
      run.board.skipPending('skipped: its dependencies never completed');
      break;
    }
    const seen = changes;
    const steered = run.steering.version;
    try {
      await condition(() => changes !== seen || run.steering.version !== steered);
    } catch (err) {
      // Cancelled: the running children are being cancelled with this scope; wait until they
      // have stopped, so that the run never closes while a step still works.
      await Promise.allSettled(tasks);
      throw err;
    }
  }
  await Promise.all(tasks);
  return accepted;
}

function stopIfBudgetSpent(run: RunState): void {
  const spent = run.budgetSpent();
  if (!spent) return;
  run.board.skipPending(`skipped: ${spent}`);
  if (!run.notes.some((n) => n.startsWith('Research stopped early')))
    run.note(`Research stopped early: ${spent}. The report is written from what was found.`);
}
