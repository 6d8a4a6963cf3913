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
  const team = new StepsUnderWay(run, (id) => runStepWithReflection(run, planStep(id), researchQuestion, accepted));
  for (;;) {
    run.board.skipBlocked();
    stopIfBudgetSpent(run);
    team.startReady(accepted);
    run.publish();
    if (team.running === 0) {
      // Nothing runs and nothing can start: every step is settled (validation rules out cycles).
      run.board.skipPending('skipped: its dependencies never completed');
      break;
    }
    const seen = team.ended;
    const steered = run.steering.version;
    try {
      await condition(() => team.ended !== seen || run.steering.version !== steered);
    } catch (err) {
      // Cancelled: the running children are being cancelled with this scope; wait until they
      // have stopped, so that the run never closes while a step still works.
      await Promise.allSettled(team.tasks);
      throw err;
    }
  }
  await Promise.all(team.tasks);
  return accepted;
}

/** The team's steps under way: how many run, how many have ended, and each one's task. */
class StepsUnderWay {
  private count = 0;
  private endedCount = 0;
  private readonly started: Promise<void>[] = [];

  constructor(
    private readonly run: RunState,
    private readonly runStep: (id: string) => Promise<void>,
  ) {}

  get running(): number {
    return this.count;
  }

  get ended(): number {
    return this.endedCount;
  }

  get tasks(): readonly Promise<void>[] {
    return this.started;
  }

  /** Starts the pending steps whose dependencies were accepted, up to maxConcurrentSteps running. */
  startReady(accepted: Map<string, StepOutput>): void {
    for (const s of this.run.board.steps) {
      if (this.count >= this.run.options.maxConcurrentSteps) break;
      if (s.status !== 'pending' || !s.dependsOn.every((d) => accepted.has(d))) continue;
      this.start(s.id);
    }
  }

  private start(id: string): void {
    const run = this.run;
    run.board.start(id, Date.now());
    this.count++;
    const task = this.runStep(id).finally(() => {
      run.board.stopped(id, Date.now());
      this.count--;
      this.endedCount++;
      run.publish();
    });
    // Observed by runTeam (Promise.all / allSettled); this handler only keeps a rejection that
    // arrives before then from counting as unhandled, which would fail the workflow task.
    task.catch(() => undefined);
    this.started.push(task);
  }
}

function stopIfBudgetSpent(run: RunState): void {
  const spent = run.budgetSpent();
  if (!spent) return;
  run.board.skipPending(`skipped: ${spent}`);
  if (!run.notes.some((n) => n.startsWith('Research stopped early')))
    run.note(`Research stopped early: ${spent}. The report is written from what was found.`);
}
