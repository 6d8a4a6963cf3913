// Gap reflection, after the research team: an LLM step judges whether the findings answer the
// question; with knowledge gaps it adds follow-up steps (a new plan version, in the status and the
// events) and the team runs them, at most `maxResearchLoops` times and within the budget. For a
// one-call report, a reflection that finds nothing missing writes the report in the same activity
// (report.ts reflectThenReport), and the run has its report when this returns.
import type { GapAnswer } from '../../activities/roles/gap-reflection';
import { summarize } from '../../shared/plain';
import type { Plan, StepOutput } from '../../shared/schemas';
import { reflectThenReport, reportsWithReflection, type WrittenReport } from './report';
import type { RunState } from './run-state';
import { runTeam } from './team';

export async function closeGaps(
  run: RunState,
  plan: Plan,
  researchQuestion: string,
  accepted: Map<string, StepOutput>,
): Promise<{ plan: Plan; accepted: Map<string, StepOutput>; report?: WrittenReport }> {
  const loops = run.options.maxResearchLoops ?? 0;
  if (loops === 0 || plan.hasEnoughContext) return { plan, accepted };
  let current = plan;
  let results = accepted;
  for (let loop = 1; loop <= loops && !run.budgetSpent() && !run.steering.wrappingUp; loop++) {
    const gaps = {
      researchId: run.id,
      question: researchQuestion,
      stepKeys: current.steps.map((s) => results.get(s.id)?.key).filter((k): k is string => k !== undefined),
      existingIds: current.steps.map((s) => s.id),
      maxSteps: run.options.maxSteps,
    };
    let r: GapAnswer;
    if (reportsWithReflection(run)) {
      const both = await reflectThenReport(run, current, researchQuestion, results, gaps);
      run.addUsage(both.gaps.usage);
      if (both.report) return { plan: current, accepted: results, report: both.report };
      run.moveTo('researching');
      r = both.gaps;
    } else {
      r = await run.calls.llm.reflectOnGaps.executeWithOptions({ summary: `gap reflection ${loop} of ${loops}` }, [gaps]);
      run.addUsage(r.usage);
      if (r.answered) break;
    }
    run.note(
      `Gap reflection ${loop}: ${r.gaps.length ? summarize(r.gaps.join('; '), 300) : 'the findings leave gaps'}; added ${r.steps.length === 1 ? 'step' : 'steps'} ${r.steps.map((s) => s.id).join(', ')}.`,
    );
    current = { ...current, steps: [...current.steps, ...r.steps] };
    run.board.extend(r.steps);
    results = await runTeam(run, current, researchQuestion, results);
  }
  return { plan: current, accepted: results };
}
