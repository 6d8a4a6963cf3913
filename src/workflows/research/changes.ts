// After the report of a run a schedule started: what changed since the schedule's previous report
// (new sources, sources no longer found, claims and figures that moved), computed by an activity
// from the stored sources and findings of both runs and put at the top of the report.
import { plural, wasWere } from '../../shared/plural';
import { workflowInfo } from '@temporalio/workflow';
import type { Plan, StepOutput } from '../../shared/schemas';
import { acceptedKeys } from './report';
import type { RunState } from './run-state';

export async function compareWithPrevious(
  run: RunState,
  plan: Plan,
  researchQuestion: string,
  accepted: Map<string, StepOutput>,
): Promise<void> {
  const scheduleId = run.scheduleId;
  if (!scheduleId) return;
  const c = await run.calls.llm.compareWithPrevious.executeWithOptions(
    { summary: 'reporter: what changed since the last scheduled report' },
    [
      {
        researchId: run.id,
        scheduleId,
        startedAt: workflowInfo().runStartTime.toISOString(),
        question: researchQuestion,
        stepKeys: acceptedKeys(plan, accepted),
      },
    ],
  );
  run.addUsage(c.usage);
  // Absent from the results of activities that ran before the summary existed (replays).
  if (c.changes) run.setChanges(c.changes);
  if (!c.previousId) {
    run.note(`First report of schedule ${scheduleId}: the next one will say what changed since.`);
    return;
  }
  run.note(
    `What changed since ${c.since!.slice(0, 10)} (${c.previousId}): ${plural(c.newSources, 'new source')}, ${plural(c.changedClaims, 'changed claim')}` +
      `, ${plural(c.goneSources, 'source')} no longer found` +
      (c.droppedClaims
        ? `; ${plural(c.droppedClaims, 'change')} the model named ${wasWere(c.droppedClaims)} left out: the stored texts do not bear them out.`
        : '.') +
      (c.changes?.claimsCompared === false ? ' Claims and figures were not compared: the model gave no usable comparison.' : ''),
  );
}
