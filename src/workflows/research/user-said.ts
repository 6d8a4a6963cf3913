// The user's own words in a run (the question, answers, feedback, guidance), which the user-memory
// step learns from (user-memory.ts), and whose memory the run reads.
import { workflowInfo } from '@temporalio/workflow';
import type { EvidenceKind, MemoryOwner, RunUser, UserWords } from '../../shared/memory';

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
