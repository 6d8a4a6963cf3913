// The supervisor loop (researchMode 'supervisor'), in place of gap reflection: after the plan's
// steps (wave 1) a supervisor role reads the question, the steps and the findings so far, thinks
// (its reflections are events of the run) and delegates the next wave of steps or ends the
// research. Each wave is run by the research team like the plan's steps (a new plan version on
// the board). Bounded by maxResearchLoops + 1 waves, maxSteps delegated steps in all (at most
// maxConcurrentSteps a wave), the run's budget and a wrap-up; a supervisor that fails ends the
// research, noted.
import { isCancellation } from '@temporalio/workflow';
import { summarize } from '../../shared/plain';
import type { Plan, StepOutput } from '../../shared/schemas';
import { describeFailure, rethrowUnknown } from '../failures';
import type { WrittenReport } from './report';
import type { RunState } from './run-state';
import { runTeam } from './team';

/** The research as it ended (the gap loop's answer may carry the report too; the supervisor's never does). */
type Research = { plan: Plan; accepted: Map<string, StepOutput>; report?: WrittenReport };

export async function supervise(run: RunState, plan: Plan, researchQuestion: string, accepted: Map<string, StepOutput>): Promise<Research> {
  const maxWaves = (run.options.maxResearchLoops ?? 0) + 1;
  let current = plan;
  let results = accepted;
  let delegated = 0;
  for (let wave = 1; ; wave++) {
    const stop = reasonToStop(run, wave, maxWaves, delegated);
    if (stop) {
      if (stop !== 'silent') run.note(`Supervisor: ${stop}; the report is written from what was found.`);
      break;
    }
    current = run.steering.apply(current);
    const decision = await decide(run, current, researchQuestion, results, wave, maxWaves, delegated);
    // The user asked to wrap up while the supervisor was deciding: no new wave starts.
    if (!decision || run.steering.wrappingUp) break;
    run.note(
      `Supervisor after wave ${wave}: delegated ${decision.steps.length === 1 ? 'step' : 'steps'} ${decision.steps.map((s) => s.id).join(', ')}` +
        (decision.repairs.length ? ` (${summarize(decision.repairs.join('; '), 200)})` : '') +
        '.',
    );
    delegated += decision.steps.length;
    current = { ...current, steps: [...current.steps, ...decision.steps] };
    run.board.extend(decision.steps);
    results = await runTeam(run, current, researchQuestion, results);
  }
  return { plan: current, accepted: results };
}

/** Why no further wave may start (the last wave, the step limit, the budget); 'silent' when that needs no note. */
function reasonToStop(run: RunState, wave: number, maxWaves: number, delegated: number): string | undefined {
  // maxResearchLoops 0: the plan's wave is the only one, as no gap loop runs in plan mode.
  if (run.steering.wrappingUp || maxWaves === 1) return 'silent';
  if (wave >= maxWaves) return `the research stopped at its limit of ${maxWaves} waves`;
  if (delegated >= run.options.maxSteps) return `the research stopped at its limit of ${run.options.maxSteps} delegated steps`;
  const spent = run.budgetSpent();
  return spent ? `no further wave: ${spent}` : undefined;
}

/** The supervisor's next wave, or undefined when the research is complete (or it failed: noted). */
async function decide(
  run: RunState,
  plan: Plan,
  researchQuestion: string,
  results: Map<string, StepOutput>,
  wave: number,
  maxWaves: number,
  delegated: number,
) {
  const board = new Map(run.board.steps.map((s) => [s.id, s]));
  try {
    const r = await run.calls.llm.superviseResearch.executeWithOptions({ summary: `supervisor after wave ${wave} of ${maxWaves}` }, [
      {
        researchId: run.id,
        question: researchQuestion,
        wave,
        maxWaves,
        steps: plan.steps.map((s) => ({ ...s, status: board.get(s.id)?.status ?? 'pending', summary: board.get(s.id)?.summary })),
        stepKeys: plan.steps.map((s) => results.get(s.id)?.key).filter((k): k is string => k !== undefined),
        maxNewSteps: Math.min(run.options.maxSteps - delegated, run.options.maxConcurrentSteps),
      },
    ]);
    run.addUsage(r.usage);
    if (r.complete || !r.steps.length) {
      run.note(`Supervisor after wave ${wave}: research complete${r.reason ? ` (${summarize(r.reason, 200)})` : ''}.`);
      return undefined;
    }
    return r;
  } catch (err) {
    if (isCancellation(err)) throw err;
    rethrowUnknown(err);
    run.note(
      `Supervisor after wave ${wave} failed, so the research ends here: ${summarize(describeFailure(err, run.options.maxOutage), 200)}`,
    );
    return undefined;
  }
}
