// The user's memory in a run: what the user said (question, plan feedback, clarification answers,
// steering guidance) is kept as it arrives, and after a run that ends with a report one learning
// step reads it (small talk answered directly teaches nothing worth a model call, nor does a run
// whose budget is spent).
// Memory is read by the activities themselves, at call time, from the owner the run passes them; a
// run whose request or key turned memory off passes none and learns nothing.
import { plural } from '../../shared/plural';
import { isCancellation } from '@temporalio/workflow';
import { failureMessage } from '../../shared/errors';
import { summarize } from '../../shared/plain';
import type { LearnedInReport } from '../../activities/phases/report';
import type { LearnInput } from '../../activities/roles/user-memory';
import type { Usage } from '../../shared/schemas';
import type { RunState } from './run-state';

/**
 * What the report's activity learns from, for a run whose user has a memory and whose budget is
 * not spent when the report starts: the learning step then runs in the report's activity, after
 * its claim check, and costs no activity task of its own.
 */
export function learnWithReport(run: RunState): LearnInput | undefined {
  const owner = run.memoryOf;
  if (!owner || run.budgetSpent() !== undefined) return undefined;
  return { researchId: run.id, owner, words: run.said.list() };
}

/** After the run's report: what the user said teaches the user's memory. Never fails the run.
 *  `inReport`: what the report's activity learned (learnWithReport); else an activity of its own. */
export async function learnAboutUser(run: RunState, inReport?: LearnedInReport): Promise<void> {
  if (inReport) return 'value' in inReport ? noteLearned(run, inReport.value) : noteNothingLearned(run, inReport.error);
  const owner = run.memoryOf;
  // A run whose budget is spent makes no call beyond its report.
  if (!owner || run.budgetSpent() !== undefined) return;
  try {
    const r = await run.calls.llm.learnAboutUser.executeWithOptions({ summary: 'user memory: learn from what the user said' }, [
      { researchId: run.id, owner, words: run.said.list() },
    ]);
    noteLearned(run, r);
  } catch (err) {
    if (isCancellation(err)) throw err;
    noteNothingLearned(run, failureMessage(err));
  }
}

function noteLearned(run: RunState, r: { learned: number; usage: Usage }): void {
  run.addUsage(r.usage);
  if (r.learned) run.note(`User memory: ${plural(r.learned, 'fact')} about the user learned or confirmed (GET /v1/memory lists them).`);
}

function noteNothingLearned(run: RunState, why: string): void {
  run.note(`Nothing was learned about the user: ${summarize(why, 200)}`);
}
