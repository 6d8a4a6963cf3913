// The user's memory in a run: what the user said (question, plan feedback, clarification answers,
// steering guidance) is kept as it arrives, and after a run that ends with a report one learning
// step reads it (small talk answered directly teaches nothing worth a model call, nor does a run
// whose budget is spent).
// Memory is read by the activities themselves, at call time, from the owner the run passes them; a
// run whose request or key turned memory off passes none and learns nothing.
import { isCancellation, workflowInfo } from '@temporalio/workflow';
import { failureMessage } from '../../shared/errors';
import type { EvidenceKind, MemoryOwner, RunUser, UserWords } from '../../shared/memory';
import { summarize } from '../../shared/plain';
import type { LearnedInReport } from '../../activities/roles/citation-check';
import type { LearnInput } from '../../activities/roles/user-memory';
import type { Usage } from '../../shared/schemas';
import type { RunState } from './run-state';

/** The user's own words in this run, in order, each with when it arrived (workflow time). */
export class UserSaid {
  private readonly words: UserWords = [];

  /** `earlier`: what the user said in an earlier execution of the run (see CarriedRun). */
  constructor(question: string, earlier?: UserWords) {
    if (earlier?.length) this.words.push(...earlier.map((w) => ({ ...w })));
    else this.words.push({ kind: 'question', text: question, at: workflowInfo().startTime.toISOString() });
  }

  heard(kind: EvidenceKind, text: string): void {
    if (text.trim()) this.words.push({ kind, text, at: new Date().toISOString() });
  }

  list(): UserWords {
    return this.words.map((w) => ({ ...w }));
  }
}

/** Whose memory the run's prompts hold: its tenant and user, or undefined when memory is off. */
export function memoryOwner(tenant: string, user: RunUser | undefined): MemoryOwner | undefined {
  return user?.memory ? { tenant, userId: user.id } : undefined;
}

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
  if (r.learned) run.note(`User memory: ${r.learned} fact(s) about the user learned or confirmed (GET /v1/memory lists them).`);
}

function noteNothingLearned(run: RunState, why: string): void {
  run.note(`Nothing was learned about the user: ${summarize(why, 200)}`);
}
