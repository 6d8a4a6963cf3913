// Phase 1, the coordinator: small talk is answered directly and the run ends; otherwise the
// locale is settled and, with maxClarifications > 0, an ambiguous question gets one clarifying
// question per round, answered by the answerClarification signal (or not, by reviewTimeout).
import { condition } from '@temporalio/workflow';
import { durationToMs } from '../../shared/plain';
import type { RunState } from './run-state';

export type Coordination = { kind: 'answer'; answer: string } | { kind: 'research'; topic: string };

export async function coordinate(run: RunState): Promise<Coordination> {
  const opts = run.options;
  const clarifications: string[] = [];
  for (let round = 0; ; round++) {
    const { decision, usage } = await run.calls.llm.classifyRequest.executeWithOptions(
      { summary: 'coordinator: classify the request, detect its locale' },
      [
        {
          researchId: run.id,
          question: run.userQuestion,
          allowClarification: round < opts.maxClarifications,
          clarifications: clarifications.join('\n'),
          ...(opts.locale ? { locale: opts.locale } : {}),
          ...(run.memoryOf ? { memoryOf: run.memoryOf } : {}),
        },
      ],
    );
    run.addUsage(usage);
    run.setLocale(opts.locale ?? decision.locale);
    if (decision.action === 'answer_directly') return { kind: 'answer', answer: decision.directAnswer ?? '' };
    const topic = decision.researchTopic ?? run.userQuestion;
    if (!decision.clarificationQuestion || round >= opts.maxClarifications) return { kind: 'research', topic };
    const answer = await askClarification(run, decision.clarificationQuestion);
    if (answer !== undefined) run.said.heard('clarification', answer);
    clarifications.push(`Q: ${decision.clarificationQuestion}\nA: ${answer ?? '(no answer; proceed with your best interpretation)'}`);
  }
}

/** Waits for the user's answer, at most reviewTimeout; undefined when none came. */
async function askClarification(run: RunState, clarifyingQuestion: string): Promise<string | undefined> {
  run.inbox.ask(clarifyingQuestion);
  run.moveTo('coordinating', 'awaiting_review');
  const answered = await condition(() => run.inbox.clarificationAnswer !== undefined, durationToMs(run.options.reviewTimeout));
  const answer = answered ? run.inbox.clarificationAnswer : undefined;
  run.inbox.closeQuestion();
  run.moveTo('coordinating');
  return answer;
}
