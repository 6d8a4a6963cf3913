// The researcher child workflow: a ReAct loop written as workflow code (researcher-rounds.ts). Each
// round is one LLM activity that may return tool calls (researcher-turn.ts). The turn runs its
// web_search and crawl calls itself before it returns; the workflow runs the other tools as
// activities (tools.ts) and feeds their results back through the stored conversation, at most
// maxToolRounds rounds. The turn that ends the step compresses the findings into a step result
// citing stable source ids, and has them judged.
import { setHandler } from '@temporalio/workflow';
import type { StepInput, StepOutput } from '../shared/schemas';
import { knowledgeSignal, wrapUpSignal } from './messages';
import { activitiesFor } from './proxies';
import { ResearcherRounds } from './researcher-rounds';
import { watchStepWaits } from './waits';

export async function researcherWorkflow(input: StepInput): Promise<StepOutput> {
  watchStepWaits(input.step.id, input.step.title);
  const rounds = new ResearcherRounds(activitiesFor(input), input);
  // The user asked the run to wrap up: the next turn answers with what the step has.
  setHandler(wrapUpSignal, () => rounds.wrapUp());
  // Collections the user added mid-run: knowledge_search covers them from the next round.
  setHandler(knowledgeSignal, (m) => void (input.knowledge = m.knowledge));
  // Pages the user asked the run to read: read before the first turn, which is shown them.
  await rounds.readUserPages();
  await rounds.run();
  return rounds.output();
}
